"""ReadAndPrefilter: what the reader yields reaches the Prefilter and the books as it is."""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
from apache_beam.pipeline import PipelineVisitor
from paramine.pipelines.formats import Shard
from paramine.pipelines.mining.read_and_prefilter import ReadAndPrefilter
from paramine.pipelines.settings.mining import MiningSettings


class _Consumers(PipelineVisitor):
    """Every ParDo's DoFn, by the PCollection it takes."""

    def __init__(self) -> None:
        self.fns: dict[str, list[tuple[beam.PCollection, beam.DoFn]]] = {}

    def visit_transform(self, applied: beam.pipeline.AppliedPTransform) -> None:
        if isinstance(applied.transform, beam.ParDo) and applied.main_inputs:
            taken = next(iter(applied.main_inputs.values()))
            self.fns.setdefault(applied.full_label, []).append((taken, applied.transform.fn))


def test_the_reader_s_rows_pass_whole_to_the_prefilter_and_both_counts(tmp_path: Path) -> None:
    # The runner hands a batch on without taking it apart only where the
    # consumer's converter equals the producer's (element type and batch type).
    shard = Shard("tsv", str(tmp_path / "t.tsv"), "test", "en", "pl")
    pipeline = beam.Pipeline(runner="FnApiRunner")
    clean = pipeline | ReadAndPrefilter(MiningSettings(input_format="tsv"), [shard])
    visitor = _Consumers()
    pipeline.visit(visitor)
    reader = next(
        fn for fns in visitor.fns.values() for _, fn in fns if type(fn).__name__ == "_ReadShardFn"
    )
    readers_out = reader.output_batch_converter
    consumers = {
        label: fn
        for label, fns in visitor.fns.items()
        for taken, fn in fns
        if taken is clean.read.kept
    }
    wanted = ("Prefilter/NormalizeAndFilter", "CountReadBitext/CountKept", "CountPrefilter/CountIn")
    assert sorted(consumers) == sorted(
        next(label for label in consumers if step in label) for step in wanted
    ), list(consumers)
    for label, fn in consumers.items():
        assert fn.input_batch_converter == readers_out, label
