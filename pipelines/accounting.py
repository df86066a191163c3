"""How stages report what they keep and drop, so that the books balance.

Every stage's DoFn emits its kept records on the main output and
``(reason, n)`` on the ``dropped`` output (n > 1 where one decision drops many
records, such as the duplicates of a pair). Each drop also increments a Beam
counter ``<stage>.<reason>`` for runner UIs. ``CountStage`` folds both into
``(stage, key, n)`` rows that the manifest gathers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.metrics import Metrics

DROPPED = "dropped"
IN = "in"
KEPT = "kept"
REPAIRS = "repairs"


class StageResult(NamedTuple):
    """What a stage keeps, and ``(reason, n)`` for what it drops."""

    kept: beam.PCollection
    dropped: beam.PCollection


class Dropper:
    """Emits drops of one stage and counts them in Beam metrics."""

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self._counters: dict[str, object] = {}

    def __call__(self, reason: str, n: int = 1) -> pvalue.TaggedOutput:
        """Return the tagged output for ``n`` records dropped for ``reason``."""
        counter = self._counters.get(reason)
        if counter is None:
            counter = Metrics.counter("paramine", f"{self.stage}.{reason}")
            self._counters[reason] = counter
        counter.inc(n)  # type: ignore[attr-defined]
        return pvalue.TaggedOutput(DROPPED, (reason, n))

    def __getstate__(self) -> dict:
        # Counters are per worker; they are made again after unpickling.
        return {"stage": self.stage, "_counters": {}}


class CountStage(beam.PTransform):
    """Turns a stage's input, kept and dropped collections into count rows.

    Args:
        stage: The stage's name in the manifest (``read``, ``prefilter``...).
        taken_in: The stage's input, counted on its own so that a stage that
            loses records breaks the identity; ``None`` for the first stage.
        weight: How many input records one kept element stands for (a group
            of candidates stands for its candidates); 1 by default.
    """

    def __init__(
        self,
        stage: str,
        taken_in: beam.PCollection | None = None,
        weight: Callable[[Any], int] | None = None,
    ) -> None:
        super().__init__()
        self.stage = stage
        self.taken_in = taken_in
        self.weight = weight

    def expand(self, result: StageResult) -> beam.PCollection:
        stage = self.stage
        if self.weight is None:
            kept_n = result.kept | "CountKept" >> beam.combiners.Count.Globally()
        else:
            kept_n = (
                result.kept
                | "WeighKept" >> beam.Map(self.weight)
                | "CountKept" >> beam.CombineGlobally(sum)
            )
        kept = kept_n | "TagKept" >> beam.Map(lambda n: (stage, KEPT, n))
        dropped = (
            result.dropped
            | "SumDropped" >> beam.CombinePerKey(sum)
            | "TagDropped" >> beam.Map(lambda kv: (stage, kv[0], kv[1]))
        )
        rows = [kept, dropped]
        if self.taken_in is not None:
            rows.append(
                self.taken_in
                | "CountIn" >> beam.combiners.Count.Globally()
                | "TagIn" >> beam.Map(lambda n: (stage, IN, n))
            )
        return rows | "Rows" >> beam.Flatten()


def counts_from_rows(rows: list[tuple[str, str, int]]) -> dict[str, dict]:
    """Fold ``(stage, key, n)`` rows into the manifest's per-stage counts.

    Rows of the ``repairs`` pseudo-stage (records kept after a repair, such as
    invalid UTF-8 replaced) become a flat ``{reason: n}`` under ``repairs``:
    repaired records are kept and counted by their stage, so they are no
    part of any ledger.
    """
    counts: dict[str, dict] = {}
    repairs: dict[str, int] = {}
    for stage, key, n in rows:
        if stage == REPAIRS:
            repairs[key] = repairs.get(key, 0) + n
            continue
        entry = counts.setdefault(stage, {KEPT: 0, DROPPED: {}})
        if key in (KEPT, IN):
            entry[key] = entry.get(key, 0) + n
        else:
            entry[DROPPED][key] = entry[DROPPED].get(key, 0) + n
    for entry in counts.values():
        entry.setdefault(IN, entry[KEPT] + sum(entry[DROPPED].values()))
        entry[DROPPED] = dict(sorted(entry[DROPPED].items()))
    counts[REPAIRS] = dict(sorted(repairs.items()))
    return counts
