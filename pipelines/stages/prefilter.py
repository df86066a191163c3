"""Prefilter: normalize pairs and drop those not worth encoding.

pairs | "Batch" | "NormalizeAndFilter" ------------------------------> kept entries
                        | pending --- "ResolvePending" (side profiles) --^   | "FirstOfDuplicates"
                        | line_checks figures -> "SideProfiles" ---------'         -> entries
                                                                   | "AsPairs" -> records (if asked)

Every aligned pair of the input passes here, so its cost per pair is much of
a run's: at a million subtitle pairs this stage took half of the run's time
before it worked as it does now (docs/results.md). So:

- pairs come in batches, and the language check, the one costly rule,
  judges the new lines of a batch in one pass (``LanguageDetector.judge_many``);
- a worker remembers the verdicts of the pairs it saw last: subtitles repeat
  "Yes." / "Tak." tens of thousands of times, and a repeat costs a lookup;
- the duplicate search keys a pair by its texts and keeps the rest of its
  record as one short string (``core.origins``, shards named by number): the
  runner holds one such entry per distinct pair until the search is done;
- the pairs it keeps go on as entries (``Prefiltered``) to the stages that
  read them all again, which make records of the pairs they keep; records
  of them all, with a coder of their own (``core.coders``), only where the
  caller asks (``--write-scored``, ``paramine refresh``).

The per-line checks follow the run's own lines (``core/line_checks.py``): each
pair adds what its lines are to its sides' figures (their main script, the
languages the detector finds in them by strong evidence), and the few pairs
whose fate depends on what the whole run holds (a line in a script no table
knows its language in; a line the detector leans to a neighbouring language
by weak evidence) wait in ``pending`` until the figures are summed, then are
settled by the same rules. A line that a check cannot judge (a language the
detector does not know, or a script it was not trained on for it; no known
or learned script; no punkt model under the sentence count) is kept, and
counted: ``<check>_unchecked.<language>`` on the ``unchecked`` output, which
the manifest holds as ``counts.unchecked``.
"""

from __future__ import annotations

import functools
import heapq
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue
from paramine.pipelines.core.accounting import (
    DROPPED,
    LINE_CHECKS,
    UNCHECKED,
    Dropper,
    KeepFirst,
    NoteTally,
)
from paramine.pipelines.core.coders import register_coders
from paramine.pipelines.core.detectors import (
    DEFAULT_DETECTOR,
    LanguageDetector,
    language_detector,
)
from paramine.pipelines.core.groups import pivot_language
from paramine.pipelines.core.junk import REASONS, SCRIPT_REASON, Limits, failures
from paramine.pipelines.core.language_id import Evidence, detector_label
from paramine.pipelines.core.line_checks import (
    DROP,
    JUDGED,
    LINES,
    SAMPLES,
    SCRIPT,
    SCRIPTED,
    STRONG,
    LanguageNeed,
    Pending,
    decide,
    figure,
    resolve,
    run_record,
    side_key,
)
from paramine.pipelines.core.origins import DedupKey, Origins
from paramine.pipelines.core.scripts import (
    COMPOSITE_SCRIPTS,
    KnownScripts,
    dominant_script,
    known_scripts,
    length,
    script_share,
)
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

