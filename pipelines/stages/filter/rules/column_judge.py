"""ColumnJudge: ``PairJudge`` over a batch's columns, verdicts built once per distinct part.

The rules run as columns (``stages.filter.rules.pair_columns``); what is left
per pair is its verdict. Most pairs of a batch are kept and share one of a
few figure tuples (their sides' lines, a length-ratio bin, two main scripts,
whether the detector judged each line), so each distinct tuple is built once
and shared (``PairJudge.shared``), and a kept pair's own part, its kept
tuple, is all that is made per pair. A dropped pair's verdict is made from
its columns. A pair the columns leave (``PairColumns.fallback``: it waits on
the run, or holds a line the detector cannot judge in its script), and one
the language check finds evidence against, goes the object path
(``PairJudge.rules``, ``pair_judge.PairStep``) on the same batch's figures:
its verdict is the object path's own. The language check judges the same
lines in the same order as the object path's (``PairJudge._languages``):
the candidates of every pair the rules left, then their pivots, one batch
each.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
from paramine.pipelines.core.groups import pivot_language
from paramine.pipelines.stages.filter.rules.language_id import Evidence
from paramine.pipelines.stages.filter.rules.line_checks import SCRIPT
from paramine.pipelines.stages.filter.rules.pair_columns import Batch, GroupSides, PairColumns
from paramine.pipelines.stages.filter.rules.pair_judge import PairJudge, PairStep
from paramine.pipelines.stages.filter.rules.verdict import (
    SHARED_SIZE,
    Verdict,
    dropped,
    ratio_figure,
    side_figure,
)


class ColumnJudge(PairJudge):
    """The prefilter's judge: ``PairJudge``'s verdicts, the rules applied over columns."""

    def judge(self, pairs: Sequence[tuple[str, str, str, str]]) -> list[Verdict]:
        """The verdicts of ``(pivot, candidate, pivot_lang, lang)`` pairs, texts not yet normalized.

        Those ``PairJudge.judge`` gives, pair for pair.
        """
        batch = Batch(pairs, self.options)
        sides = [(self.side("pivot", p), self.side("candidate", c)) for p, c in batch.groups]
        columns = PairColumns(batch, self.options, sides, checked=self.detector is not None)
        steps = {i: _step(self, batch, i) for i in np.flatnonzero(columns.fallback).tolist()}
        judged = np.zeros((2, len(batch)), dtype=bool)
        if self.detector is not None:
            _languages(self, batch, columns.open, steps, judged)
        notes = [self.language_notes(p) + self.language_notes(c) for p, c in batch.groups]
        for i, step in steps.items():
            first = notes[batch.group[i]]
            if first and not step.reason:
                step.notes[:0] = first
        shared = self.shared
        if len(shared) > SHARED_SIZE:
            shared.clear()
        settled = _Settled(batch, columns, sides, judged)
        verdicts = settled.kept([tuple(dict.fromkeys(first)) for first in notes], shared)
        for i in np.flatnonzero(columns.reason != "").tolist():
            verdicts[i] = settled.dropped(i, shared)
        for i, step in steps.items():
            verdicts[i] = step.verdict(shared)
        return verdicts


def _step(judge: PairJudge, batch: Batch, i: int) -> PairStep:
    """Pair ``i`` on the object path: its rules pair by pair."""
    pivot, candidate = batch.texts[i]
    rows = (int(batch.rows[0][i]), int(batch.rows[1][i]))
    return judge.rules(pivot, candidate, rows, batch.figures, batch.verdicts, batch.langs[i])


class _Settled:
    """The verdicts of the pairs the columns settle, from their columns.

    Args:
        batch: The pairs and their lines' figures.
        columns: The rules' columns.
        sides: The sides of each of the batch's groups.
        judged: Per side (pivot, candidate), the pairs whose line the detector judged.
    """

    def __init__(
        self, batch: Batch, columns: PairColumns, sides: list[GroupSides], judged: np.ndarray
    ) -> None:
        self.batch, self.columns, self.sides, self.judged = batch, columns, sides, judged

    def figures(self, i: int) -> tuple[str, ...]:
        """Pair ``i``'s figures: its lines, its length ratio, its lines' scripts, its judged lines.

        As ``PairStep`` counts them: the length ratio of a pair that passed the
        rules on the pair, the scripts where it reached the script rule.
        """
        batch, columns = self.batch, self.columns
        g = int(batch.group[i])
        pivot_side, side = group_sides = self.sides[g]
        figures = [pivot_side.lines, side.lines]
        if columns.ratio[i]:
            pivot_words, words = (float(lengths[i]) for lengths in columns.lengths)
            figures.append(ratio_figure(side.key, batch.groups[g][0], pivot_words, words))
        if columns.scripted[i]:
            for line_side, rows in zip(group_sides, batch.rows, strict=True):
                main = int(batch.main[rows[i]])
                if main >= 0:
                    script = batch.scripts[main]
                    figures += (line_side.scripted, side_figure(line_side.key, SCRIPT, script))
        # The detector judges the candidates first (``PairJudge._languages``).
        judged = ((side, self.judged[1, i]), (pivot_side, self.judged[0, i]))
        figures += [line_side.judged for line_side, on in judged if on]
        return tuple(figures)

    def signatures(self, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each of ``pairs``' signature, and a pair of each: pairs of one signature share figures.

        A signature is what ``figures`` reads: the group, whether the ratio
        counts, both lengths, both main scripts (-2 where the script rule did
        not read them), both judgments.

        Returns:
            Per pair its signature's index, and per signature a pair of it.
        """
        batch, columns = self.batch, self.columns
        mains = [
            np.where(columns.scripted[pairs], batch.main[rows[pairs]], -2) for rows in batch.rows
        ]
        found = np.stack(
            [
                batch.group[pairs],
                columns.ratio[pairs],
                *(lengths[pairs] for lengths in columns.lengths),
                *mains,
                *self.judged[:, pairs],
            ]
        ).astype(np.float64)
        # np.unique(axis=0) sorts rows as structured records: ten times lexsort's cost.
        order = np.lexsort(found)
        ordered = found[:, order]
        new = np.ones(len(pairs), dtype=bool)
        new[1:] = (ordered[:, 1:] != ordered[:, :-1]).any(axis=0)
        signature = np.empty(len(pairs), dtype=np.int64)
        signature[order] = np.cumsum(new) - 1
        return signature, pairs[order[new]]

    def kept(self, notes: list[tuple[str, ...]], shared: dict) -> list[Verdict]:
        """The batch's verdicts, the open pairs' kept ones filled in (the others are placeholders).

        One figure tuple per distinct signature; ``notes``: each group's notes of a kept pair.
        """
        batch = self.batch
        verdicts = [Verdict()] * len(batch)
        kept = np.flatnonzero(self.columns.open)
        if not len(kept):
            return verdicts
        signature, representatives = self.signatures(kept)
        parts = []
        for i in representatives.tolist():
            found = self.figures(i)
            parts.append(shared.setdefault(found, found))
        languages = [pivot_language(pivot_lang) for pivot_lang, _ in batch.groups]
        group = batch.group.tolist()
        texts = batch.texts
        for i, j in zip(kept.tolist(), signature.tolist(), strict=True):
            g = group[i]
            verdicts[i] = Verdict("", (), (*texts[i], languages[g]), None, notes[g], parts[j])
        return verdicts

    def dropped(self, i: int, shared: dict) -> Verdict:
        """Pair ``i``'s verdict, dropped by the columns' reason, of the lines that fail it."""
        found = self.figures(i)
        sides = zip(self.sides[self.batch.group[i]], self.columns.drops[:, i], strict=True)
        keys = tuple(side.key for side, fails in sides if fails)
        return dropped(self.columns.reason[i], keys, shared.setdefault(found, found), shared)


