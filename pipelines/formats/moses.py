"""Moses pairs: two line-aligned files, one sentence per line on each side."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import zip_longest

from pipelines.formats.base import (
    Line,
    ReaderOptions,
    ReadResult,
    Shard,
    aligned,
    iter_lines,
    open_binary,
    register_format,
    reject,
)


class MisalignedShardError(ValueError):
    """The two files of a Moses pair have different numbers of lines."""


class MosesFormat:
    """Two files read in lockstep: line i of one translates line i of the other."""

    name = "moses"

    def read(self, shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
        """Yield the pairs and rejections of a Moses pair."""
        if not shard.companion:
            raise ValueError(f"{shard.url}: a Moses shard needs its companion file")
        with open_binary(shard.url) as first, open_binary(shard.companion) as second:
            lines = zip_longest(iter_lines(first, options), iter_lines(second, options))
            for pivot, candidate in lines:
                if pivot is None or candidate is None:
                    # One file ended: the rest of the other is an unaligned tail.
                    yield from self._tail(shard, options, pivot, candidate, lines)
                    return
                if pivot.reason or candidate.reason:
                    record = f"{pivot.text}\t{candidate.text}"
                    yield reject(shard, pivot.number, record, pivot.reason or candidate.reason)
                else:
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
        assert first_extra is not None  # zip_longest never yields (None, None)
        common = first_extra.number - 1
        if options.on_length_mismatch == "error":
            total = common + 1 + sum(1 for _ in lines)
            raise MisalignedShardError(
                f"Moses files differ in length: {longer} has {total} lines but {shorter} has "
                f"{common}. Fix the alignment, or pass --on-length-mismatch reject_tail to keep "
                f"the first {common} pairs and reject the rest"
            )
        yield reject(shard, first_extra.number, first_extra.text, "unaligned_tail")
        for rest in lines:
            line = rest[0] or rest[1]
            assert line is not None
            yield reject(shard, line.number, line.text, "unaligned_tail")


register_format(MosesFormat())
