"""pipelines/stages/cut/calibrate_threshold.py: the sample, its vectors, the calibrated cut."""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.encoders.inference.handler import EncoderHandler
from paramine.pipelines.formats import Shard
from paramine.pipelines.stages.cut.calibrate_threshold import (
    CalibrateThreshold,
    CalibrationSample,
    EmbedSample,
    SummarizeScores,
    sample_texts,
)
from paramine.pipelines.stages.cut.rules.cuts import (
    FALLBACK_THRESHOLD,
    MIN_MISMATCHED,
    CalibrationOptions,
    sample_rank,
    shift_count,
)
from paramine.pipelines.stages.filter.prefilter import Prefilter
from paramine.pipelines.stages.score.encode_texts import EncodeTexts
from paramine.pipelines.stages.score.score_pairs import ScorePairs
from paramine.schemas.errors import UsageError
from paramine.schemas.records import AlignedPair, ScoredPair

from tests.pipelines.stages.cut.rules.test_cuts import mismatched_pairs


def pair(pivot: str, candidate: str, line: int = 1) -> AlignedPair:
    return AlignedPair(pivot, candidate, "en", "pl", "test", "mem://shard", line)


# --- the transforms, with the tiny model --------------------------------------


def corpus_pairs(n: int) -> list[AlignedPair]:
    words = ["kot", "pies", "dom", "las", "rzeka", "miasto", "okno", "drzwi", "stół", "ptak"]
    return [
        # 12 pivots with 3-4 translations each: some shifts hit true matches.
        pair(f"the dog number {i % 12}.", f"zdanie {words[i % 10]} {i}", i + 1)
        for i in range(n)
    ]


class EmbeddedSample(beam.PTransform):
    """The calibration sample as the mine pipeline makes it: sampled, encoded, joined back."""

    def __init__(self, handler: EncoderHandler, sample_size: int) -> None:
        super().__init__()
        self.handler = handler
        self.sample_size = sample_size

    def expand(self, pairs: beam.PCollection) -> beam.PCollection:
        sample = pairs | "Sample" >> CalibrationSample(
            CalibrationOptions(sample_size=self.sample_size)
        )
        vectors = (
            sample | "Texts" >> beam.FlatMap(sample_texts) | "Encode" >> EncodeTexts(self.handler)
        )
        return (
            sample
            | "Pairs" >> beam.FlatMap(lambda pairs: pairs)
            | "Score" >> ScorePairs(vectors, keep_vectors=True)
            | "Embed" >> EmbedSample()
        )


@pytest.mark.pipeline
def test_calibrate_threshold_is_deterministic_and_the_quantile(tiny_model_dir: Path) -> None:
    pairs = corpus_pairs(40)
    handler = EncoderHandler(str(tiny_model_dir))

    # Directly: the 30 smallest hashes in hash order, every shift, the tiny model.
    from sentence_transformers import SentenceTransformer

    sample = sorted(pairs, key=sample_rank)[:30]
    model = SentenceTransformer(str(tiny_model_dir), device="cpu")
    shifted = [m for s in range(1, shift_count(30, 5) + 1) for m in mismatched_pairs(sample, s)]
    texts = sorted({t for m in shifted for t in (m.pivot, m.candidate)})
    vectors = dict(zip(texts, model.encode(texts, normalize_embeddings=True), strict=True))
    direct = [float(vectors[m.pivot] @ vectors[m.candidate]) for m in shifted]
    expected = float(np.quantile(direct, 1 - 0.05, method="higher"))

    # Twice, in opposite input orders: the sample and the cut must not change.
    for order in (pairs, pairs[::-1]):
        with TestPipeline(runner="FnApiRunner") as p:
            out = (
                p
                | beam.Create(order)
                | EmbeddedSample(handler, sample_size=30)
                | CalibrateThreshold(CalibrationOptions(max_false_accept=0.05), max_shifts=5)
            )
            got = out | beam.Map(lambda cut: (cut.value, cut.sample, cut.shifts))
            assert_that(got, lambda got, e=expected: _check_cut(got, e))
    # Some shifted pairs were true matches (same pivot key) and were skipped.
    assert MIN_MISMATCHED <= len(direct) < 30 * 5


