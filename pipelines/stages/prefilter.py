"""Prefilter: normalize pairs and drop those not worth encoding.

pairs | "Batch" | "NormalizeAndFilter" | "FirstOfDuplicates"  -> entries
                                                           | "AsPairs" -> records (if asked)

Every aligned pair of the input passes here, so its cost per pair is much of
a run's: at a million subtitle pairs this stage took half of the run's time
before it worked as it does now (docs/results.md). So:

- pairs come in batches, and the language check, the one costly rule,
  judges the new lines of a batch in one pass (``LanguageCheck.passes_many``);
- a worker remembers the verdicts of the pairs it saw last: subtitles repeat
  "Yes." / "Tak." tens of thousands of times, and a repeat costs a lookup;
- the duplicate search keys a pair by its texts and keeps the rest of its
  record as one short string (``core.origins``, shards named by number): the
  runner holds one such entry per distinct pair until the search is done;
- the pairs it keeps go on as entries (``Prefiltered``) to the stages that
  read them all again, which make records of the pairs they keep; records
  of them all, with a coder of their own (``core.coders``), only where the
  caller asks (``--write-scored``, ``paramine refresh``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, KeepFirst
from paramine.pipelines.core.coders import register_coders
from paramine.pipelines.core.groups import pivot_language
from paramine.pipelines.core.junk import REASONS, Limits, first_failure
from paramine.pipelines.core.language_id import LanguageCheck
from paramine.pipelines.core.origins import DedupKey, Origins
from paramine.pipelines.core.text import comparison_key, normalize, sentence_count, word_count
from paramine.pipelines.formats import Shard
from paramine.schemas.records import AlignedPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage

PREFILTER = Stage(
    "Prefilter",
    ALIGNED_PAIR,
    (
        "empty",
        "untranslated",
        "too_short",
        "too_long",
        "length_ratio",
        "sentence_count_mismatch",
        *REASONS,
        "wrong_language_pivot",
        "wrong_language_candidate",
        "duplicate_pair",
    ),
    "normalize text; drop pairs not worth encoding, junk, lines not in their declared "
    "language, and exact duplicates",
)


@dataclass(frozen=True)
class PrefilterOptions:
    """Limits of the prefilter; lengths count words by NLTK's tokenizer.

    Attributes:
        min_words: Fewest words on either side.
        max_words: Most words on either side.
        max_length_ratio: Largest (longer + 1) / (shorter + 1) word-count
            ratio; the +1 keeps one-word sentences from tripping it.
        sentence_count_filter: Drop pairs whose sides punkt splits into
            different numbers of sentences (misalignments often do).
        junk_rules: The heuristic rules applied (``core.junk.RULES``).
        limits: Their thresholds.
        language_ratio: The declared-language check's ratio
            (``core.language_id``); ``None``: no check.
    """

    min_words: int = 1
    max_words: int = 80
    max_length_ratio: float = 2.5
    sentence_count_filter: bool = False
    junk_rules: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    language_ratio: float | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.min_words <= self.max_words:
            raise ValueError(
                f"need 0 <= min_words <= max_words, got {self.min_words} and {self.max_words}"
            )
        if self.max_length_ratio < 1:
            raise ValueError(f"max_length_ratio must be >= 1, got {self.max_length_ratio}")


def prefilter_reason(
    pair: AlignedPair, options: PrefilterOptions, languages: LanguageCheck | None = None
) -> str:
    """Return why a normalized pair is dropped, or ``""`` to keep it.

    The cheap checks come first; the language check (about 10 CPU-us a line
    not seen before, in batches) only for a pair that passed every other.
    """
    reason = rule_reason(pair, options)
    if reason or languages is None:
        return reason
    if not languages.passes(pair.candidate, pair.lang):
        return "wrong_language_candidate"
    if not languages.passes(pair.pivot, pair.pivot_lang):
        return "wrong_language_pivot"
    return ""


def rule_reason(pair: AlignedPair, options: PrefilterOptions) -> str:
    """``prefilter_reason`` without the language check."""
    return text_rule_reason(pair.pivot, pair.candidate, pair.pivot_lang, pair.lang, options)


def text_rule_reason(
    pivot: str, candidate: str, pivot_lang: str, lang: str, options: PrefilterOptions
) -> str:
    """``rule_reason`` of a pair given by its normalized texts and languages."""
    if not pivot or not candidate:
        return "empty"
    if comparison_key(pivot) == comparison_key(candidate):
        return "untranslated"
    shorter, longer = sorted((word_count(pivot, pivot_lang), word_count(candidate, lang)))
    if shorter < options.min_words:
        return "too_short"
    if longer > options.max_words:
        return "too_long"
    if (longer + 1) / (shorter + 1) > options.max_length_ratio:
        return "length_ratio"
    if options.sentence_count_filter and sentence_count(pivot, pivot_lang) != sentence_count(
        candidate, lang
    ):
        return "sentence_count_mismatch"
    if options.junk_rules:
        reason = first_failure(
            options.junk_rules, pivot, candidate, pivot_lang, lang, options.limits
        )
        if reason:
            return reason
    return ""


#: Pairs normalized and checked together: the language check judges the
#: new lines of a batch in one pass.
BATCH_SIZE = 1024
#: Pairs whose verdicts a worker remembers (some 15 MB); then it forgets them
#: all, and the frequent ones come back first.
MEMO_SIZE = 1 << 16

#: A pair's verdict: its drop reason, or its normalized pivot and candidate
#: and the pivot's language part, the kept pair's key but for its language.
Verdict = str | tuple[str, str, str]


class _FilterFn(beam.DoFn):
    """A batch of pairs in; the kept ones out as duplicate-search entries, the drops summed."""

    def __init__(self, options: PrefilterOptions, origins: Origins) -> None:
        self.options = options
        self.origins = origins
        self.drop = Dropper(PREFILTER)
        self.languages: LanguageCheck | None = None
        self._memo: dict[tuple[str, str, str, str], Verdict] = {}

    def setup(self) -> None:
        self._memo = {}
        if self.options.language_ratio is not None:
            # One detector per worker, its answers cached per distinct line.
            self.languages = LanguageCheck((), self.options.language_ratio)

    def process(self, batch: list[AlignedPair]) -> Iterator:
        drops: dict[str, int] = {}
        value = self.origins.value
        for pair, verdict in zip(batch, self._verdicts(batch), strict=True):
            if isinstance(verdict, str):
                drops[verdict] = drops.get(verdict, 0) + 1
            else:
                pivot, candidate, pivot_lang = verdict
                key: DedupKey = (pivot, candidate, pair.lang, pivot_lang)
                yield key, value(pair.shard, pair.line, pair.pivot_lang, pair.corpus)
        for reason, n in drops.items():
            yield self.drop(reason, n)

    def _verdicts(self, batch: list[AlignedPair]) -> list[Verdict]:
        """Each pair's verdict: remembered, or judged with the batch's other new pairs."""
        memo = self._memo
        keys = [(p.pivot, p.candidate, p.pivot_lang, p.lang) for p in batch]
        found = [memo.get(key) for key in keys]
        new = {key: pair for key, pair, f in zip(keys, batch, found, strict=True) if f is None}
        if not new:
            return found  # type: ignore[return-value]
        judged = dict(zip(new, self._judge(list(new.values())), strict=True))
        if len(memo) + len(judged) > MEMO_SIZE:
            memo.clear()
        memo.update(judged)
        return [judged[key] if f is None else f for key, f in zip(keys, found, strict=True)]

    def _judge(self, pairs: list[AlignedPair]) -> list[Verdict]:
        """The verdicts of pairs not seen lately: normalize, the rules, then the language check."""
        # Texts, not records: the rules read only texts and languages, and a
        # record per pair would cost its construction for nothing.
        pivots = [normalize(p.pivot) for p in pairs]
        candidates = [normalize(p.candidate) for p in pairs]
        options = self.options
        reasons = [
            text_rule_reason(pivot, candidate, p.pivot_lang, p.lang, options)
            for pivot, candidate, p in zip(pivots, candidates, pairs, strict=True)
        ]
        languages = self.languages
        if languages is not None:
            checked = [i for i, reason in enumerate(reasons) if not reason]
            candidate_ok = languages.passes_many([(candidates[i], pairs[i].lang) for i in checked])
            # The pivots of pairs whose candidate passed, as one batch too.
            passed = [i for i, ok in zip(checked, candidate_ok, strict=True) if ok]
            pivot_ok = dict(
                zip(
                    passed,
                    languages.passes_many([(pivots[i], pairs[i].pivot_lang) for i in passed]),
                    strict=True,
                )
            )
            for i, candidate_passes in zip(checked, candidate_ok, strict=True):
                if not candidate_passes:
                    reasons[i] = "wrong_language_candidate"
                elif not pivot_ok[i]:
                    reasons[i] = "wrong_language_pivot"
        return [
            reason or (pivot, candidate, pivot_language(p.pivot_lang))
            for reason, pivot, candidate, p in zip(reasons, pivots, candidates, pairs, strict=True)
        ]


class Prefiltered(NamedTuple):
    """The prefilter's kept pairs, as entries and (where asked for) as records, and its drops.

    ``entries`` are the kept pairs as the duplicate search keeps them
    (``core.origins``), read with ``Prefilter.origins``: the stages that
    read every prefiltered pair take these (``GroupByPivot``,
    ``RivalPairs``, ``CalibrationSample``) and make records only of the
    pairs they keep. ``kept`` holds the same pairs as records, made for
    every pair, or ``None`` where the prefilter was not asked for them.
    """

    kept: beam.PCollection | None
    dropped: beam.PCollection
    entries: beam.PCollection


class Prefilter(beam.PTransform):
    """Normalizes text, drops bad pairs by reason, then exact duplicate pairs.

    Args:
        options: The limits and rules.
        shards: The shards the pairs are read from, when known as the graph
            is built: the duplicate search then names them by number
            (``Origins``). The pairs kept are the same either way.
        records: Make a record of every kept pair (``Prefiltered.kept``);
            ``paramine mine`` asks only with ``--write-scored``, which scores
            them all: at a million subtitle pairs, 437,701 records that
            nothing else reads took 1.2-1.8 s.
    """

    def __init__(
        self,
        options: PrefilterOptions | None = None,
        shards: Sequence[Shard] = (),
        records: bool = True,
    ) -> None:
        super().__init__()
        self.options = options or PrefilterOptions()
        self.origins = Origins((s.url for s in shards), (s.corpus for s in shards))
        self.records = records

    def expand(self, pairs: beam.PCollection) -> Prefiltered:
        filtered = (
            pairs
            | "Batch" >> beam.BatchElements(min_batch_size=BATCH_SIZE, max_batch_size=BATCH_SIZE)
            | "NormalizeAndFilter"
            >> beam.ParDo(_FilterFn(self.options, self.origins)).with_outputs(DROPPED, main="kept")
        )
        # The first occurrence in the input (shard, line) stands for all.
        deduped = filtered["kept"] | "FirstOfDuplicates" >> KeepFirst(
            PREFILTER, "duplicate_pair", keep_key=True
        )
        register_coders()
        kept = None
        if self.records:
            kept = deduped.kept | "AsPairs" >> beam.MapTuple(self.origins.pair).with_output_types(
                AlignedPair
            )
        dropped = (filtered[DROPPED], deduped.dropped) | "AllDropped" >> beam.Flatten()
        return Prefiltered(kept, dropped, deduped.kept)