#: The prefilter's extra outputs: pairs waiting for the side decisions, and
#: samples of dropped lines.
PENDING = "pending"
SAMPLED = "sampled"

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
        declared_scripts: ``(language, scripts)`` of the sides whose script
            the user named (``--tgt-lang tt-Latn``): their only scripts.
    """

    min_words: int = 1
    max_words: int = 80
    max_length_ratio: float = 2.5
    sentence_count_filter: bool = False
    junk_rules: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    language_ratio: float | None = None
    language_id: str = DEFAULT_DETECTOR
    declared_scripts: tuple[tuple[str, frozenset[str]], ...] = ()

    def __post_init__(self) -> None:
        if not 0 <= self.min_words <= self.max_words:
            raise ValueError(
                f"need 0 <= min_words <= max_words, got {self.min_words} and {self.max_words}"
            )
        if self.max_length_ratio < 1:
            raise ValueError(f"max_length_ratio must be >= 1, got {self.max_length_ratio}")


class Verdict(NamedTuple):
    """What the prefilter makes of a pair.

    Attributes:
        reason: Its drop reason; "" where it is kept or pending.
        sides: For a drop, the side keys (``core.line_checks.side_key``)
            whose lines it drops: the failing line's side for a per-line
            check, both for a rule on the pair.
        kept: A pair not dropped: its normalized pivot and candidate and
            the pivot's language part (the key of the duplicate search but
            for its language).
        pending: A pair whose fate waits for the run's side decisions.
        notes: The checks that could not judge its lines (``<check>_unchecked.<language>``).
        figures: What the pair adds to its sides' figures, once per occurrence.
    """

    reason: str = ""
    sides: tuple[str, ...] = ()
    kept: tuple[str, str, str] | None = None
    pending: Pending | None = None
    notes: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()


def _expanded(scripts: frozenset[str], primary: frozenset[str]) -> frozenset[str]:
    """Detector scripts with the scripts written together with them (Hira -> Hani, Kana for ja)."""
    found = set(scripts)
    for composite in COMPOSITE_SCRIPTS.values():
        if composite & scripts and composite <= primary:
            found |= composite
    return frozenset(found)


class PairJudge:
    """The prefilter's judgment of pairs: its rules, its language check, its side figures.

    What ``paramine mine`` runs on every new pair of a batch; a benchmark
    that recomputes a run's drops line by line calls it too, and settles the
    pending pairs with ``core.line_checks.resolve`` and the run's decisions.

    Args:
        options: The prefilter's limits and rules.
        detector: The language check's detector; None without the check.
    """

    def __init__(self, options: PrefilterOptions, detector: LanguageDetector | None) -> None:
        self.options = options
        self.detector = detector
        self.declared = dict(options.declared_scripts)

    @functools.lru_cache(maxsize=1024)  # noqa: B019 - one judge per worker, a few languages
    def _side(self, side: str, lang: str) -> tuple[str, KnownScripts | None, frozenset | None]:
        """A side's key, its language's known scripts and the detector's (None: every script)."""
        known = known_scripts(lang)
        scripts = None
        if self.detector is not None and known is not None:
            trained = self.detector.scripts(lang)
            if trained is not None:
                scripts = _expanded(trained, known.primary)
        return side_key(side, lang), known, scripts

    @functools.lru_cache(maxsize=1024)  # noqa: B019
    def _language_notes(self, lang: str) -> tuple[str, ...]:
        """The checks that cannot judge any line of ``lang`` (the detector, punkt)."""
        code = canonical_lang(lang).partition("-")[0]
        notes = []
        if self.detector is not None and not self.detector.supported(lang):
            notes.append(f"language_unchecked.{detector_label(lang)}")
        if self.options.sentence_count_filter and not sentence_count_supported(lang):
            notes.append(f"sentence_count_unchecked.{code}")
        return tuple(notes)

    def judge(self, pairs: Sequence[tuple[str, str, str, str]]) -> list[Verdict]:
        """The verdicts of ``(pivot, candidate, pivot_lang, lang)`` pairs, texts not yet normalized.

        The rules first, then the language check of the pairs they left, in
        one batch per side.
        """
        steps = [
            self._rules(pivot, candidate, pivot_lang, lang)
            for pivot, candidate, pivot_lang, lang in pairs
        ]
        if self.detector is not None:
            self._languages(steps)
        for step in steps:
            if not step.reason:
                pivot_lang, lang = step.langs
                step.notes[:0] = [*self._language_notes(pivot_lang), *self._language_notes(lang)]
        return [step.verdict() for step in steps]

    def _rules(self, pivot: str, candidate: str, pivot_lang: str, lang: str) -> _Step:
        pivot, candidate = normalize(pivot), normalize(candidate)
        step = _Step(
            pivot,
            candidate,
            pivot_lang,
            lang,
            self._side("pivot", pivot_lang),
            self._side("candidate", lang),
        )
        step.figures += [figure(step.pivot_side[0], LINES), figure(step.candidate_side[0], LINES)]
        reason = _pair_reason(pivot, candidate, pivot_lang, lang, self.options)
        if reason:
            step.drop(reason, (True, True))
            return step
        for reason, sides in failures(
            self.options.junk_rules, pivot, candidate, self.options.limits, step.script_rule(self)
        ):
            if reason != SCRIPT_REASON:
                if step.script_needs:
                    step.after = reason
                else:
                    step.drop(reason, sides)
                return step
            if step.script_failed:
                step.drop(reason, step.script_failed)
                return step
        return step

    def _languages(self, steps: list[_Step]) -> None:
        """The language check of the pairs the rules left: candidates, then pivots."""
        detector = self.detector
        assert detector is not None
        for which in (1, 0):
            todo = [s for s in steps if s.open() and (which == 1 or not s.strong_candidate)]
            lines = []
            for step in todo:
                line = step.line_to_judge(which)
                if line is not None:
                    lines.append((step, line))
            found = detector.judge_many([line for _, line in lines])
            for (step, _), evidence in zip(lines, found, strict=True):
                step.judged(which, evidence)