def _check_cut(got: list[tuple[float, int, int]], expected: float) -> None:
    assert len(got) == 1
    value, sample, shifts = got[0]
    assert value == pytest.approx(expected, abs=1e-5)
    assert (sample, shifts) == (30, 5)


@pytest.mark.pipeline
def test_the_sample_of_entries_is_the_sample_of_their_records() -> None:
    pairs = [*corpus_pairs(60), pair("Yes.", "Tak.", 61), pair("Yes.", "Tak.", 62)]
    expected = sorted(set(pairs), key=sample_rank)
    with TestPipeline(runner="FnApiRunner") as p:
        prefilter = Prefilter(shards=[Shard("tsv", "mem://shard", "test", "en", "pl")])
        prefiltered = p | beam.Create(pairs) | prefilter
        twenty = CalibrationOptions(sample_size=20)
        from_records = prefiltered.kept | "FromRecords" >> CalibrationSample(twenty)
        from_entries = prefiltered.entries | "FromEntries" >> CalibrationSample(
            twenty, prefilter.origins
        )
        # The duplicate "Yes." / "Tak." is the first one, line 61, either way.
        first = [kept for kept in expected if kept.line != 62][:20]
        assert_that(from_records, equal_to([first]), label="Records")
        assert_that(from_entries, equal_to([first]), label="Entries")


@pytest.mark.pipeline
def test_calibrate_threshold_records_the_fallback(tiny_model_dir: Path) -> None:
    handler = EncoderHandler(str(tiny_model_dir))
    with TestPipeline(runner="FnApiRunner") as p:
        sample = p | beam.Create(corpus_pairs(5)) | EmbeddedSample(handler, sample_size=100)
        out = sample | CalibrateThreshold()
        assert_that(
            out | beam.Map(lambda cut: (cut.value, cut.fallback is not None, cut.sample)),
            equal_to([(FALLBACK_THRESHOLD, True, 5)]),
        )


def test_calibrate_threshold_rejects_bad_settings() -> None:
    with pytest.raises(UsageError, match=r"^--max-false-accept 1.0 is not a share in \(0, 1\)$"):
        CalibrateThreshold(CalibrationOptions(max_false_accept=1.0))
    with pytest.raises(UsageError, match=r"^--calibration-sample 0 is not a positive integer$"):
        CalibrationSample(CalibrationOptions(sample_size=0))
    with pytest.raises(ValueError, match="max_shifts must be positive"):
        CalibrateThreshold(max_shifts=0)


@pytest.mark.pipeline
def test_summarize_scores() -> None:
    scored = [ScoredPair(pair("A.", "a"), i / 100) for i in range(101)]
    with TestPipeline(runner="FnApiRunner") as p:
        out = p | beam.Create(scored) | SummarizeScores()
        assert_that(
            out | beam.Map(lambda s: (s["n"], s["mean"], s["q50"], s["q98"])),
            equal_to([(101, 0.5, 0.5, 0.98)]),
        )


@pytest.mark.pipeline
def test_a_tiny_input_warns_that_its_cut_is_unreliable(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Defect 12: on 9 good pairs the auto cut silently dropped 6 of them.
    from paramine.pipelines.run.mine import run
    from paramine.pipelines.stages.cut.rules.cuts import MIN_TRUSTED_SAMPLE, small_sample_warning

    assert small_sample_warning(MIN_TRUSTED_SAMPLE) is None
    assert "--threshold 0.85" in (small_sample_warning(9) or "")
    tsv = tmp_path / "tiny.tsv"
    tsv.write_text(
        "".join(f"Sentence {i} is here.\tZdanie {i} jest tu.\n" for i in range(9)),
        encoding="utf-8",
    )
    manifest = run([str(tsv), "--output", str(tmp_path / "o"), "--model", str(tiny_model_dir)])
    assert "only 9 pairs" in manifest.threshold["warning"]
    assert (
        "paramine: warning: --threshold auto calibrated on only 9 pairs" in capsys.readouterr().err
    )
