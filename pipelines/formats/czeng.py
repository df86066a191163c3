"""CzEng 2.0: six tab-separated columns, Czech in the fifth, English in the sixth.

The layout is documented on the corpus page, https://ufal.mff.cuni.cz/czeng/czeng20
("File Format"), and in the README of each LINDAT release (for example the
synthetic part, http://hdl.handle.net/11234/1-4774)::

    1. ID            unique per sentence pair; the last segment, starting
                     with "s", numbers sentences within a document
    2. adq_score     dual conditional cross-entropy score, in [0, 1]
    3. cs_lang_score p(lang=Czech)/p(lang=x), fastText
    4. en_lang_score p(lang=English)/p(lang=x)
    5. Czech sentence
    6. English sentence

Documents are separated by empty lines. Those are structure, not records:
they are skipped and not counted as pairs read. The three scores are read
filters (``--min-adequacy``, ``--min-language-score``; formats/scores.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from paramine.pipelines.core.text import canonical_lang
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
from paramine.pipelines.formats.scores import czeng_score_reason
from paramine.schemas.errors import UsageError

CZENG_COLUMNS = 6
CZECH_COLUMN = 4  # 0-based: the fifth column
ENGLISH_COLUMN = 5


class CzEngFormat:
    """CzEng 2.0's six-column TSV; the run's languages must be Czech and English."""

    name = "czeng"
    splittable = True

    def read(self, shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
        """Yield the pairs and rejections of a CzEng shard (or of its span)."""
        langs = (canonical_lang(shard.pivot_lang), canonical_lang(shard.lang))
        if langs == ("en", "cs"):
            pivot_col, candidate_col = ENGLISH_COLUMN, CZECH_COLUMN
        elif langs == ("cs", "en"):
            pivot_col, candidate_col = CZECH_COLUMN, ENGLISH_COLUMN
        else:
            raise UsageError(
                f"{shard.url}: CzEng is Czech-English, but the run reads "
                f"{shard.pivot_lang}-{shard.lang}; pass --src-lang en --tgt-lang cs "
                "(or the reverse)"
            )
        with shard_lines(shard.url, options, shard.span) as lines:
            for line in lines:
                if line.reason:
                    yield reject(shard, line.number, line.text, line.reason)
                    continue
                if not line.text.strip():
                    continue  # a document separator, not a record
                columns = line.text.split("\t")
                if len(columns) != CZENG_COLUMNS:
                    yield reject(shard, line.number, line.text, "column_count")
                    continue
                adequacy, cs_language, en_language = columns[1:4]
                reason = czeng_score_reason(
                    adequacy,
                    cs_language,
                    en_language,
                    options.min_adequacy,
                    options.min_language_score,
                )
                if reason:
                    yield reject(shard, line.number, line.text, reason)
                    continue
                pair = aligned(shard, line.number, columns[pivot_col], columns[candidate_col])
                yield from line_results(shard, line, pair)


register_format(CzEngFormat())
