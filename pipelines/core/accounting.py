"""How stages report what they keep and drop, so that the books balance.

Every stage's DoFn emits its kept records on the main output and
``(reason, n)`` on the ``dropped`` output (n > 1 where one decision drops many
records, such as the duplicates of a pair). Each drop also increments a Beam
counter ``<stage>.<reason>`` for runner UIs. ``CountStage`` folds both into
``(stage, key, n)`` rows that the manifest gathers.

The books also tell a local run's progress what each stage let out: the
progress file's name is a pipeline option (``ProgressOptions``), read while
the graph is built and carried to the workers inside the DoFns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam import pvalue
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.utils.windowed_value import WindowedValue
from paramine.pipelines.core.batches import Rows
from paramine.pipelines.core.tap import tap_for
from paramine.pipelines.core.windows import in_global_window
from paramine.schemas.run_counts import (
    ENCODING,
    NOTES,
    TABLE,
    RunCounts,
    StageCounts,
)
from paramine.schemas.stages import Stage

DROPPED = "dropped"
IN = "in"
KEPT = "kept"


class ProgressOptions(PipelineOptions):
    """The pipeline option that names a local run's progress file."""

    @classmethod
    def _add_argparse_args(cls, parser: Any) -> None:
        parser.add_argument(
            "--paramine_progress_file",
            default="",
            help="File a local run's workers append their progress counts to; set by paramine",
        )


def progress_file(pipeline: Any) -> str:
    """The progress file a pipeline's options name; ``""`` when there is none.

    Read by the stages that count while the graph is built: the path then
    travels to the workers inside their DoFns.
    """
    options = getattr(pipeline, "options", None)
    if options is None:
        return ""
    return str(options.view_as(ProgressOptions).paramine_progress_file or "")


class StageResult(NamedTuple):
    """What a stage keeps, and ``(reason, n)`` for what it drops."""

    kept: beam.PCollection
    dropped: beam.PCollection


class Dropper:
    """Emits drops of one stage and counts them in Beam metrics.

    Only reasons the stage declared are accepted: a new reason is declared
    next to the code that drops for it, and the manifest learns it from there.
    """

    def __init__(self, stage: Stage) -> None:
        self.stage = stage
        self._counters: dict[str, object] = {}

    def __call__(self, reason: str, n: int = 1) -> pvalue.TaggedOutput:
        """Return the tagged output for ``n`` records dropped for ``reason``."""
        counter = self._counters.get(reason)
        if counter is None:
            self.stage.check_reason(reason)
            counter = Metrics.counter("paramine", f"{self.stage.name}.{reason}")
            self._counters[reason] = counter
        counter.inc(n)  # type: ignore[attr-defined]
        return pvalue.TaggedOutput(DROPPED, (reason, n))

    def __getstate__(self) -> dict:
        # Counters are per worker; they are made again after unpickling.
        return {"stage": self.stage, "_counters": {}}


class DropTally:
    """A stage's drops summed over a bundle: one ``(reason, n)`` per reason at the bundle's end.

    For a DoFn that drops a few records from each of very many elements
    (the duplicates of a pair, the pairs of a single-candidate pivot): a row
    per element would cost the counting combiner as much as the stage itself.
    The DoFn calls ``add`` as it goes and yields ``flush()`` from its
    ``finish_bundle``; the Beam counter is incremented at the flush.
    """

    def __init__(self, stage: Stage) -> None:
        self.drop = Dropper(stage)
        self._counts: dict[str, int] = {}

    def add(self, reason: str, n: int = 1) -> None:
        """Count ``n`` records dropped for ``reason``."""
        self._counts[reason] = self._counts.get(reason, 0) + n

    def flush(self) -> Iterator[pvalue.TaggedOutput]:
        """The bundle's drops as outputs for ``finish_bundle`` (global window)."""
        for reason, n in sorted(self._counts.items()):
            yield pvalue.TaggedOutput(DROPPED, in_global_window(self.drop(reason, n).value))
        self._counts.clear()

    def __getstate__(self) -> dict:
        return {"drop": self.drop, "_counts": {}}


class NoteTally:
    """A note's figures summed over a bundle: ``(note, key, n)`` count rows at the bundle's end.

    For a DoFn that notes something of many elements (lines a check could not
    judge): ``add`` as it goes, ``flush(tag)`` from ``finish_bundle``.
    """

    def __init__(self, note: str) -> None:
        if note not in NOTES:
            raise ValueError(f"{note!r} is not one of {NOTES}")
        self.note = note
        self._counts: dict[str, int] = {}

    def add(self, key: str, n: int = 1) -> None:
        """Count ``n`` for ``key``."""
        self._counts[key] = self._counts.get(key, 0) + n

    def flush(self, tag: str) -> Iterator[pvalue.TaggedOutput]:
        """The bundle's figures as count rows on the output ``tag`` (global window)."""
        for key, n in sorted(self._counts.items()):
            yield pvalue.TaggedOutput(tag, in_global_window((self.note, key, n)))
        self._counts.clear()

    def __getstate__(self) -> dict:
        return {"note": self.note, "_counts": {}}