class _Step:
    """One pair on its way through ``PairJudge``."""

    def __init__(
        self,
        pivot: str,
        candidate: str,
        pivot_lang: str,
        lang: str,
        pivot_side: tuple[str, KnownScripts | None, frozenset | None],
        candidate_side: tuple[str, KnownScripts | None, frozenset | None],
    ) -> None:
        self.texts = (pivot, candidate)
        self.langs = (pivot_lang, lang)
        self.pivot_side, self.candidate_side = pivot_side, candidate_side
        self.figures: list[str] = []
        self.notes: list[str] = []
        self.reason = ""
        self.sides: tuple[str, ...] = ()
        self.script_needs: list[tuple[str, int]] = []
        self.script_failed: tuple[bool, bool] | None = None
        self.after = ""
        self.languages: list[LanguageNeed | None] = [None, None]
        self.strong_candidate = False

    def side(self, which: int) -> tuple[str, KnownScripts | None, frozenset | None]:
        return self.candidate_side if which else self.pivot_side

    def drop(self, reason: str, sides: tuple[bool, bool]) -> None:
        self.reason = reason
        self.sides = tuple(self.side(i)[0] for i in (0, 1) if sides[i])

    def open(self) -> bool:
        """Not dropped, and its fate not settled by a rule after the script rule."""
        return not self.reason and not self.after

    def script_rule(self, judge: PairJudge) -> Callable[[], tuple[bool, bool]]:
        """The script rule: figures for both lines, needs for those outside the tables."""

        def rule() -> tuple[bool, bool]:
            limit = judge.options.limits.min_script_share
            failed = [False, False]
            outside = [False, False]
            for which in (0, 1):
                text, lang = self.texts[which], self.langs[which]
                key, known, _ = self.side(which)
                main = dominant_script(text)
                if main is None:  # no letters: nothing to judge
                    continue
                self.figures += [figure(key, SCRIPTED), figure(key, SCRIPT, main)]
                named = judge.declared.get(lang)
                if named is not None:
                    failed[which] = script_share(text, named) < limit
                elif known is None or script_share(text, known.all) < limit:
                    outside[which] = True
                    self.script_needs.append((key, which))
            if failed[0] or failed[1]:
                self.script_failed = (failed[0], failed[1])
            return (failed[0] or outside[0], failed[1] or outside[1])

        return rule

    def line_to_judge(self, which: int) -> tuple[str, str] | None:
        """The line for the detector, or None where it cannot judge it (noted)."""
        text, lang = self.texts[which], self.langs[which]
        _, known, trained = self.side(which)
        main = dominant_script(text)
        if (
            trained is not None
            and known is not None
            and main in known.primary
            and main not in trained
        ):
            # A script the language is written in that the detector was not
            # trained on for it (Latin Tatar): not the detector's to judge.
            self.notes.append(f"language_unchecked.{detector_label(lang)}-{main}")
            return None
        return text, lang

    def judged(self, which: int, evidence: Evidence | None) -> None:
        if evidence is None:
            return  # a language the detector does not know: noted per language
        key = self.side(which)[0]
        self.figures.append(figure(key, JUDGED))
        self.figures += [figure(key, STRONG, label) for label in evidence.strong]
        if evidence.strong or evidence.weak:
            reason = "wrong_language_candidate" if which else "wrong_language_pivot"
            self.languages[which] = LanguageNeed(key, reason, evidence.strong, evidence.weak)
            self.strong_candidate = which == 1 and bool(evidence.strong)

    def verdict(self) -> Verdict:
        figures = tuple(self.figures)
        if self.reason:
            return Verdict(self.reason, self.sides, figures=figures)
        needs = tuple(need for need in (self.languages[1], self.languages[0]) if need is not None)
        notes = tuple(dict.fromkeys(self.notes))
        pivot, candidate = self.texts
        kept = (pivot, candidate, pivot_language(self.langs[0]))
        if self.script_needs or self.after or any(need.weak for need in needs):
            pending = Pending(self.texts, tuple(self.script_needs), self.after, needs, notes)
            return Verdict(kept=kept, pending=pending, figures=figures)
        if needs:  # strong evidence only: settled now
            first = needs[0]
            return Verdict(first.reason, (first.side,), figures=figures)
        return Verdict(kept=kept, notes=notes, figures=figures)


