"""The reader interface, its options, and line reading shared by line formats."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from paramine.pipelines.files.lines import Line, decoded_lines
from paramine.pipelines.files.opening import CorruptInputError, open_input
from paramine.pipelines.formats.scores import DEFAULT_MIN_ADEQUACY, DEFAULT_MIN_LANGUAGE_SCORE
from paramine.schemas.errors import InputError, UsageError
from paramine.schemas.options import (
    option,
    parse_fields,
    parse_non_negative,
    parse_positive,
    parse_unit_interval,
)
from paramine.schemas.records import AlignedPair, Rejected

#: The readers' policies for bad input; the config's flags offer these values.
INVALID_UTF8_POLICIES = ("replace", "reject")
LENGTH_MISMATCH_POLICIES = ("error", "reject_tail")
XCES_LINK_POLICIES = ("one_to_one", "join")
MALFORMED_XML_POLICIES = ("error", "reject")
DEFAULT_SPLIT_BYTES = 64 * 1024 * 1024
#: Reject rows written per (reason, shard); every reject is counted.
DEFAULT_MAX_REJECTS_PER_REASON = 1000


@dataclass(frozen=True)
class Repair:
    """A note that a kept record was repaired, e.g. ``invalid_utf8_replaced``.

    Readers yield it just before the pair it concerns; ReadBitext counts it
    (repairs are not drops: the pair is kept).
    """

    reason: str
    shard: str
    line: int


ReadResult = AlignedPair | Rejected | Repair
T = TypeVar("T")


def parse_tsv_columns(value: Any) -> tuple[int, int]:
    """Two different 1-based column numbers, ``PIVOT,CANDIDATE`` (text or a pair)."""
    parts = value.split(",") if isinstance(value, str) else value
    try:
        pivot, candidate = (int(part) for part in parts)
    except (TypeError, ValueError):
        raise ValueError(f"{value!r}: give two column numbers, pivot first, e.g. 3,4") from None
    if min(pivot, candidate) < 1 or pivot == candidate:
        raise ValueError(f"{value!r}: columns are numbered from 1 and must differ")
    return pivot, candidate


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
        xces_links: ``one_to_one`` keeps only 1-1 XCES links and rejects
            many-to-one links; ``join`` joins the sentences of an n-m link.
        on_malformed_xml: ``error`` stops the run naming file and line;
            ``reject`` keeps what was read before the damage and rejects the
            rest of the file as one record.
        tsv_columns: 1-based (pivot, candidate) columns of plain TSV; ``None``
            for the 2-column or Tatoeba 4-column layout.
        split_bytes: Uncompressed line-format files larger than this are
            read as several byte ranges in parallel; 0 never splits.
        max_rejects_per_reason: Reject rows written to ``rejects/`` per
            (reason, shard): the first ones by line; the rest are counted,
            not written. 0 writes every reject. A million blank lines need
            one million counts, not one million rows.
        min_adequacy: CzEng: reject a pair whose adequacy score is under
            this as ``low_adequacy``; 0 keeps every pair (formats/scores.py).
        min_language_score: CzEng: reject a pair with a language score
            under this as ``low_language_score``; 0 keeps every pair.
        score_column: Plain TSV with ``tsv_columns``: the 1-based column
            of a score that ``min_score`` applies to.
        score_property: TMX: the ``<prop type>`` of a unit's score.
        min_score: Reject a record whose score (``score_column`` or
            ``score_property``) is under this as ``low_score``.
    """

    invalid_utf8: str = option(
        "replace",
        "replace undecodable bytes with U+FFFD and keep the record, or reject it "
        "(default: %(default)s)",
        group=None,
        choices=INVALID_UTF8_POLICIES,
    )
    max_line_chars: int = option(
        20_000, "reject longer lines (default: %(default)s)", group=None, parse=parse_positive
    )
    on_length_mismatch: str = option(
        "error",
        "Moses files of different length: stop with an error, or keep the common part and "
        "reject the tail (default: %(default)s)",
        group=None,
        choices=LENGTH_MISMATCH_POLICIES,
    )
    xces_links: str = option(
        "one_to_one",
        "XCES links with several sentences on a side: reject them (one_to_one), or join "
        "each side's sentences (join) (default: %(default)s)",
        group=None,
        choices=XCES_LINK_POLICIES,
    )
    on_malformed_xml: str = option(
        "error",
        "TMX/XCES that is not well-formed (or declares entities): stop with an error naming "
        "file and line, or keep what came before and reject the rest of the file as one "
        "record (default: %(default)s)",
        group=None,
        choices=MALFORMED_XML_POLICIES,
    )
    tsv_columns: tuple[int, int] | None = option(
        None,
        "plain TSV: the 1-based pivot and candidate columns, e.g. 3,4 (default: 2 columns, "
        "or Tatoeba's 4 with languages)",
        group=None,
        parse=parse_tsv_columns,
    )
    split_bytes: int = DEFAULT_SPLIT_BYTES
    max_rejects_per_reason: int = option(
        DEFAULT_MAX_REJECTS_PER_REASON,
        "rejects/ keeps the first this many rows (by line) of each reason in each shard; every "
        "reject is counted in the manifest all the same; 0 keeps them all (default: %(default)s)",
        group=None,
        parse=parse_non_negative,
    )
    min_adequacy: float = option(
        DEFAULT_MIN_ADEQUACY,
        "CzEng: reject a pair whose adequacy score (column 2) is under this as low_adequacy; "
        "0 keeps all (docs/filters.md, 'Corpus scores') (default: %(default)s)",
        group=None,
        parse=parse_unit_interval,
    )
    min_language_score: float = option(
        DEFAULT_MIN_LANGUAGE_SCORE,
        "CzEng: reject a pair whose Czech or English language score (columns 3, 4) is under "
        "this as low_language_score; 0 keeps all (default: %(default)s)",
        group=None,
        parse=parse_unit_interval,
    )
    score_column: int | None = option(
        None,
        "plain TSV with --tsv-columns: the 1-based column of each line's score, which "
        "--min-score applies to (default: none)",
        group=None,
        parse=parse_positive,
    )
    score_property: str | None = option(
        None,
        "TMX: the <prop type=...> of each unit's score, which --min-score applies to "
        "(default: none)",
        group=None,
    )
    min_score: float | None = option(
        None,
        "reject a record whose own score (--score-column, --score-property) is under this "
        "as low_score (default: none)",
        group=None,
        parse=float,
    )

    def __post_init__(self) -> None:
        parse_fields(self)  # the declared options, with the words their flags' errors use
        self._check_scores()
        if self.split_bytes < 0:
            raise UsageError(
                f"split_bytes must be 0 (never split) or positive, not {self.split_bytes}"
            )

    def _check_scores(self) -> None:
        has_score = self.score_column is not None or self.score_property is not None
        if has_score != (self.min_score is not None):
            raise UsageError(
                "a record's own score filters with both where to find it (--score-column for "
                "TSV, --score-property for TMX) and --min-score"
            )
        if self.score_column is not None:
            if self.tsv_columns is None:
                raise UsageError(
                    "--score-column needs --tsv-columns: say which columns hold the pivot "
                    "and the candidate, e.g. --tsv-columns 1,2 --score-column 3"
                )
            if self.score_column < 1 or self.score_column in self.tsv_columns:
                raise UsageError(
                    f"--score-column {self.score_column} must be a 1-based column other than "
                    f"the sentences' {self.tsv_columns}"
                )


