"""The reader interface, its options, and line reading shared by line formats."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Protocol

import fsspec

from schemas.records import AlignedPair, Rejected

ReadResult = AlignedPair | Rejected

INVALID_UTF8_POLICIES = ("replace", "reject")
LENGTH_MISMATCH_POLICIES = ("error", "reject_tail")


@dataclass(frozen=True)
class ReaderOptions:
    """How readers treat imperfect input.

    Attributes:
        invalid_utf8: ``replace`` decodes with U+FFFD and keeps the record
            (counted as repaired); ``reject`` sends it to the rejects output.
        max_line_chars: Lines longer than this are rejected as ``line_too_long``.
        on_length_mismatch: For Moses pairs of different length: ``error``
            stops the run naming both files; ``reject_tail`` keeps the common
            part and rejects the longer file's tail.
    """

    invalid_utf8: str = "replace"
    max_line_chars: int = 20_000
    on_length_mismatch: str = "error"

    def __post_init__(self) -> None:
        if self.invalid_utf8 not in INVALID_UTF8_POLICIES:
            raise ValueError(
                f"invalid_utf8={self.invalid_utf8!r}; allowed: {', '.join(INVALID_UTF8_POLICIES)}"
            )
        if self.on_length_mismatch not in LENGTH_MISMATCH_POLICIES:
            raise ValueError(
                f"on_length_mismatch={self.on_length_mismatch!r}; allowed: "
                f"{', '.join(LENGTH_MISMATCH_POLICIES)}"
            )
        if self.max_line_chars < 1:
            raise ValueError(f"max_line_chars must be positive, got {self.max_line_chars}")


@dataclass(frozen=True)
class Shard:
    """One unit of input: a file (or file pair) of one format.

    Attributes:
        format: Name of a registered format, e.g. ``moses`` or ``tsv``.
        url: The file, any fsspec URL. For Moses pairs: the pivot-side file.
        corpus: Corpus name recorded in every pair.
        pivot_lang: Language of the pivot (source) side.
        lang: Language of the candidate (target) side.
        companion: Moses pairs: the candidate-side file.
        swap: The file's first column is the candidate side, not the pivot.
    """

    format: str
    url: str
    corpus: str
    pivot_lang: str
    lang: str
    companion: str = ""
    swap: bool = False

    @property
    def files(self) -> tuple[str, ...]:
        """Every file this shard reads."""
        return (self.url, self.companion) if self.companion else (self.url,)


class BitextFormat(Protocol):
    """A reader of one format."""

    name: str

    def read(self, shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
        """Yield every record of the shard, as a pair or a rejection."""
        ...


FORMATS: dict[str, BitextFormat] = {}


def register_format(fmt: BitextFormat) -> BitextFormat:
    """Add a format to the registry under its name."""
    FORMATS[fmt.name] = fmt
    return fmt


def read_shard(shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
    """Read a shard with the reader its format names."""
    try:
        fmt = FORMATS[shard.format]
    except KeyError:
        raise ValueError(
            f"{shard.url}: unknown format {shard.format!r}; known: {', '.join(sorted(FORMATS))}"
        ) from None
    return fmt.read(shard, options)


def open_binary(url: str) -> IO[bytes]:
    """Open a file for reading, decompressing by its extension."""
    return fsspec.open(url, "rb", compression="infer").open()


@dataclass(frozen=True)
class Line:
    """A decoded line, or the reason it could not be decoded."""

    number: int
    text: str
    reason: str = ""


def iter_lines(stream: IO[bytes], options: ReaderOptions) -> Iterator[Line]:
    """Yield the lines of a byte stream, numbered from 1, line ends removed.

    A line is rejected (``reason`` set, ``text`` a best-effort decoding) when
    it is longer than ``options.max_line_chars`` or, under the ``reject``
    policy, not valid UTF-8. A UTF-8 byte order mark on the first line is
    removed.
    """
    for number, raw in enumerate(stream, start=1):
        raw = raw.rstrip(b"\r\n")
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
            reason = ""
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            reason = "invalid_utf8" if options.invalid_utf8 == "reject" else ""
        if not reason and len(text) > options.max_line_chars:
            reason = "line_too_long"
        yield Line(number, text, reason)


def aligned(shard: Shard, number: int, first: str, second: str) -> AlignedPair:
    """Build the AlignedPair of a record whose columns are (first, second).

    The columns are (pivot, candidate) unless the shard says they are swapped.
    """
    pivot, candidate = (second, first) if shard.swap else (first, second)
    return AlignedPair(
        pivot=pivot,
        candidate=candidate,
        pivot_lang=shard.pivot_lang,
        lang=shard.lang,
        corpus=shard.corpus,
        shard=shard.url,
        line=number,
    )


def reject(shard: Shard, number: int, record: str, reason: str) -> Rejected:
    """Build the rejection of a record of a shard."""
    return Rejected(record=record, reason=reason, shard=shard.url, line=number)
