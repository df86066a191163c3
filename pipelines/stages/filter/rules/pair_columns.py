"""The prefilter's rules on a batch of pairs as columns: one numpy predicate per rule.

``PairJudge`` judged a batch pair by pair (``pair_judge.PairStep``): an object
per pair, a call per rule, a list of figures per pair; on 20,480 Tatoeba
pairs (eng-pol, eng-ces) that bookkeeping was two thirds of the judge's time
without the language check. Here each rule is one predicate over the whole
batch: the lines' figures (``LineFigures``) and per-line verdicts
(``junk.line_verdicts``) indexed by the pairs' rows, applied in the order
``PairJudge.rules`` applies them, each to the pairs no rule before it
settled:

- empty, untranslated, too_short, too_long: both lines dropped;
- a length ratio outside the fixed band: the pair waits for its side's band;
- the sentence count (``sentence_count_filter``): both lines dropped;
- the junk rules in the options' order: a per-line rule by its lines'
  verdicts, a rule on the pair pair by pair, the script rule by the lines'
  shares in their side's named or known scripts (a line outside its side's
  known scripts waits for the side's decided ones).

A pair that waits on the run's decisions is left to the object path
(``fallback``), which applies the rules after the wait as its "after"
reason; so is a pair whose line the detector was not trained on in its
script (a note). ``stages.filter.rules.column_judge`` builds the verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np
from paramine.pipelines.core.text import normalize, sentence_count
from paramine.pipelines.stages.filter.rules.junk import RULES, line_verdicts
from paramine.pipelines.stages.filter.rules.line_figures import LineFigures
from paramine.pipelines.stages.filter.rules.pair_judge import PrefilterOptions, Side
from paramine.pipelines.stages.filter.rules.verdict import fixed_band

T = TypeVar("T")
#: A side pair of a batch's group of pairs: (pivot side, candidate side).
GroupSides = tuple[Side, Side]


def codes(items: Sequence[T]) -> tuple[list[T], np.ndarray]:
    """The distinct items, in order of first sight, and each item's index among them."""
    distinct = list(dict.fromkeys(items))
    index = {item: i for i, item in enumerate(distinct)}
    return distinct, np.fromiter(map(index.__getitem__, items), np.int64, len(items))


class Batch:
    """A batch's normalized pairs, its distinct lines and their figures, as columns.

    Attributes:
        texts: Each pair's normalized pivot and candidate.
        langs: Each pair's pivot language and candidate language.
        lines: The batch's distinct lines.
        figures: Their figures (``LineFigures``).
        verdicts: The per-line rules on them (``junk.line_verdicts``).
        rows: Each pair's pivot's and candidate's rows among ``lines``.
        groups: The batch's distinct ``(pivot_lang, lang)``.
        group: Each pair's index into ``groups``.
        scripts: The main scripts of the lines, in order of first sight.
        main: Each line's main script's index into ``scripts``; -1 without letters.
    """

    def __init__(
        self, pairs: Sequence[tuple[str, str, str, str]], options: PrefilterOptions
    ) -> None:
        self.texts = [(normalize(pivot), normalize(candidate)) for pivot, candidate, _, _ in pairs]
        self.langs = [(pivot_lang, lang) for _, _, pivot_lang, lang in pairs]
        self.lines, rows = codes([text for both in self.texts for text in both])
        self.rows = rows[0::2], rows[1::2]
        self.figures = LineFigures(self.lines)
        self.verdicts = line_verdicts(
            options.junk_rules, self.lines, self.figures.letter_share, options.limits
        )
        self.groups, self.group = codes(self.langs)
        # None (no letters) first, so that it is -1 once the codes are shifted.
        scripts, main = codes([None, *self.figures.main])
        self.scripts = tuple(script for script in scripts if script is not None)
        self.main = main[1:] - 1

    def __len__(self) -> int:
        return len(self.texts)