@dataclass(frozen=True)
class Span:
    """A part of a shard: lines ``first_line`` on, in byte ranges of each file.

    Attributes:
        first_line: Number of the span's first line in the file.
        start: Offset of the first line in the shard's file.
        end: Offset where the next span begins (``-1``: end of file).
        companion_start: Moses pairs: offset of the first line in the companion.
        companion_end: Moses pairs: where the companion's next span begins.
        tail: Moses pairs whose files differ in length: this span is the
            longer file's unaligned tail, in the file named by ``tail``.
    """

    first_line: int
    start: int
    end: int
    companion_start: int = 0
    companion_end: int = -1
    tail: str = ""


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
        span: The part of the file(s) to read; ``None`` for all of it.
        note: Why resolution could not use the file (format ``unpaired``).
    """

    format: str
    url: str
    corpus: str
    pivot_lang: str
    lang: str
    companion: str = ""
    swap: bool = False
    span: Span | None = None
    note: str = ""

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


def selectable_formats() -> list[str]:
    """The formats a user may name with ``--format`` (besides ``auto``), sorted."""
    return sorted(name for name, fmt in FORMATS.items() if getattr(fmt, "selectable", True))


def read_shard(shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
    """Read a shard with the reader its format names.

    Raises:
        InputError: A file of the shard vanished or cannot be read (it was
            there at resolution): the message names it.
    """
    try:
        fmt = FORMATS[shard.format]
    except KeyError:
        raise UsageError(
            f"{shard.url}: unknown format {shard.format!r}; known: "
            f"{', '.join(selectable_formats())}"
        ) from None
    return naming_shard(shard, fmt.read(shard, options))


def naming_shard(shard: Shard, results: Iterator[T]) -> Iterator[T]:
    """Pass results through, turning a file that cannot be opened into an InputError.

    Raised in a worker, a bare FileNotFoundError would reach the user as a
    Beam traceback that does not say which shard was being read.
    """
    try:
        yield from results
    except (FileNotFoundError, PermissionError, IsADirectoryError) as error:
        raise InputError(
            f"{shard.url}: cannot read {error.filename or shard.url}: {error.strerror}; "
            "check that the file exists and is readable, then run again"
        ) from error


@contextmanager
def shard_lines(
    url: str,
    options: ReaderOptions,
    span: Span | None = None,
    companion: bool = False,
) -> Iterator[Iterator[Line]]:
    """Open a line-format file and give its decoded lines, or those of one span.

    Args:
        url: The file, any fsspec URL, compressed or not.
        options: The reader's policies.
        span: The byte range to read (uncompressed files only).
        companion: Read the span's companion range, not the main one.
    """
    with ExitStack() as stack:
        try:
            opened = stack.enter_context(open_input(url))
        except CorruptInputError as error:
            # Nothing of the file can be read: one rejection stands for all of it.
            yield iter([Line(span.first_line if span else 1, str(error), "corrupt_input")])
            return
        if opened.error:
            yield iter([Line(1, opened.error, "truncated_input")])
            return
        start, end, first_line = 0, None, 1
        if span is not None:
            start = span.companion_start if companion else span.start
            stop = span.companion_end if companion else span.end
            end = None if stop < 0 else stop
            first_line = span.first_line
            if start:
                opened.stream.seek(start)
        yield decoded_lines(
            opened.stream,
            opened.terminator,
            options.invalid_utf8,
            options.max_line_chars,
            offset=start,
            end=end,
            first_line=first_line,
        )


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


def line_results(shard: Shard, line: Line, pair: AlignedPair) -> tuple[ReadResult, ...]:
    """A kept pair, preceded by the note of its line's repair if any.

    A tuple, not a generator: readers call it once per line.
    """
    if line.repair:
        return Repair(line.repair, shard.url, line.number), pair
    return (pair,)
