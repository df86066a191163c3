"""PairJudge: what the prefilter makes of a pair, by its rules, its language check and its sides.

The prefilter (``pipelines/stages/filter/prefilter.py``) runs it on every new pair of
a batch; a benchmark that replays a run's drops line by line runs it too,
and settles the pairs it holds back with ``stages.filter.rules.line_checks.resolve`` and the
run's decisions, so that the two cannot disagree. ``PrefilterOptions`` are
the stage's settings, the one place their defaults and checks are stated.

``PairJudge.judge`` takes every pair of a batch through its rules one by
one (``PairStep``). The prefilter runs ``column_judge.ColumnJudge``, which
applies the rules to the batch as columns (``pair_columns``) and leaves to
this path only the pairs that wait on the run's decisions or that the
language check finds evidence against; this path is the reference it is
tested against, verdict for verdict. The verdicts and the parts they share
are ``stages.filter.rules.verdict``'s.

Why it is longer than 500 lines: every input pair of a run passes here, so
its steps are written for their cost (a side's figure names made once,
slotted steps, shared tuples; docs/results.md measures each), and splitting
one pair's sequence of rules across modules would scatter what must be read
in order.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from paramine.pipelines.core.groups import pivot_language
from paramine.pipelines.core.text import (
    canonical_lang,
    normalize,
    sentence_count,
    sentence_count_supported,
)
from paramine.pipelines.stages.filter.rules.detectors import DEFAULT_DETECTOR, LanguageDetector
from paramine.pipelines.stages.filter.rules.junk import (
    SCRIPT_REASON,
    Limits,
    failures,
    line_verdicts,
)
from paramine.pipelines.stages.filter.rules.language_id import Evidence, detector_label
from paramine.pipelines.stages.filter.rules.line_checks import (
    JUDGED,
    LINES,
    SCRIPT,
    SCRIPTED,
    STRONG,
    LanguageNeed,
    LengthNeed,
    Pending,
    figure,
    side_key,
)
from paramine.pipelines.stages.filter.rules.line_figures import LineFigures
from paramine.pipelines.stages.filter.rules.scripts import (
    COMPOSITE_SCRIPTS,
    KnownScripts,
    known_scripts,
)
from paramine.pipelines.stages.filter.rules.verdict import (
    SHARED_SIZE,
    Verdict,
    dropped,
    fixed_band,
    ratio_figure,
    side_figure,
)
from paramine.schemas.errors import UsageError
from paramine.schemas.options import option, parse_fields, parse_non_negative, parse_positive


def parse_length_ratio(value: object) -> float:
    """A length ratio: 1 or more (1 itself: equal lengths only)."""
    number = float(value)  # type: ignore[arg-type]  # str, int or float; float() says what else
    if number < 1:
        raise ValueError(f"{number} must be at least 1")
    return number


@dataclass(frozen=True)
class PrefilterOptions:
    """Limits of the prefilter; lengths in words, as ``rules.words.length`` counts them.

    Attributes:
        min_words: Fewest words on either side.
        max_words: Most words on either side.
        max_length_ratio: Largest (longer + 1) / (shorter + 1) length
            ratio; the +1 keeps one-word sentences from tripping it.
        sentence_count_filter: Drop pairs whose sides punkt splits into
            different numbers of sentences (misalignments often do).
        junk_rules: The heuristic rules applied (``stages.filter.rules.junk.RULES``).
        limits: Their thresholds.
        language_ratio: The declared-language check's ratio
            (``stages.filter.rules.language_id``); ``None``: no check.
        language_id: The detector of the language check (``--language-id``).
        declared_scripts: ``(language, scripts)`` of the sides whose script
            the user named (``--tgt-lang tt-Latn``): their only scripts.
    """

    min_words: int = option(
        1,
        "fewest words on either side (default: %(default)s)",
        group=None,
        parse=parse_non_negative,
    )
    max_words: int = option(
        80, "most words on either side (default: %(default)s)", group=None, parse=parse_positive
    )
    max_length_ratio: float = option(
        2.5,
        "largest (longer+1)/(shorter+1) word ratio around 1, and around a side's own "
        "typical ratio where the run learns one from 50 pairs or more (default: %(default)s)",
        group=None,
        parse=parse_length_ratio,
    )
    sentence_count_filter: bool = option(
        False,
        "drop pairs whose sides split into different numbers of sentences (punkt)",
        group=None,
        switch=True,
    )
    junk_rules: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    language_ratio: float | None = None
    language_id: str = DEFAULT_DETECTOR
    declared_scripts: tuple[tuple[str, frozenset[str]], ...] = ()

    def __post_init__(self) -> None:
        """Parse the declared options, then check the lengths against each other.

        Raises:
            UsageError: Naming the flags (``--min-words``, ``--max-words``,
                ``--max-length-ratio``) and what they must be.
        """
        parse_fields(self)
        if self.min_words > self.max_words:
            raise UsageError(f"--min-words {self.min_words} is above --max-words {self.max_words}")


class Side(NamedTuple):
    """A side of the pairs: its key, its language's scripts, its figures' names made once.

    The names are the same string objects pair after pair, so the
    prefilter's count of each verdict's figures hashes them once.
    """

    key: str
    known: KnownScripts | None
    #: The scripts the detector was trained on for its language (None: every script).
    trained: frozenset | None
    #: Every script the tables know its language in (None: none).
    known_all: frozenset | None
    #: The scripts it is written in that the detector was not trained on for it.
    untrained: frozenset
    #: The only scripts its user named for it (``--tgt-lang tt-Latn``), if any.
    named: frozenset | None
    #: The share of a line's letters that must be in the side's scripts.
    min_script_share: float
    lines: str
    scripted: str
    judged: str


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
    pending pairs with ``stages.filter.rules.line_checks.resolve`` and the run's decisions.

    Args:
        options: The prefilter's limits and rules.
        detector: The language check's detector; None without the check.
    """

    def __init__(self, options: PrefilterOptions, detector: LanguageDetector | None) -> None:
        self.options = options
        self.detector = detector
        self.declared = dict(options.declared_scripts)
        #: One object for each of the equal parts many verdicts hold (their
        #: figures, the language needs): a worker's memo of verdicts holds
        #: one per distinct part rather than one per pair, and Python's
        #: collector walks every object it holds on each full collection.
        self.shared: dict = {}

    @functools.lru_cache(maxsize=1024)  # noqa: B019 - one judge per worker, a few languages
    def side(self, side: str, lang: str) -> Side:
        """A side's key, its language's known scripts and the detector's, its figures' names."""
        known = known_scripts(lang)
        scripts = None
        if self.detector is not None and known is not None:
            trained = self.detector.scripts(lang)
            if trained is not None:
                scripts = _expanded(trained, known.primary)
        key = side_key(side, lang)
        return Side(
            key,
            known,
            scripts,
            None if known is None else known.all,
            known.primary - scripts if known is not None and scripts is not None else frozenset(),
            self.declared.get(lang),
            self.options.limits.min_script_share,
            figure(key, LINES),
            figure(key, SCRIPTED),
            figure(key, JUDGED),
        )

    @functools.lru_cache(maxsize=1024)  # noqa: B019
    def language_notes(self, lang: str) -> tuple[str, ...]:
        """The checks that cannot judge any line of ``lang`` (the detector, punkt)."""
        code = canonical_lang(lang).partition("-")[0]
        notes = []
        if self.detector is not None and not self.detector.supported(lang):
            notes.append(f"language_unchecked.{detector_label(lang)}")
        if self.options.sentence_count_filter and not sentence_count_supported(lang):
            notes.append(f"sentence_count_unchecked.{code}")
        return tuple(notes)

    def judge(self, pairs: Sequence[tuple[str, str, str, str]]) -> list[Verdict]:
        """The verdicts of ``(pivot, candidate, pivot_lang, lang)`` pairs, pair by pair.

        A ``PairStep`` each: the reference ``column_judge.ColumnJudge`` is
        checked against, verdict for verdict. The lines' figures for the
        whole batch at once (``stages.filter.rules.line_figures``), the rules,
        then the language check of the pairs they left, in one batch per side.
        """
        texts = [(normalize(pivot), normalize(candidate)) for pivot, candidate, _, _ in pairs]
        rows = {text: 0 for both in texts for text in both}
        for i, text in enumerate(rows):
            rows[text] = i
        lines = list(rows)
        figures = LineFigures(lines)
        options = self.options
        verdicts = line_verdicts(options.junk_rules, lines, figures.letter_share, options.limits)
        steps = [
            self.rules(
                pivot, candidate, (rows[pivot], rows[candidate]), figures, verdicts, langs[2:]
            )
            for (pivot, candidate), langs in zip(texts, pairs, strict=True)
        ]
        if self.detector is not None:
            self._languages(steps)
        for step in steps:
            if not step.reason:
                pivot_lang, lang = step.langs
                first = self.language_notes(pivot_lang) + self.language_notes(lang)
                if first:
                    step.notes[:0] = first
        shared = self.shared
        if len(shared) > SHARED_SIZE:
            shared.clear()
        return [step.verdict(shared) for step in steps]

    def rules(
        self,
        pivot: str,
        candidate: str,
        rows: tuple[int, int],
        figures: LineFigures,
        verdicts: dict[str, list[bool]],
        langs: tuple[str, str],
    ) -> PairStep:
        """A pair's rules in order; its lines are ``rows`` of the batch's ``figures``.

        ``verdicts``: the per-line rules on the batch's lines (``junk.line_verdicts``).
        """
        pivot_lang, lang = langs
        step = PairStep(
            pivot,
            candidate,
            pivot_lang,
            lang,
            self.side("pivot", pivot_lang),
            self.side("candidate", lang),
            figures,
            rows,
        )
        step.figures += [step.pivot_side.lines, step.candidate_side.lines]
        reason = _pair_reason(step, self.options)
        if reason:
            step.drop(reason, (True, True))
            return step
        step.length_rule(self.options.max_length_ratio)
        if self.options.sentence_count_filter and sentence_count(
            pivot, pivot_lang
        ) != sentence_count(candidate, lang):
            step.settle("sentence_count_mismatch", (True, True), after_scripts=False)
            return step
        first, second = rows
        for reason, sides in failures(
            self.options.junk_rules,
            pivot,
            candidate,
            self.options.limits,
            step.script_rule,
            lambda name: (verdicts[name][first], verdicts[name][second]),
        ):
            if reason != SCRIPT_REASON:
                step.settle(reason, sides, after_scripts=True)
                return step
            if step.script_failed:
                step.settle(reason, step.script_failed, after_scripts=False)
                return step
        return step

    def _languages(self, steps: list[PairStep]) -> None:
        """The language check of the pairs the rules left: candidates, then pivots."""
        detector = self.detector
        assert detector is not None
        for which in (1, 0):
            judged, lines = [], []
            for step in steps:
                if step.reason or step.after or (which == 0 and step.strong_candidate):
                    continue  # settled, or its candidate dropped whatever the pivot is
                line = step.line_to_judge(which)
                if line is not None:
                    judged.append(step)
                    lines.append(line)
            for step, evidence in zip(judged, detector.judge_many(lines), strict=True):
                step.judged(which, evidence, self.shared)