class PairColumns:
    """Which rule each pair of a batch fails first, and which pairs the object path judges.

    Args:
        batch: The pairs and their lines' figures.
        options: The prefilter's limits and rules.
        sides: Each of the batch's groups' sides (``Batch.groups``).
        checked: Whether the language check follows the rules.

    Attributes:
        reason: Per pair, the reason of the first rule it fails; "" for none.
        drops: Per pair, which of its lines, pivot and candidate, the reason drops.
        ratio: Per pair, whether its length-ratio figure counts (it passed
            the rules on the pair as a whole).
        scripted: Per pair, whether the script rule read its lines.
        fallback: Per pair, left to the object path: it waits on the run.
        open: Per pair, neither dropped nor left: kept, but for the language check.
        lengths: The pivots' and the candidates' lengths in words.
    """

    def __init__(
        self, batch: Batch, options: PrefilterOptions, sides: list[GroupSides], checked: bool
    ) -> None:
        n = len(batch)
        self.batch, self.sides = batch, sides
        self.reason = np.full(n, "", dtype=object)
        self.drops = np.zeros((2, n), dtype=bool)
        self.fallback = np.zeros(n, dtype=bool)
        self.scripted = np.zeros(n, dtype=bool)
        self.open = np.ones(n, dtype=bool)
        words = np.asarray(batch.figures.words, dtype=np.float64)
        self.lengths = words[batch.rows[0]], words[batch.rows[1]]
        self._pair_rules(options)
        self.ratio = self.open.copy()
        self._length_rule(options.max_length_ratio)
        if options.sentence_count_filter:
            self._sentence_count()
        rules = options.junk_rules
        if len(set(rules)) < len(rules):
            self._wait(self.open)  # a rule named twice is applied twice, pair by pair
        for name in rules:
            self._junk_rule(name)
        if checked:
            self._untrained()

    def _settle(self, reason: str, pivot_fails: np.ndarray, candidate_fails: np.ndarray) -> None:
        """A rule's drop of the open pairs that fail it, of the lines that fail it."""
        hit = self.open & (pivot_fails | candidate_fails)
        self.reason[hit] = reason
        self.drops[0, hit] = pivot_fails[hit]
        self.drops[1, hit] = candidate_fails[hit]
        self.open &= ~hit

    def _wait(self, waits: np.ndarray) -> None:
        """The open pairs of ``waits`` go to the object path."""
        self.fallback |= self.open & waits
        self.open &= ~waits

    def _pair_rules(self, options: PrefilterOptions) -> None:
        """The rules on the pair that need nothing of the run (``pair_judge._pair_reason``)."""
        batch = self.batch
        pivot_rows, candidate_rows = batch.rows
        empty = np.fromiter(map(len, batch.lines), np.int64, len(batch.lines)) == 0
        keys = np.empty(len(batch.lines), dtype=object)
        keys[:] = batch.figures.keys
        shorter = np.minimum(*self.lengths)
        longer = np.maximum(*self.lengths)
        for reason, fails in (
            ("empty", empty[pivot_rows] | empty[candidate_rows]),
            ("untranslated", keys[pivot_rows] == keys[candidate_rows]),
            ("too_short", shorter < options.min_words),
            ("too_long", longer > options.max_words),
        ):
            self._settle(reason, fails, fails)

    def _length_rule(self, max_length_ratio: float) -> None:
        """A pair outside the fixed length band waits for its side's (``PairStep.length_rule``)."""
        pivot_words, words = self.lengths
        ratio = (words + 1) / (pivot_words + 1)
        low, high = fixed_band(max_length_ratio)
        self._wait(~((low <= ratio) & (ratio <= high)))

    def _sentence_count(self) -> None:
        """Pairs whose sides punkt splits into different numbers of sentences."""
        counts: dict[tuple[str, str], int] = {}
        fails = np.zeros(len(self.batch), dtype=bool)
        for i in np.flatnonzero(self.open).tolist():
            found = []
            for text, lang in zip(self.batch.texts[i], self.batch.langs[i], strict=True):
                if (text, lang) not in counts:
                    counts[text, lang] = sentence_count(text, lang)
                found.append(counts[text, lang])
            fails[i] = found[0] != found[1]
        self._settle("sentence_count_mismatch", fails, fails)

    def _junk_rule(self, name: str) -> None:
        """A junk rule (``junk.failures``): on the pair, on each line, or the script rule."""
        rule = RULES[name]
        if rule.pair is not None:
            fails = np.zeros(len(self.batch), dtype=bool)
            for i in np.flatnonzero(self.open).tolist():
                fails[i] = rule.pair(*self.batch.texts[i])
            self._settle(rule.reason, fails, fails)
        elif rule.line is None and rule.share is None:
            self._script_rule(rule.reason)
        else:
            found = np.asarray(self.batch.verdicts[name], dtype=bool)
            pivot_rows, candidate_rows = self.batch.rows
            self._settle(rule.reason, found[pivot_rows], found[candidate_rows])

    def _script_rule(self, reason: str) -> None:
        """The script rule (``PairStep.script_rule``): letters against their side's scripts.

        A line fails in a script its side's user did not name; a pair with a
        line outside the scripts the tables know waits for the side's
        decided scripts.
        """
        batch = self.batch
        n = len(batch)
        self.scripted = self.open.copy()
        failed = np.zeros((2, n), dtype=bool)
        outside = np.zeros((2, n), dtype=bool)
        shares: dict[frozenset[str], np.ndarray] = {}

        def share(scripts: frozenset[str]) -> np.ndarray:
            if scripts not in shares:
                shares[scripts] = np.asarray(batch.figures.script_shares(scripts))
            return shares[scripts]

        for g, group_sides in enumerate(self.sides):
            members = batch.group == g
            for which, side in enumerate(group_sides):
                rows = batch.rows[which]
                read = members & (batch.main[rows] >= 0)
                if side.named is not None:
                    failed[which] |= read & (share(side.named)[rows] < side.min_script_share)
                elif side.known_all is None:
                    outside[which] |= read
                else:
                    outside[which] |= read & (share(side.known_all)[rows] < side.min_script_share)
        self._wait(outside[0] | outside[1])
        self._settle(reason, failed[0], failed[1])

    def _untrained(self) -> None:
        """Pairs with a line in a script its language's detector was not trained on: noted."""
        batch = self.batch
        for g, group_sides in enumerate(self.sides):
            for which, side in enumerate(group_sides):
                if side.untrained:
                    codes = [i for i, code in enumerate(batch.scripts) if code in side.untrained]
                    main = batch.main[batch.rows[which]]
                    self._wait((batch.group == g) & np.isin(main, codes))
