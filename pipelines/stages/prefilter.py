"""Prefilter: normalize pairs and drop those not worth encoding."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, KeepFirst, StageResult
from paramine.pipelines.core.groups import pivot_language
from paramine.pipelines.core.junk import REASONS, Limits, first_failure
from paramine.pipelines.core.language_id import LanguageCheck
from paramine.pipelines.core.text import comparison_key, normalize, sentence_count, word_count
from paramine.schemas.records import AlignedPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage

PREFILTER = Stage(
    "prefilter",
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

    The cheap checks come first; the language check (about 40 CPU-us a line
    not seen before) only for a pair that passed every other.
    """
    if not pair.pivot or not pair.candidate:
        return "empty"
    if comparison_key(pair.pivot) == comparison_key(pair.candidate):
        return "untranslated"
    pivot_words = word_count(pair.pivot, pair.pivot_lang)
    candidate_words = word_count(pair.candidate, pair.lang)
    shorter, longer = sorted((pivot_words, candidate_words))
    if shorter < options.min_words:
        return "too_short"
    if longer > options.max_words:
        return "too_long"
    if (longer + 1) / (shorter + 1) > options.max_length_ratio:
        return "length_ratio"
    if options.sentence_count_filter and sentence_count(
        pair.pivot, pair.pivot_lang
    ) != sentence_count(pair.candidate, pair.lang):
        return "sentence_count_mismatch"
    if options.junk_rules:
        reason = first_failure(
            options.junk_rules,
            pair.pivot,
            pair.candidate,
            pair.pivot_lang,
            pair.lang,
            options.limits,
        )
        if reason:
            return reason
    if languages is not None:
        if not languages.passes(pair.candidate, pair.lang):
            return "wrong_language_candidate"
        if not languages.passes(pair.pivot, pair.pivot_lang):
            return "wrong_language_pivot"
    return ""


class _FilterFn(beam.DoFn):
    def __init__(self, options: PrefilterOptions) -> None:
        self.options = options
        self.drop = Dropper(PREFILTER)
        self.languages: LanguageCheck | None = None

    def setup(self) -> None:
        if self.options.language_ratio is not None:
            # One detector per worker, its answers cached per distinct line.
            self.languages = LanguageCheck((), self.options.language_ratio)

    def process(self, pair: AlignedPair) -> Iterator:
        pair = replace(pair, pivot=normalize(pair.pivot), candidate=normalize(pair.candidate))
        reason = prefilter_reason(pair, self.options, self.languages)
        if reason:
            yield self.drop(reason)
        else:
            yield pair


class Prefilter(beam.PTransform):
    """Normalizes text, drops bad pairs by reason, then exact duplicate pairs."""

    def __init__(self, options: PrefilterOptions | None = None) -> None:
        super().__init__()
        self.options = options or PrefilterOptions()

    def expand(self, pairs: beam.PCollection) -> StageResult:
        filtered = pairs | "NormalizeAndFilter" >> beam.ParDo(_FilterFn(self.options)).with_outputs(
            DROPPED, main="kept"
        )
        deduped = (
            filtered["kept"]
            # The pivot's language too: one text in two languages is two pivots.
            | "KeyByText"
            >> beam.Map(lambda p: ((p.pivot, p.candidate, p.lang, pivot_language(p.pivot_lang)), p))
            # The first occurrence in the input (shard, line) stands for all.
            | "FirstOfDuplicates"
            >> KeepFirst(PREFILTER, "duplicate_pair", lambda p: (p.shard, p.line))
        )
        dropped = (filtered[DROPPED], deduped.dropped) | "AllDropped" >> beam.Flatten()
        return StageResult(deduped.kept, dropped)
