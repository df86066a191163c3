"""Moses pairs: two line-aligned files, one sentence per line on each side."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import zip_longest

from paramine.pipelines.files.lines import STREAM_DAMAGE, Line
from paramine.pipelines.formats.base import (
    ReaderOptions,
    ReadResult,
    Repair,
    Shard,
    aligned,
    register_format,
    reject,
    shard_lines,
)
from paramine.schemas.errors import InputError
from paramine.schemas.records import Rejected


class MisalignedShardError(InputError):
    """The two files of a Moses pair have different numbers of lines."""


def misaligned(longer: str, longer_n: int, shorter: str, shorter_n: int) -> MisalignedShardError:
    """The error for a Moses pair whose files differ in length."""
    return MisalignedShardError(
        f"Moses files differ in length: {longer} has {longer_n} lines but {shorter} has "
        f"{shorter_n}. Fix the alignment, or pass --on-length-mismatch reject_tail to keep "
        f"the first {shorter_n} pairs and reject the rest"
    )


class MosesFormat:
    """Two files read in lockstep: line i of one translates line i of the other.

    Splittable: the splitter finds the byte offsets of the same line numbers
    in both files, so each span reads both files' ranges in lockstep.
    """

    name = "moses"
    splittable = True

    def read(self, shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
        """Yield the pairs and rejections of a Moses pair (or of its span)."""
        if not shard.companion:
            raise InputError(
                f"{shard.url}: a Moses shard needs its companion file; give both files "
                "(or their common prefix)"
            )
        span = shard.span
        if span is not None and span.tail:
            # The longer file's unaligned tail, past the end of the shorter one.
            is_companion = span.tail == shard.companion
            with shard_lines(span.tail, options, span, companion=is_companion) as rest:
                for line in rest:
                    yield reject(shard, line.number, line.text, "unaligned_tail")
            return
        with (
            shard_lines(shard.url, options, span) as first,
            shard_lines(shard.companion, options, span, companion=True) as second,
        ):
            lines = zip_longest(first, second)
            for pivot, candidate in lines:
                if pivot is None or candidate is None:
                    # One file ended: the rest of the other is an unaligned tail.
                    yield from self._tail(shard, options, pivot, candidate, lines)
                    return
                broken = _broken_side(shard, pivot, candidate)
                if broken is not None:
                    # One side broke off: the other side's lines from here on
                    # have lost their partners, so this is the file's damage,
                    # not a length mismatch. One rejection stands for it.
                    yield broken
                    return
                if pivot.reason or candidate.reason:
                    record = f"{pivot.text}\t{candidate.text}"
                    yield reject(shard, pivot.number, record, pivot.reason or candidate.reason)
                    continue
                for repaired in (pivot, candidate):
                    if repaired.repair:
                        yield Repair(repaired.repair, shard.url, pivot.number)
                yield aligned(shard, pivot.number, pivot.text, candidate.text)

    @staticmethod
    def _tail(
        shard: Shard,
        options: ReaderOptions,
        pivot: Line | None,
        candidate: Line | None,
        lines: Iterator[tuple[Line | None, Line | None]],
    ) -> Iterator[ReadResult]:
        longer, shorter = (shard.url, shard.companion) if pivot else (shard.companion, shard.url)
        first_extra = pivot or candidate
        if first_extra is None:  # zip_longest never yields (None, None)
            return
        common = first_extra.number - 1
        if options.on_length_mismatch == "error":
            total = common + 1 + sum(1 for _ in lines)
            raise misaligned(longer, total, shorter, common)
        yield reject(shard, first_extra.number, first_extra.text, "unaligned_tail")
        for rest in lines:
            line = rest[0] or rest[1]
            if line is not None:
                yield reject(shard, line.number, line.text, "unaligned_tail")


def _broken_side(shard: Shard, pivot: Line, candidate: Line) -> Rejected | None:
    """The rejection of a pair where one file's stream breaks off, or ``None``."""
    for line, url, other in (
        (pivot, shard.url, shard.companion),
        (candidate, shard.companion, shard.url),
    ):
        if line.reason in STREAM_DAMAGE:
            detail = line.text if line.text.startswith(url) else f"{url}: the file breaks off"
            record = (
                f"{detail} ({line.reason} at line {line.number}); the pairs before it are "
                f"kept, the rest of {other} has no partner"
            )
            return reject(shard, line.number, record, line.reason)
    return None


register_format(MosesFormat())
