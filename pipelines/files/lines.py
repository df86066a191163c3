"""Split byte streams into numbered, decoded lines, in bounded memory.

Python's own line iteration buffers a whole line however long it is, and
``str.splitlines`` also breaks at U+2028, form feeds and lone carriage
returns, which shifts one side of a Moses pair against the other. Here a
line ends at the file's terminator only (``\\n``; ``\\r`` in CR-only files),
a CR before the LF is removed, and no more than ``max_bytes`` of a line is
ever held: the rest of an over-long line is read and thrown away, and the
line is rejected with its head kept as evidence.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, NamedTuple

from paramine.pipelines.files.opening import DECOMPRESSION_ERRORS

#: Reasons of a line where the stream breaks off: nothing after it can be read.
STREAM_DAMAGE = frozenset({"truncated_input", "corrupt_input"})
#: Bytes read from the stream at a time.
BLOCK_BYTES = 1 << 20
BOM = b"\xef\xbb\xbf"


class RawLine(NamedTuple):
    """One line's bytes (without its terminator) and where it starts.

    A named tuple, as ``Line``: one of each is made for every line read, and
    a frozen dataclass costs three times as much to make.
    """

    offset: int
    data: bytes
    too_long: bool = False
    error: str = ""


def raw_lines(
    stream: IO[bytes],
    terminator: bytes,
    max_bytes: int,
    offset: int = 0,
    end: int | None = None,
) -> Iterator[RawLine]:
    """Yield the lines of a stream with the offsets where they start.

    Args:
        stream: Bytes, positioned at ``offset``, at the start of a line.
        terminator: The line end, ``b"\\n"`` or ``b"\\r"``.
        max_bytes: Most bytes of one line kept; a longer line comes back
            cut to this, with ``too_long`` set.
        offset: Offset of the stream's position in the file.
        end: Stop before the first line that starts at or after this offset.

    A stream that breaks off (a truncated or corrupt compressed file) ends
    with one ``RawLine`` whose ``error`` says why, holding the bytes of the
    unfinished line.
    """
    step = len(terminator)
    # read1 hands over what one decompression step gives: a truncated gzip
    # then still yields every line before the damage (read(n) raises first).
    read = getattr(stream, "read1", stream.read)
    head = bytearray()  # the current line's bytes, at most max_bytes + 1
    line_start = offset
    block_start = offset
    while True:
        if end is not None and line_start >= end:
            return
        try:
            block = read(BLOCK_BYTES)
        except DECOMPRESSION_ERRORS as error:
            yield RawLine(line_start, bytes(head[:max_bytes]), error=describe_damage(error))
            return
        if not block:
            break
        i = 0
        while True:
            j = block.find(terminator, i)
            if j < 0:
                if len(head) <= max_bytes:
                    head += block[i : i + max_bytes + 1 - len(head)]
                break
            if len(head) <= max_bytes:
                head += block[i : min(j, i + max_bytes + 1 - len(head))]
            if end is not None and line_start >= end:
                return
            too_long = len(head) > max_bytes
            yield RawLine(line_start, bytes(head[:max_bytes]), too_long)
            head.clear()
            i = j + step
            line_start = block_start + i
        block_start += len(block)
    if head and (end is None or line_start < end):
        # The last line has no terminator.
        yield RawLine(line_start, bytes(head[:max_bytes]), len(head) > max_bytes)


def describe_damage(error: BaseException) -> str:
    """The rejection reason of a stream that broke off: truncated, or damaged."""
    if isinstance(error, EOFError):
        return "truncated_input"
    return "corrupt_input"


class Line(NamedTuple):
    """A decoded line, or the reason it could not be used.

    Attributes:
        number: 1-based line number in the file.
        text: The decoded text (best effort where ``reason`` is set).
        reason: Why the line is rejected; empty when it is usable.
        repair: What was repaired to keep the line, e.g. ``invalid_utf8_replaced``.
    """

    number: int
    text: str
    reason: str = ""
    repair: str = ""


def decode_line(raw: bytes, number: int, invalid_utf8: str, max_chars: int) -> Line:
    """Decode one line's bytes under the reader's policies."""
    if b"\x00" in raw:
        # NUL never occurs in text: a binary file, or UTF-16 read as UTF-8.
        text = raw.replace(b"\x00", b"\\0").decode("utf-8", errors="replace")
        return Line(number, text, "nul_byte")
    try:
        text = raw.decode("utf-8")
        repair = ""
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        if invalid_utf8 == "reject":
            return Line(number, text, "invalid_utf8")
        repair = "invalid_utf8_replaced"
    if len(text) > max_chars:
        return Line(number, text[:max_chars], "line_too_long")
    if "\r" in text:
        # A lone CR inside a line is whitespace, not a line end (see the module doc).
        text = text.replace("\r", " ")
    return Line(number, text, "", repair)


def decoded_lines(
    stream: IO[bytes],
    terminator: bytes,
    invalid_utf8: str,
    max_chars: int,
    offset: int = 0,
    end: int | None = None,
    first_line: int = 1,
) -> Iterator[Line]:
    """Yield the decoded lines of a stream, numbered from ``first_line``.

    A UTF-8 byte order mark at the start of the file is removed; CR before
    LF is removed. Rejected lines carry a reason: ``line_too_long``,
    ``nul_byte``, ``invalid_utf8`` (under the ``reject`` policy), or
    ``truncated_input`` / ``corrupt_input`` for a stream that breaks off.
    """
    # Up to 4 bytes per character, so no line within max_chars is cut.
    max_bytes = 4 * max_chars + 4
    number = first_line - 1
    for raw in raw_lines(stream, terminator, max_bytes, offset, end):
        number += 1
        data = raw.data
        if raw.offset == 0 and data.startswith(BOM):
            data = data[len(BOM) :]
        if terminator == b"\n" and data.endswith(b"\r"):
            data = data[:-1]
        if raw.error:
            text = data.decode("utf-8", errors="replace")
            yield Line(number, text, raw.error)
        elif raw.too_long:
            text = data[: 4 * max_chars].decode("utf-8", errors="replace")[:max_chars]
            yield Line(number, text, "line_too_long")
        else:
            yield decode_line(data, number, invalid_utf8, max_chars)
