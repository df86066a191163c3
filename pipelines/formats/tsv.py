"""Tab-separated bitext: 2 columns, Tatoeba's 4 (srclang, trglang, src, trg), or chosen columns."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from paramine.pipelines.core.text import canonical_lang
from paramine.pipelines.files.lines import Line
from paramine.pipelines.formats.base import (
    ReaderOptions,
    ReadResult,
    Shard,
    aligned,
    line_results,
    register_format,
    reject,
    shard_lines,
)
from paramine.pipelines.formats.pivot_languages import pivot_languages, several
from paramine.pipelines.formats.scores import score_reason


def _chosen_columns(
    shard: Shard, line: Line, columns: list[str], chosen: tuple[int, int], options: ReaderOptions
) -> Iterator[ReadResult]:
    """A line read by ``--tsv-columns``, its ``--score-column`` checked first."""
    score_column = options.score_column
    if len(columns) < max(*chosen, score_column or 0):
        yield reject(shard, line.number, line.text, "column_count")
        return
    if score_column is not None:
        reason = score_reason(columns[score_column - 1], options.min_score or 0.0, "score")
        if reason:
            yield reject(shard, line.number, line.text, reason)
            return
    pair = aligned(shard, line.number, *(columns[c - 1] for c in chosen))
    yield from line_results(shard, line, pair)


class TsvFormat:
    """Plain TSV: 2 columns (pivot, candidate), the Tatoeba 4-column layout, or chosen columns.

    In the 4-column layout each line names its languages, so a file may hold
    either direction: lines in the other direction are swapped, and lines in
    languages other than the run's are rejected as ``language_mismatch``.
    With ``ReaderOptions.tsv_columns`` the two named columns are read from
    every line, and a line with fewer columns is rejected as ``column_count``;
    ``score_column`` names a score column that ``min_score`` applies to
    (formats/scores.py).

    A shard of a run with several pivot languages (its ``pivot_lang`` is
    ``auto`` or a list) takes each line's pivot language from its language
    columns; a line without them (2 columns) is rejected as ``column_count``.
    """

    name = "tsv"
    #: Lines are independent: a big file may be read as several byte ranges.
    splittable = True

    def read(self, shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
        """Yield the pairs and rejections of a TSV shard (or of its span)."""
        if several(shard.pivot_lang):
            yield from self._read_several(shard, options)
            return
        wanted = (canonical_lang(shard.pivot_lang), canonical_lang(shard.lang))
        chosen = options.tsv_columns
        # The shard as read in each direction of the 4-column layout, made once.
        straight, swapped = replace(shard, swap=False), replace(shard, swap=True)
        with shard_lines(shard.url, options, shard.span) as lines:
            for line in lines:
                if line.reason:
                    yield reject(shard, line.number, line.text, line.reason)
                    continue
                if not line.text.strip():
                    yield reject(shard, line.number, line.text, "blank_line")
                    continue
                columns = line.text.split("\t")
                if chosen is not None:
                    yield from _chosen_columns(shard, line, columns, chosen, options)
                elif len(columns) == 2:
                    yield from line_results(shard, line, aligned(shard, line.number, *columns))
                elif len(columns) == 4:
                    langs = (canonical_lang(columns[0]), canonical_lang(columns[1]))
                    if langs == wanted:
                        pair = aligned(straight, line.number, *columns[2:])
                        yield from line_results(shard, line, pair)
                    elif langs == wanted[::-1]:
                        pair = aligned(swapped, line.number, *columns[2:])
                        yield from line_results(shard, line, pair)
                    else:
                        yield reject(shard, line.number, line.text, "language_mismatch")
                else:
                    yield reject(shard, line.number, line.text, "column_count")

    def _read_several(self, shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
        """Tatoeba's 4 columns, each line's pivot language the column that is not the target."""
        allowed = pivot_languages(shard.pivot_lang)  # None: any language
        target = canonical_lang(shard.lang)
        with shard_lines(shard.url, options, shard.span) as lines:
            for line in lines:
                if line.reason:
                    yield reject(shard, line.number, line.text, line.reason)
                    continue
                if not line.text.strip():
                    yield reject(shard, line.number, line.text, "blank_line")
                    continue
                columns = line.text.split("\t")
                if len(columns) != 4:
                    # Only the 4 columns say the line's languages.
                    yield reject(shard, line.number, line.text, "column_count")
                    continue
                first, second = canonical_lang(columns[0]), canonical_lang(columns[1])
                swap = second != target
                pivot_lang = second if swap else first
                if (
                    target not in (first, second)
                    or pivot_lang == target
                    or (allowed is not None and pivot_lang not in allowed)
                ):
                    yield reject(shard, line.number, line.text, "language_mismatch")
                    continue
                read_as = replace(shard, swap=swap, pivot_lang=pivot_lang)
                yield from line_results(shard, line, aligned(read_as, line.number, *columns[2:]))


register_format(TsvFormat())
