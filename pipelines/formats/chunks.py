"""Split one big shard into spans that workers read in parallel.

A 40 GB CzEng file, or a Moses pair of 60 million lines, must not be read
by one worker while the others wait. The splitter scans an uncompressed
line-format file once, counting line ends in 1 MiB blocks (bytes.count runs
in C at memory speed), and cuts it about every ``split_bytes`` at a line
start, so each span knows its first line number: locators stay exact.

A Moses pair is cut at the same line numbers in both files. Scanning both
also counts their lines before any pair is read, so files of different
length are found here, with both counts in the error.

Compressed files cannot be entered in the middle: they are one span.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import fsspec
from paramine.pipelines.files.opening import HEAD_BYTES, sniff_compression, sniff_terminator
from paramine.pipelines.formats.base import FORMATS, ReaderOptions, Shard, Span, naming_shard
from paramine.pipelines.formats.moses import misaligned

BLOCK_BYTES = 1 << 20


def _scan(
    url: str, terminator: bytes, every_bytes: int = 0, at_lines: list[int] | None = None
) -> tuple[list[tuple[int, int]], int, int]:
    """Find line starts in a file, and count its lines.

    Args:
        url: An uncompressed file.
        terminator: Its line end.
        every_bytes: Cut about every this many bytes, at the next line start.
        at_lines: Or: the line numbers whose start offsets are wanted.

    Returns:
        ``(line_number, offset)`` of each cut, the file's number of lines
        and its size.
    """
    cuts: list[tuple[int, int]] = []
    targets = iter(sorted(at_lines or []))
    target = next(targets, None)
    next_cut = every_bytes
    lines = 0  # complete lines before block_start
    block_start = 0
    last = b""
    with fsspec.open(url, "rb", compression=None) as f:
        while block := f.read(BLOCK_BYTES):
            block_end = block_start + len(block)
            in_block = block.count(terminator)
            # Cuts by size: the first line start at or after next_cut.
            while every_bytes and next_cut < block_end:
                j = block.find(terminator, max(next_cut - block_start, 0))
                if j < 0:
                    break
                start = block_start + j + len(terminator)
                number = lines + block.count(terminator, 0, j + len(terminator)) + 1
                cuts.append((number, start))
                next_cut = start + every_bytes
            # Cuts at given lines: line n starts after the (n-1)th terminator.
            while target is not None and target - 1 <= lines + in_block:
                need = target - 1 - lines
                j = -len(terminator)
                for _ in range(need):
                    j = block.find(terminator, j + len(terminator))
                cuts.append((target, block_start + j + len(terminator)))
                target = next(targets, None)
            lines += in_block
            last = block[-len(terminator) :]
            block_start = block_end
    size = block_start
    if size and last != terminator:
        lines += 1  # the last line has no terminator
    # A cut at the very end starts no line: drop it.
    cuts = [(n, offset) for n, offset in cuts if offset < size and n <= lines]
    return cuts, lines, size


def _terminator(url: str) -> tuple[str, bytes]:
    with fsspec.open(url, "rb", compression=None) as f:
        head = f.read(HEAD_BYTES)
    return sniff_compression(head), sniff_terminator(head)


def split_shard(shard: Shard, options: ReaderOptions) -> Iterator[Shard]:
    """Yield the spans of a shard, or the shard itself where it cannot be split.

    Raises:
        MisalignedShardError: A Moses pair's files differ in length and the
            policy is ``error``.
        InputError: A file of the shard cannot be opened.
    """
    return naming_shard(shard, _spans(shard, options))


def _spans(shard: Shard, options: ReaderOptions) -> Iterator[Shard]:
    fmt = FORMATS.get(shard.format)
    if not getattr(fmt, "splittable", False) or options.split_bytes == 0 or shard.span:
        yield shard
        return
    if any("::" in url for url in shard.files):
        # A member of a zip (or another chained filesystem) seeks by
        # decompressing from its start: spans would each re-read the file.
        yield shard
        return
    compression, terminator = _terminator(shard.url)
    if compression:
        yield shard
        return
    if not shard.companion:
        cuts, _, _ = _scan(shard.url, terminator, every_bytes=options.split_bytes)
        if not cuts:
            yield shard
            return
        starts = [(1, 0), *cuts]
        for (first, start), (_, end) in zip(starts, [*cuts, (0, -1)], strict=True):
            yield replace(shard, span=Span(first, start, end))
        return
    yield from _split_pair(shard, options, terminator)


def _split_pair(shard: Shard, options: ReaderOptions, terminator: bytes) -> Iterator[Shard]:
    other_compression, other_terminator = _terminator(shard.companion)
    if other_compression:
        yield shard
        return
    cuts, lines, _ = _scan(shard.url, terminator, every_bytes=options.split_bytes)
    numbers = [n for n, _ in cuts]
    other_cuts, other_lines, _ = _scan(shard.companion, other_terminator, at_lines=numbers)
    if lines == other_lines:
        yield from _pair_spans(shard, cuts, other_cuts)
        return
    longer, shorter = (
        (shard.url, shard.companion) if lines > other_lines else (shard.companion, shard.url)
    )
    common = min(lines, other_lines)
    if options.on_length_mismatch == "error":
        raise misaligned(longer, max(lines, other_lines), shorter, common)
    # Cut both files at the first unaligned line too: the span from there on
    # is the longer file's tail, whose lines are all rejected.
    tail_line = common + 1
    numbers = sorted({n for n in numbers if n < tail_line} | {tail_line} - {1})
    yield from _pair_spans(
        shard,
        _offsets(shard.url, terminator, numbers),
        _offsets(shard.companion, other_terminator, numbers),
        tail_file=longer,
        tail_line=tail_line,
    )


def _offsets(url: str, terminator: bytes, numbers: list[int]) -> list[tuple[int, int]]:
    """Start offsets of the given lines; the file's size for a line past its end."""
    cuts, _, size = _scan(url, terminator, at_lines=numbers)
    found = dict(cuts)
    return [(n, found.get(n, size)) for n in numbers]


def _pair_spans(
    shard: Shard,
    cuts: list[tuple[int, int]],
    other_cuts: list[tuple[int, int]],
    tail_file: str = "",
    tail_line: int = 0,
) -> Iterator[Shard]:
    firsts = [(1, 0, 0)] + [(n, a, b) for (n, a), (_, b) in zip(cuts, other_cuts, strict=True)]
    ends = [(a, b) for _, a, b in firsts[1:]] + [(-1, -1)]
    for (first, start, other_start), (end, other_end) in zip(firsts, ends, strict=True):
        tail = tail_file if tail_file and first == tail_line else ""
        yield replace(shard, span=Span(first, start, end, other_start, other_end, tail=tail))