def _languages(
    judge: PairJudge,
    batch: Batch,
    open_: np.ndarray,
    steps: dict[int, PairStep],
    judged: np.ndarray,
) -> None:
    """The language check of the pairs the rules left: ``PairJudge._languages``'s lines, in order.

    The candidates of the open pairs (``open_``) and of the steps that are
    not settled, in pair order, in one batch; then their pivots. An open
    pair the detector finds evidence against leaves for ``steps`` (the
    object path from there on); the others' judged lines are marked in
    ``judged``, per side (pivot, candidate).
    """
    detector = judge.detector
    assert detector is not None
    shared = judge.shared
    earlier: tuple[list[int], list[Evidence | None]] = ([], [])
    for which in (1, 0):
        asked = {}
        for i, waiting in steps.items():
            if not (waiting.reason or waiting.after or (which == 0 and waiting.strong_candidate)):
                line = waiting.line_to_judge(which)  # None: noted, not the detector's
                if line is not None:
                    asked[i] = line
        order = sorted([*np.flatnonzero(open_).tolist(), *asked])
        lines = [asked.get(i) or (batch.texts[i][which], batch.langs[i][which]) for i in order]
        found = detector.judge_many(lines)
        judged[which, order] = [evidence is not None for evidence in found]
        judged[which, list(asked)] = False
        against = [k for k, e in enumerate(found) if e is not None and (e.strong or e.weak)]
        # ``order`` is sorted: a pair's place in it by bisection.
        for k in sorted({*against, *(bisect.bisect_left(order, i) for i in asked)}):
            i = order[k]
            step = steps.get(i)
            if step is None:
                step = steps[i] = _step(judge, batch, i)
                open_[i] = False
                judged[:, i] = False
                if which == 0:
                    # An open pair's candidate was judged before it: replayed.
                    candidates, evidence = earlier
                    step.judged(1, evidence[bisect.bisect_left(candidates, i)], shared)
            step.judged(which, found[k], shared)
        earlier = order, found
