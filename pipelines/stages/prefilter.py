"""Prefilter: normalize pairs and drop those not worth encoding.

pairs | "Batch" | "NormalizeAndFilter" | "FirstOfDuplicates"  -> entries
                                                           | "AsPairs" -> records (if asked)

Every aligned pair of the input passes here, so its cost per pair is much of
a run's: at a million subtitle pairs this stage took half of the run's time
before it worked as it does now (docs/results.md). So:

- pairs come in batches, and the language check, the one costly rule,
  judges the new lines of a batch in one pass (``LanguageDetector.passes_many``);
- a worker remembers the verdicts of the pairs it saw last: subtitles repeat
  "Yes." / "Tak." tens of thousands of times, and a repeat costs a lookup;
- the duplicate search keys a pair by its texts and keeps the rest of its
  record as one short string (``core.origins``, shards named by number): the
  runner holds one such entry per distinct pair until the search is done;
- the pairs it keeps go on as entries (``Prefiltered``) to the stages that
  read them all again, which make records of the pairs they keep; records
  of them all, with a coder of their own (``core.coders``), only where the
  caller asks (``--write-scored``, ``paramine refresh``).

A line that a check cannot judge (a language the detector does not know, a
language of no known script, one with no punkt model under the sentence
count) is kept, and counted: ``<check>_unchecked.<language>`` on the
``unchecked`` output, which the manifest holds as ``counts.unchecked``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, UNCHECKED, Dropper, KeepFirst, NoteTally
from paramine.pipelines.core.coders import register_coders
from paramine.pipelines.core.detectors import (
    DEFAULT_DETECTOR,
    LanguageDetector,
    language_detector,
)
from paramine.pipelines.core.groups import pivot_language
from paramine.pipelines.core.junk import REASONS, Limits, first_failure
from paramine.pipelines.core.language_id import detector_label
from paramine.pipelines.core.origins import DedupKey, Origins
from paramine.pipelines.core.scripts import expected_scripts, length
from paramine.pipelines.core.text import (
    canonical_lang,
    comparison_key,
    normalize,
    sentence_count,
    sentence_count_supported,
)
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
    """Limits of the prefilter; lengths in words, as ``core.scripts.length`` counts them.

    Attributes:
        min_words: Fewest words on either side.
        max_words: Most words on either side.
        max_length_ratio: Largest (longer + 1) / (shorter + 1) length
            ratio; the +1 keeps one-word sentences from tripping it.
        sentence_count_filter: Drop pairs whose sides punkt splits into
            different numbers of sentences (misalignments often do).
        junk_rules: The heuristic rules applied (``core.junk.RULES``).
        limits: Their thresholds.
        language_ratio: The declared-language check's ratio
            (``core.language_id``); ``None``: no check.
        language_id: The detector of the language check (``--language-id``).
    """

    min_words: int = 1
    max_words: int = 80
    max_length_ratio: float = 2.5
    sentence_count_filter: bool = False
    junk_rules: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    language_ratio: float | None = None
    language_id: str = DEFAULT_DETECTOR

    def __post_init__(self) -> None:
        if not 0 <= self.min_words <= self.max_words:
            raise ValueError(
                f"need 0 <= min_words <= max_words, got {self.min_words} and {self.max_words}"
            )
        if self.max_length_ratio < 1:
            raise ValueError(f"max_length_ratio must be >= 1, got {self.max_length_ratio}")


def prefilter_reason(
    pair: AlignedPair, options: PrefilterOptions, languages: LanguageDetector | None = None
) -> str:
    """Return why a normalized pair is dropped, or ``""`` to keep it.

    The cheap checks come first; the language check (about 10 CPU-us a line
    not seen before, in batches) only for a pair that passed every other.
    """
    reason = rule_reason(pair, options)
    if reason or languages is None:
        return reason
    candidate, pivot = languages.passes_many(
        [(pair.candidate, pair.lang), (pair.pivot, pair.pivot_lang)]
    )
    if candidate is False:
        return "wrong_language_candidate"
    if pivot is False:
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
    shorter, longer = sorted((length(pivot), length(candidate)))
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


def unchecked_keys(
    options: PrefilterOptions, languages: LanguageDetector | None, lang: str
) -> tuple[str, ...]:
    """The checks that cannot judge a line declared ``lang``: ``<check>_unchecked.<language>``."""
    code = canonical_lang(lang).partition("-")[0]
    keys = []
    if languages is not None and not languages.supported(lang):
        keys.append(f"language_unchecked.{detector_label(lang)}")
    if "script" in options.junk_rules and expected_scripts(lang) is None:
        keys.append(f"script_unchecked.{code}")
    if options.sentence_count_filter and not sentence_count_supported(lang):
        keys.append(f"sentence_count_unchecked.{code}")
    return tuple(keys)


class _FilterFn(beam.DoFn):
    """A batch of pairs in; the kept ones out as duplicate-search entries, the drops summed.

    A kept pair's lines that a check could not judge are counted on the
    ``unchecked`` output, per check and language.
    """

    def __init__(self, options: PrefilterOptions, origins: Origins) -> None:
        self.options = options
        self.origins = origins
        self.drop = Dropper(PREFILTER)
        self.languages: LanguageDetector | None = None
        self.unchecked = NoteTally(UNCHECKED)
        self._memo: dict[tuple[str, str, str, str], Verdict] = {}
        self._unchecked_of: dict[tuple[str, str], tuple[str, ...]] = {}

    def setup(self) -> None:
        self._memo = {}
        self._unchecked_of = {}
        if self.options.language_ratio is not None:
            # One detector per worker, its answers cached per distinct line.
            self.languages = language_detector(
                self.options.language_id, self.options.language_ratio
            )

    def process(self, batch: list[AlignedPair]) -> Iterator:
        drops: dict[str, int] = {}
        value = self.origins.value
        for pair, verdict in zip(batch, self._verdicts(batch), strict=True):
            if isinstance(verdict, str):
                drops[verdict] = drops.get(verdict, 0) + 1
            else:
                pivot, candidate, pivot_lang = verdict
                key: DedupKey = (pivot, candidate, pair.lang, pivot_lang)
                for note in self._unchecked(pair.pivot_lang, pair.lang):
                    self.unchecked.add(note)
                yield key, value(pair.shard, pair.line, pair.pivot_lang, pair.corpus)
        for reason, n in drops.items():
            yield self.drop(reason, n)

    def finish_bundle(self) -> Iterator:
        yield from self.unchecked.flush(UNCHECKED)

    def _unchecked(self, pivot_lang: str, lang: str) -> tuple[str, ...]:
        """What no check judged of a kept pair, by its two languages (remembered per pair)."""
        found = self._unchecked_of.get((pivot_lang, lang))
        if found is None:
            options, languages = self.options, self.languages
            found = (
                *unchecked_keys(options, languages, pivot_lang),
                *unchecked_keys(options, languages, lang),
            )
            self._unchecked_of[pivot_lang, lang] = found
        return found

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
            # The pivots of pairs whose candidate passed, as one batch too;
            # None is a line the detector could not judge (counted, kept).
            passed = [i for i, ok in zip(checked, candidate_ok, strict=True) if ok is not False]
            pivot_ok = dict(
                zip(
                    passed,
                    languages.passes_many([(pivots[i], pairs[i].pivot_lang) for i in passed]),
                    strict=True,
                )
            )
            for i, candidate_passes in zip(checked, candidate_ok, strict=True):
                if candidate_passes is False:
                    reasons[i] = "wrong_language_candidate"
                elif pivot_ok[i] is False:
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
    #: ``(unchecked, key, n)`` count rows: kept lines a check could not judge.
    unchecked: beam.PCollection


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
            >> beam.ParDo(_FilterFn(self.options, self.origins)).with_outputs(
                DROPPED, UNCHECKED, main="kept"
            )
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
        return Prefiltered(kept, dropped, deduped.kept, filtered[UNCHECKED])