def _pair_reason(
    pivot: str, candidate: str, pivot_lang: str, lang: str, options: PrefilterOptions
) -> str:
    """The rules on the pair as a whole, before the heuristic ones: "" when it passes them."""
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
    return ""


#: Pairs normalized and checked together: the language check judges the
#: new lines of a batch in one pass.
BATCH_SIZE = 1024
#: Pairs whose verdicts a worker remembers (some 15 MB); then it forgets them
#: all, and the frequent ones come back first.
MEMO_SIZE = 1 << 16


def unchecked_keys(
    options: PrefilterOptions, languages: LanguageDetector | None, lang: str
) -> tuple[str, ...]:
    """What the checks cannot judge of lines declared ``lang``, known before the run.

    ``language_unchecked.<label>``: the detector does not know the language;
    ``language_unchecked.<label>-<Script>``: it was not trained on it in that
    script, one the language is written in; ``script_unchecked.<code>``: no
    table knows its scripts (the run learns them from its lines);
    ``sentence_count_unchecked.<code>``: no punkt model.
    """
    judge = PairJudge(options, languages)
    keys = list(judge._language_notes(lang))
    _, known, trained = judge._side("candidate", lang)
    if languages is not None and languages.supported(lang) and trained is not None and known:
        label = detector_label(lang)
        keys += [f"language_unchecked.{label}-{s}" for s in sorted(known.primary - trained)]
    if "script" in options.junk_rules and known is None and lang not in judge.declared:
        keys.append(f"script_unchecked.{canonical_lang(lang).partition('-')[0]}")
    return tuple(sorted(keys))


class _Samples:
    """Dropped lines kept per (side, reason): the ``SAMPLES`` of smallest hash, per bundle."""

    def __init__(self) -> None:
        self._heaps: dict[str, list] = {}

    def add(self, sides: Sequence[str], reason: str, pair: AlignedPair) -> None:
        sample = None
        for side in sides:
            heap = self._heaps.setdefault(f"{side}|{reason}", [])
            if sample is None:
                text = f"{pair.pivot}\t{pair.candidate}"
                sample = (
                    zlib.crc32(text.encode("utf-8")),
                    pair.line,
                    pair.shard,
                    pair.pivot,
                    pair.candidate,
                )
            if len(heap) < SAMPLES:
                heapq.heappush(heap, _Reversed(sample))
            elif sample < heap[0].value:
                heapq.heapreplace(heap, _Reversed(sample))

    def flush(self) -> Iterator[pvalue.TaggedOutput]:
        for key, heap in sorted(self._heaps.items()):
            for item in heap:
                yield pvalue.TaggedOutput(SAMPLED, _global_row((key, item.value)))
        self._heaps.clear()


class _Reversed:
    """A heap item ordered backwards: the heap's top is the largest kept."""

    __slots__ = ("value",)

    def __init__(self, value: tuple) -> None:
        self.value = value

    def __lt__(self, other: _Reversed) -> bool:
        return self.value > other.value


