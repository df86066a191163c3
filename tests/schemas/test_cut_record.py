"""schemas/cut_record.py: the manifest's ``threshold`` read as a typed record, of any layout."""

from __future__ import annotations

import json

import pytest
from paramine.schemas.cut_record import (
    CoherenceRecord,
    CutRecord,
    HardNegativeRecord,
    SupportRecord,
)
from paramine.schemas.manifest import Manifest

#: A calibrated margin cut as paramine mine writes it (abridged from a Tatoeba eng-pol run).
CALIBRATED = {
    "value": 0.976126,
    "mode": "auto",
    "score": "margin",
    "margin_k": 8,
    "max_false_accept": 0.02,
    "mismatched_kept": 0.02,
    "aligned_sample_kept": 0.993,
    "sample": 1000,
    "shifts": 100,
    "aligned": {"n": 320, "mean": 1.0506},
    "aligned_sample": {"n": 1000, "mean": 1.0597},
    "mismatched": {"n": 100000, "mean": 0.919, "q50": 0.9188},
    "mismatched_percentiles": [0.8, 0.9, 1.0],
    "histograms": {"edges": [0.8, 0.9], "mismatched": [4]},
    "borderline": {"above": [], "below": []},
    "coherence": {"null_pairs": 99900, "value": 0.891468},
    "support": {"value": 0.917015, "floor": 0.954454},
}


def test_every_key_of_a_calibrated_cut_is_an_attribute() -> None:
    cut = CutRecord.read(CALIBRATED)
    assert (cut.value, cut.mode, cut.score, cut.margin_k) == (0.976126, "auto", "margin", 8)
    assert (cut.max_false_accept, cut.mismatched_kept, cut.aligned_sample_kept) == (
        0.02,
        0.02,
        0.993,
    )
    assert (cut.sample, cut.shifts, cut.fallback, cut.warning) == (1000, 100, None, None)
    assert set(cut.summaries) == {"aligned", "aligned_sample", "mismatched"}
    assert cut.null == CALIBRATED["mismatched"] and cut.calibrated
    assert cut.mismatched_percentiles == (0.8, 0.9, 1.0)
    assert cut.histograms == CALIBRATED["histograms"] and cut.borderline == CALIBRATED["borderline"]
    assert cut.coherence == CoherenceRecord(value=0.891468, null_pairs=99900)
    assert cut.support == SupportRecord(value=0.917015, floor=0.954454)
    assert cut.hard_negative is None
    assert cut.record == CALIBRATED  # passed on whole where a card shows it


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        # A fixed --threshold: nothing calibrated.
        ({"mode": "fixed", "value": 0.0, "score": "cosine"}, (0.0, "fixed", "cosine", {})),
        # A record older than the score key: cosine, as those runs cut.
        ({"mode": "auto", "value": 1}, (1.0, "auto", "cosine", {})),
        # --threshold none: no cut.
        ({"mode": "fixed", "value": None}, (None, "fixed", "cosine", {})),
    ],
)
def test_older_and_smaller_records_read_with_what_they_lack_empty(
    record: dict, expected: tuple
) -> None:
    cut = CutRecord.read(record)
    assert (cut.value, cut.mode, cut.score, dict(cut.summaries)) == expected
    assert cut.null == {} and cut.mismatched_percentiles == () and cut.margin_k is None
    assert not cut.calibrated or record["mode"] == "auto"


def test_a_manifest_gives_its_threshold_as_a_cut_and_writes_the_record_unchanged() -> None:
    manifest = Manifest(
        created_at="2026-12-02T00:00:00+00:00",
        code_version="paramine test",
        options={},
        model={},
        threshold=CALIBRATED,
        inputs=[],
        counts={},
        files={},
        rows={"pairs": 0},
    )
    again = Manifest.from_json(manifest.to_json())
    assert json.loads(manifest.to_json())["threshold"] == CALIBRATED  # the layout is unchanged
    assert again.cut == manifest.cut == CutRecord.read(CALIBRATED)
    assert again.cut.value == 0.976126


@pytest.mark.parametrize(
    "record",
    [
        CALIBRATED,
        {"mode": "fixed", "value": 0.0, "score": "cosine"},
        {"mode": "fixed", "value": None, "score": "cosine"},
        {
            "mode": "auto",
            "max_false_accept": 0.02,
            "mismatched": {"n": 12},
            "aligned_sample": {"n": 4},
            "value": 0.8,
            "fallback": "only 12 mismatched pairs (< 50) to calibrate on; used 0.8",
            "warning": "only 4 pairs",
            "score": "cosine",
            "histograms": {},
            "borderline": {"above": [], "below": []},
            "sample": 4,
            "shifts": 3,
            "aligned": {"n": 0},
            "hard_negative": {"value": 0.31},
        },
    ],
)
def test_a_record_written_as_json_reads_back_the_same(record: dict) -> None:
    cut = CutRecord.read(record)
    assert cut.to_json() == record
    assert CutRecord.read(json.loads(json.dumps(cut.to_json()))) == cut


def test_the_group_checks_cuts_read_typed_and_write_the_keys_they_had() -> None:
    support = {
        "floor": 0.95,
        "floor_false_accept": 0.1,
        "value": None,
        "false_accept": 0.002,
        "null_pairs": 10,
    }
    assert SupportRecord.read(support) == SupportRecord(None, 0.95, 0.1, 0.002, 10)
    assert SupportRecord.read(support).to_json() == support  # floor first, as written
    # A check too small to cut keeps its "value": null.
    hard = {"value": None, "hard_negatives": 3, "accept": 0.02}
    assert HardNegativeRecord.read(hard).to_json() == hard
    assert CoherenceRecord.read(None) is None
    # A key a later paramine adds is left out, not an error.
    assert CoherenceRecord.read({"value": 0.5, "new": 1}) == CoherenceRecord(value=0.5)