class _CountOut(beam.DoFn):
    """Counts a bundle's elements into one ``(book, key, n)`` row, emitted at the bundle's end.

    A row per bundle, not a combine per count: every count is summed once, in
    ``GatherCounts``. The reader's ``Rows`` are counted whole (``core.batches``).
    A local run's progress hears what the stage let out every ``REPORT_EVERY``
    elements and at each bundle's end (a worker may stop after its last bundle).

    Args:
        book: The stage (or note) the row belongs to.
        key: The row's key (``kept``, ``in``, a note's figure).
        unit: What one element is, for the progress.
        progress: The local run's progress file the count is reported to;
            ``""`` for none (and for a stage's input, which the stage before it
            reported as its output).
        weight: How many records one element stands for; 1 without one.
    """

    REPORT_EVERY = 256

    def __init__(
        self,
        book: str,
        key: str,
        unit: str,
        progress: str = "",
        weight: Callable[[Any], int] | None = None,
    ) -> None:
        self.book = book
        self.key = key
        self.unit = unit
        self.progress = progress
        self.weight = weight
        self._n = self._unreported = 0

    def start_bundle(self) -> None:
        self._n = self._unreported = 0

    def process(self, element: Any) -> Iterator[int]:
        return self._add(1 if self.weight is None else self.weight(element))

    @beam.DoFn.yields_elements
    def process_batch(self, rows: Rows) -> Iterator[int]:
        return self._add(len(rows) if self.weight is None else sum(map(self.weight, rows)))

    def get_input_batch_type(self, input_element_type: Any) -> Any:
        return Rows  # the reader's, as they are; single elements stay single

    def _add(self, n: int) -> Iterator[int]:
        self._n += n
        if self.progress:
            self._unreported += n
            if self._unreported >= self.REPORT_EVERY:
                tap_for(self.progress).add_out(self.book, self.unit, self._unreported)
                self._unreported = 0
        return iter(())

    def finish_bundle(self) -> Iterator[WindowedValue]:
        if self.progress:
            tap = tap_for(self.progress)
            if self._unreported:
                tap.add_out(self.book, self.unit, self._unreported)
            tap.flush()
        yield in_global_window((self.book, self.key, self._n))


class _SumDrops(beam.DoFn):
    """Sums a stage's ``(reason, n)`` drops over a bundle into ``(stage, reason, n)`` rows."""

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self._counts: dict[str, int] = {}

    def start_bundle(self) -> None:
        self._counts = {}

    def process(self, dropped: tuple[str, int]) -> Iterator[int]:
        reason, n = dropped
        self._counts[reason] = self._counts.get(reason, 0) + n
        return iter(())

    def finish_bundle(self) -> Iterator[WindowedValue]:
        for reason, n in sorted(self._counts.items()):
            yield in_global_window((self.stage, reason, n))


class CountStage(beam.PTransform):
    """Turns a stage's input, kept and dropped collections into count rows.

    The rows are partial counts (one per bundle and key); ``GatherCounts``
    sums them, and ``counts_from_rows`` folds any list of them. Three DoFns
    a stage and no shuffle: a combine per count put 26 transforms and three
    shuffles into the graph for each stage's books, most of a small run's
    fixed cost.

    Args:
        stage: The stage whose books these are.
        taken_in: The stage's input, counted on its own so that a stage that
            loses records breaks the identity; ``None`` for the first stage.
        weight: How many input records one kept element stands for (a group
            of candidates stands for its candidates); 1 by default.
        in_weight: The same for an element of ``taken_in``.
    """

    def __init__(
        self,
        stage: Stage,
        taken_in: beam.PCollection | None = None,
        weight: Callable[[Any], int] | None = None,
        in_weight: Callable[[Any], int] | None = None,
    ) -> None:
        super().__init__()
        self.stage = stage
        self.taken_in = taken_in
        self.weight = weight
        self.in_weight = in_weight

    def expand(self, result: StageResult) -> beam.PCollection:
        stage, unit = self.stage.name, self.stage.unit
        progress = progress_file(result.kept.pipeline)
        rows = [
            result.kept
            | "CountKept"
            >> beam.ParDo(_CountOut(stage, KEPT, unit, progress=progress, weight=self.weight)),
            result.dropped | "SumDropped" >> beam.ParDo(_SumDrops(stage)),
        ]
        if self.taken_in is not None:
            rows.append(
                self.taken_in
                | "CountIn" >> beam.ParDo(_CountOut(stage, IN, unit, weight=self.in_weight))
            )
        return rows | "Rows" >> beam.Flatten()