def _global_row(row: Any) -> WindowedValue:
    return WindowedValue(row, GlobalWindow().max_timestamp(), (GlobalWindow(),))


class _FilterFn(beam.DoFn):
    """A batch of pairs in; kept pairs out as duplicate-search entries, the pending ones apart.

    Drops are summed per reason; the side figures (``line_checks``), the
    notes of lines a check could not judge and samples of dropped lines go
    out at each bundle's end.
    """

    def __init__(self, options: PrefilterOptions, origins: Origins) -> None:
        self.options = options
        self.origins = origins
        self.drop = Dropper(PREFILTER)
        self.unchecked = NoteTally(UNCHECKED)
        self.figures = NoteTally(LINE_CHECKS)
        self.samples = _Samples()
        self.judge: PairJudge | None = None
        self._memo: dict[tuple[str, str, str, str], Verdict] = {}

    def setup(self) -> None:
        self._memo = {}
        detector = None
        if self.options.language_ratio is not None:
            # One detector per worker, its answers cached per distinct line.
            detector = language_detector(self.options.language_id, self.options.language_ratio)
        self.judge = PairJudge(self.options, detector)

    def start_bundle(self) -> None:
        self.samples = _Samples()

    def process(self, batch: list[AlignedPair]) -> Iterator:
        drops: dict[str, int] = {}
        value = self.origins.value
        figures = self.figures
        for pair, verdict in zip(batch, self._verdicts(batch), strict=True):
            for name in verdict.figures:
                figures.add(name)
            if verdict.reason:
                drops[verdict.reason] = drops.get(verdict.reason, 0) + 1
                for side in verdict.sides:
                    figures.add(figure(side, DROP, verdict.reason))
                self.samples.add(verdict.sides, verdict.reason, pair)
                continue
            pivot, candidate, pivot_lang = verdict.kept  # type: ignore[misc]
            key: DedupKey = (pivot, candidate, pair.lang, pivot_lang)
            origin = value(pair.shard, pair.line, pair.pivot_lang, pair.corpus)
            if verdict.pending is not None:
                yield pvalue.TaggedOutput(PENDING, (key, origin, pair, verdict.pending))
                continue
            for note in verdict.notes:
                self.unchecked.add(note)
            yield key, origin
        for reason, n in drops.items():
            yield self.drop(reason, n)

    def finish_bundle(self) -> Iterator:
        yield from self.unchecked.flush(UNCHECKED)
        yield from self.figures.flush(LINE_CHECKS)
        yield from self.samples.flush()

    def _verdicts(self, batch: list[AlignedPair]) -> list[Verdict]:
        """Each pair's verdict: remembered, or judged with the batch's other new pairs."""
        memo = self._memo
        keys = [(p.pivot, p.candidate, p.pivot_lang, p.lang) for p in batch]
        found = [memo.get(key) for key in keys]
        new = list(dict.fromkeys(key for key, f in zip(keys, found, strict=True) if f is None))
        if not new:
            return found  # type: ignore[return-value]
        assert self.judge is not None
        judged = dict(zip(new, self.judge.judge(new), strict=True))
        if len(memo) + len(judged) > MEMO_SIZE:
            memo.clear()
        memo.update(judged)
        return [judged[key] if f is None else f for key, f in zip(keys, found, strict=True)]