class PairStep:
    """One pair on its way through ``PairJudge``."""

    __slots__ = (
        "after",
        "after_sides",
        "candidate_side",
        "figures",
        "langs",
        "languages",
        "length",
        "line_figures",
        "notes",
        "pivot_side",
        "reason",
        "rows",
        "script_failed",
        "script_needs",
        "sides",
        "strong_candidate",
        "texts",
    )

    def __init__(
        self,
        pivot: str,
        candidate: str,
        pivot_lang: str,
        lang: str,
        pivot_side: Side,
        candidate_side: Side,
        line_figures: LineFigures,
        rows: tuple[int, int],
    ) -> None:
        self.texts = (pivot, candidate)
        self.line_figures, self.rows = line_figures, rows
        self.langs = (pivot_lang, lang)
        self.pivot_side, self.candidate_side = pivot_side, candidate_side
        self.figures: list[str] = []
        self.notes: list[str] = []
        self.reason = ""
        self.sides: tuple[str, ...] = ()
        self.script_needs: list[tuple[str, int]] = []
        self.script_failed: tuple[bool, bool] | None = None
        self.after = ""
        self.after_sides: tuple[str, ...] = ()
        self.length: LengthNeed | None = None
        self.languages: list[LanguageNeed | None] = [None, None]
        self.strong_candidate = False

    def lengths(self) -> tuple[float, float]:
        """Both lines' lengths in words (``stages.filter.rules.words.length``)."""
        words = self.line_figures.words
        return words[self.rows[0]], words[self.rows[1]]

    def main_script(self, which: int) -> str | None:
        """A line's main script (``stages.filter.rules.scripts.dominant_script``)."""
        return self.line_figures.main[self.rows[which]]

    def script_share(self, which: int, scripts: frozenset[str]) -> float:
        """A line's share of letters in ``scripts`` (``rules.scripts.script_share``)."""
        return self.line_figures.script_share(self.rows[which], scripts)

    def side(self, which: int) -> Side:
        return self.candidate_side if which else self.pivot_side

    def drop(self, reason: str, sides: tuple[bool, bool]) -> None:
        self.reason = reason
        self.sides = tuple(self.side(i).key for i in (0, 1) if sides[i])

    def length_rule(self, max_length_ratio: float) -> None:
        """The length-ratio figure of the pair; outside the fixed band, a need for its side's."""
        pivot_words, words = self.lengths()
        ratio = (words + 1) / (pivot_words + 1)
        pivot_key, key = self.pivot_side.key, self.candidate_side.key
        pivot_lang = self.langs[0]
        self.figures.append(ratio_figure(key, pivot_lang, pivot_words, words))
        low, high = fixed_band(max_length_ratio)
        if not low <= ratio <= high:
            self.length = LengthNeed(pivot_key, key, pivot_lang, ratio, max_length_ratio)

    def settle(self, reason: str, sides: tuple[bool, bool], *, after_scripts: bool) -> None:
        """A rule's drop, or, where an earlier rule waits on the run's decisions, its ``after``.

        ``after_scripts``: the rule comes after the script rule, so it waits on
        the lines whose scripts are pending too.
        """
        if self.length is not None or (after_scripts and self.script_needs):
            self.after = reason
            self.after_sides = tuple(self.side(i).key for i in (0, 1) if sides[i])
        else:
            self.drop(reason, sides)

    def script_rule(self) -> tuple[bool, bool]:
        """The script rule: figures for both lines, needs for those outside the tables.

        A line fails in a script its side's user did not name; a line outside
        the scripts the tables know waits for the side's decided scripts.
        """
        failed = [False, False]
        outside = [False, False]
        for which, side in ((0, self.pivot_side), (1, self.candidate_side)):
            main = self.main_script(which)
            if main is None:  # no letters: nothing to judge
                continue
            self.figures += (side.scripted, side_figure(side.key, SCRIPT, main))
            if side.named is not None:
                failed[which] = self.script_share(which, side.named) < side.min_script_share
            elif (
                side.known_all is None
                or self.script_share(which, side.known_all) < side.min_script_share
            ):
                outside[which] = True
                self.script_needs.append((side.key, which))
        if failed[0] or failed[1]:
            self.script_failed = (failed[0], failed[1])
        return (failed[0] or outside[0], failed[1] or outside[1])

    def line_to_judge(self, which: int) -> tuple[str, str] | None:
        """The line for the detector, or None where it cannot judge it (noted)."""
        text, lang = self.texts[which], self.langs[which]
        untrained = self.side(which).untrained
        if untrained:
            main = self.main_script(which)
            if main in untrained:
                # A script the language is written in that the detector was not
                # trained on for it (Latin Tatar): not the detector's to judge.
                self.notes.append(f"language_unchecked.{detector_label(lang)}-{main}")
                return None
        return text, lang

    def judged(self, which: int, evidence: Evidence | None, shared: dict) -> None:
        if evidence is None:
            return  # a language the detector does not know: noted per language
        side = self.side(which)
        key = side.key
        self.figures.append(side.judged)
        self.figures += [side_figure(key, STRONG, label) for label in evidence.strong]
        if evidence.strong or evidence.weak:
            reason = "wrong_language_candidate" if which else "wrong_language_pivot"
            need = LanguageNeed(key, reason, evidence.strong, evidence.weak)
            self.languages[which] = shared.setdefault(need, need)
            self.strong_candidate = which == 1 and bool(evidence.strong)

    def verdict(self, shared: dict) -> Verdict:
        """The pair's verdict; its parts that many pairs share are ``shared``'s objects."""
        figures = tuple(self.figures)
        figures = shared.setdefault(figures, figures)
        if self.reason:
            return dropped(self.reason, self.sides, figures, shared)
        needs = tuple(need for need in (self.languages[1], self.languages[0]) if need is not None)
        notes = tuple(dict.fromkeys(self.notes)) if self.notes else ()
        pivot, candidate = self.texts
        kept = (pivot, candidate, pivot_language(self.langs[0]))
        waits = bool(self.length or self.script_needs or self.after)
        if not waits and needs and needs[0].strong:
            # The first line's strong evidence decides whatever the run holds.
            return dropped(needs[0].reason, (needs[0].side,), figures, shared)
        if waits or any(need.weak for need in needs):
            pending = Pending(
                self.texts,
                tuple(self.script_needs),
                self.after,
                needs,
                notes,
                self.length,
                self.after_sides,
            )
            return Verdict(kept=kept, pending=pending, figures=figures)
        return Verdict(kept=kept, notes=notes, figures=figures)


def _pair_reason(step: PairStep, options: PrefilterOptions) -> str:
    """The rules on the pair as a whole that need nothing of the run: "" when it passes them.

    The length ratio and the sentence count follow (``PairStep.length_rule``).
    """
    pivot, candidate = step.texts
    if not pivot or not candidate:
        return "empty"
    keys = step.line_figures.keys
    if keys[step.rows[0]] == keys[step.rows[1]]:
        return "untranslated"
    shorter, longer = sorted(step.lengths())
    if shorter < options.min_words:
        return "too_short"
    if longer > options.max_words:
        return "too_long"
    return ""


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
    keys = list(judge.language_notes(lang))
    side = judge.side("candidate", lang)
    known, trained = side.known, side.trained
    if languages is not None and languages.supported(lang) and trained is not None and known:
        label = detector_label(lang)
        keys += [f"language_unchecked.{label}-{s}" for s in sorted(known.primary - trained)]
    if "script" in options.junk_rules and known is None and lang not in judge.declared:
        keys.append(f"script_unchecked.{canonical_lang(lang).partition('-')[0]}")
    return tuple(sorted(keys))