class CountNote(beam.PTransform):
    """Counts a PCollection into ``(note, key, n)`` rows, such as texts encoded.

    Args:
        note: The pseudo-stage (``ENCODING``).
        key: The figure's name.
        unit: What one element is, for a local run's progress (``text``).
    """

    def __init__(self, note: str, key: str, unit: str = "record") -> None:
        super().__init__()
        if note not in NOTES:
            raise ValueError(f"{note!r} is not one of {NOTES}")
        self.note = note
        self.key = key
        self.unit = unit

    def expand(self, elements: beam.PCollection) -> beam.PCollection:
        progress = progress_file(elements.pipeline)
        counted = _CountOut(self.note, self.key, self.unit, progress=progress)
        return elements | "Count" >> beam.ParDo(counted)


class GatherCounts(beam.PTransform):
    """A run's count rows summed per ``(stage, key)``, every book opened at zero.

    Applied to a tuple of row PCollections (``CountStage``, ``CountNote``,
    repairs); one row per ``(stage, key)`` out. The count books emit a row
    per bundle, and an empty collection may have no bundle at all, so each
    stage's ``kept`` and each note's figure starts from a zero row: a stage
    that saw nothing still has its books.

    Args:
        stages: The stages whose books are in the rows.
        figures: The ``(note, key)`` figures counted by ``CountNote``.
    """

    def __init__(self, stages: Sequence[Stage], figures: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.opening = [(stage.name, KEPT, 0) for stage in stages]
        self.opening += [(note, key, 0) for note, key in figures]

    def expand(self, rows: tuple[beam.PCollection, ...]) -> beam.PCollection:
        opened = rows[0].pipeline | "Open" >> beam.Create(self.opening, reshuffle=False)
        return (
            (*rows, opened)
            | "Rows" >> beam.Flatten()
            | "ByKey" >> beam.Map(lambda row: ((row[0], row[1]), row[2]))
            | "Sum" >> beam.CombinePerKey(sum)
            | "Row" >> beam.Map(lambda kv: (*kv[0], kv[1]))
        )


def counts_from_rows(rows: list[tuple[str, str, int]]) -> RunCounts:
    """Fold ``(stage, key, n)`` rows into the run's typed counts (``Manifest.counts``).

    Rows of the pseudo-stages in ``NOTES`` become notes, a flat ``{key:
    n}``: the ``repairs`` (records kept after a repair, such as invalid UTF-8
    replaced; they are kept and counted by their stage, so they are no part
    of any ledger) and the ``encoding`` figures (texts encoded). Every other
    stage's rows become its books; ``in`` is kept + dropped where the stage
    does not count what it took in.
    """
    taken: dict[str, int] = {}
    kept: dict[str, int] = {}
    dropped: dict[str, dict[str, int]] = {}
    notes: dict[str, dict[str, int]] = {note: {} for note in NOTES}
    for stage, key, n in rows:
        if stage in notes:
            notes[stage][key] = notes[stage].get(key, 0) + n
            continue
        kept.setdefault(stage, 0)
        reasons = dropped.setdefault(stage, {})
        if key == KEPT:
            kept[stage] += n
        elif key == IN:
            taken[stage] = taken.get(stage, 0) + n
        else:
            reasons[key] = reasons.get(key, 0) + n
    stages = {
        stage: StageCounts(
            taken_in=taken.get(stage, kept[stage] + sum(reasons.values())),
            kept=kept[stage],
            dropped=dict(sorted(reasons.items())),
        )
        for stage, reasons in dropped.items()
    }
    # Every manifest has repairs and encoding; the refresh's table figures
    # appear where a refresh counted them.
    kept_notes = {
        note: dict(sorted(figures.items()))
        for note, figures in notes.items()
        if figures or note != TABLE
    }
    return RunCounts(stages=stages, notes=kept_notes)


def encoding_figures(counts: RunCounts, stages: Sequence[str]) -> dict[str, Any]:
    """What a run encoded, against what it read: the figures the summary prints.

    Args:
        counts: The run's counts.
        stages: The run's stage names in order; the first one reads.
    """
    first = counts.get(stages[0]) if stages else None
    read = first.taken_in if first is not None else 0
    texts = counts.note(ENCODING).get("texts_encoded", 0)
    # Dropped before anything is encoded: a pivot with one distinct candidate.
    single = counts.dropped("single_candidate", list(stages))
    return {
        "texts_encoded": texts,
        "texts_per_input_pair": round(texts / read, 4) if read else 0.0,
        "single_candidate_share": round(single / read, 4) if read else 0.0,
    }