class _ResolveFn(beam.DoFn):
    """The pending pairs settled with the run's side decisions; kept ones out as entries."""

    def __init__(self, options: PrefilterOptions) -> None:
        self.options = options
        self.declared = dict(options.declared_scripts)
        self.drop = Dropper(PREFILTER)
        self.unchecked = NoteTally(UNCHECKED)
        self.figures = NoteTally(LINE_CHECKS)
        self.samples = _Samples()
        self._decisions: tuple[int, dict] | None = None

    def start_bundle(self) -> None:
        self.samples = _Samples()

    def process(self, element: tuple, profile: dict[str, int]) -> Iterator:
        key, origin, pair, pending = element
        if self._decisions is None or self._decisions[0] != id(profile):
            self._decisions = (id(profile), decide(profile, self.declared))
        resolved = resolve(pending, self._decisions[1], self.options.limits.min_script_share)
        if resolved.reason:
            for side in resolved.sides:
                self.figures.add(figure(side, DROP, resolved.reason))
            self.samples.add(resolved.sides, resolved.reason, pair)
            yield self.drop(resolved.reason)
            return
        for note in resolved.notes:
            self.unchecked.add(note)
        yield key, origin

    def finish_bundle(self) -> Iterator:
        yield from self.unchecked.flush(UNCHECKED)
        yield from self.figures.flush(LINE_CHECKS)
        yield from self.samples.flush()


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
    #: ``(note, key, n)`` count rows: kept lines a check could not judge
    #: (``unchecked``), and the sides' figures (``line_checks``).
    notes: beam.PCollection
    #: One dict: each side's decisions, drops by check and flags
    #: (``core.line_checks.run_record``), for the manifest.
    sides: beam.PCollection


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
        register_coders()
        filtered = (
            pairs
            | "Batch" >> beam.BatchElements(min_batch_size=BATCH_SIZE, max_batch_size=BATCH_SIZE)
            | "NormalizeAndFilter"
            >> beam.ParDo(_FilterFn(self.options, self.origins)).with_outputs(
                DROPPED, UNCHECKED, LINE_CHECKS, PENDING, SAMPLED, main="kept"
            )
        )
        # The sides' figures as every pair left them, summed: what the pending
        # pairs are settled by (a side input: complete before any is settled).
        profile = filtered[LINE_CHECKS] | "SideProfiles" >> _SumFigures()
        resolved = filtered[PENDING] | "ResolvePending" >> beam.ParDo(
            _ResolveFn(self.options), beam.pvalue.AsDict(profile)
        ).with_outputs(DROPPED, UNCHECKED, LINE_CHECKS, SAMPLED, main="kept")
        kept = (filtered["kept"], resolved["kept"]) | "AllKept" >> beam.Flatten()
        # The first occurrence in the input (shard, line) stands for all.
        deduped = kept | "FirstOfDuplicates" >> KeepFirst(
            PREFILTER, "duplicate_pair", keep_key=True
        )
        records = None
        if self.records:
            records = deduped.kept | "AsPairs" >> beam.MapTuple(
                self.origins.pair
            ).with_output_types(AlignedPair)
        dropped = (
            filtered[DROPPED],
            resolved[DROPPED],
            deduped.dropped,
        ) | "AllDropped" >> beam.Flatten()
        figures = (filtered[LINE_CHECKS], resolved[LINE_CHECKS]) | "AllFigures" >> beam.Flatten()
        notes = (filtered[UNCHECKED], resolved[UNCHECKED], figures) | "Notes" >> beam.Flatten()
        samples = (
            (filtered[SAMPLED], resolved[SAMPLED])
            | "AllSamples" >> beam.Flatten()
            | "FewestPerSide" >> beam.combiners.Top.SmallestPerKey(SAMPLES)
        )
        declared = self.options.declared_scripts
        sides = (
            pairs.pipeline
            | "SidesOnce" >> beam.Create([None])
            | "SideRecord"
            >> beam.Map(
                _side_record,
                declared,
                beam.pvalue.AsDict(figures | "SumAll" >> _SumFigures()),
                beam.pvalue.AsList(samples),
            )
        )
        return Prefiltered(records, dropped, deduped.kept, notes, sides)


class _SumFigures(beam.PTransform):
    """``(note, key, n)`` rows summed per key: ``(key, n)``."""

    def expand(self, rows: beam.PCollection) -> beam.PCollection:
        return (
            rows
            | "ByKey" >> beam.Map(lambda row: (row[1], row[2]))
            | "Sum" >> beam.CombinePerKey(sum)
        )


def _side_record(
    _: None,
    declared: tuple[tuple[str, frozenset[str]], ...],
    figures: dict[str, int],
    samples: list[tuple[str, list[tuple]]],
) -> dict[str, Any]:
    """The manifest's record of the sides (``core.line_checks.run_record``)."""
    kept = [
        (key, {"hash": h, "line": line, "shard": shard, "pivot": pivot, "candidate": candidate})
        for key, found in samples
        for h, line, shard, pivot, candidate in found
    ]
    return run_record(figures, dict(declared), kept)
