"""The manifest, its accounting check, and the schema helpers, as plain functions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paramine.schemas.dataset import (
    MAX_REJECTED_RECORD_CHARS,
    REJECTS_SCHEMA,
    reject_row,
    schema_version,
)
from paramine.schemas.manifest import (
    IncompleteDatasetError,
    Manifest,
    RunHeader,
    accounting_errors,
    code_version,
    read_manifest,
    stage_counts,
    write_manifest,
)
from paramine.schemas.reader import _join
from paramine.schemas.records import Rejected
from paramine.schemas.run_counts import RunCounts
from paramine.schemas.run_parts import InputRecord, ModelRecord, RunExtra


def balanced() -> dict:
    return {
        "ReadBitext": stage_counts(kept=10, dropped={"column_count": 2}),
        "Prefilter": stage_counts(kept=8, dropped={"empty": 2}, taken_in=10),
        "ThresholdFilter": stage_counts(kept=6, dropped={"below_threshold": 2}, taken_in=8),
        "GroupByPivot": stage_counts(kept=4, dropped={"singleton_group": 2}, taken_in=6),
        "PostFilter": stage_counts(kept=2, dropped={"near_equal": 1}, taken_in=3),
        "repairs": {"invalid_utf8_replaced": 1},
    }


def manifest(counts: dict) -> Manifest:
    return Manifest(
        created_at="2026-11-21T00:00:00+00:00",
        code_version="paramine test",
        options={},
        model={"id": "tiny"},
        threshold={"mode": "fixed", "value": 0.5},
        inputs=[],
        counts=counts,
        files={"pairs": [], "rejects": []},
        rows={"pairs": 2, "rejects": 2},
    )


def test_a_run_header_is_finished_into_the_runs_manifest(tmp_path: Path) -> None:
    header = RunHeader(
        options={"src_lang": "en"},
        model=ModelRecord(id="tiny"),
        inputs=(InputRecord(corpus="x"),),
        stages=[{"name": "ReadBitext"}],
        extra=RunExtra(runner="FnApiRunner", filters={"profile": "curated"}),
    )
    assert header.code_version == code_version() and header.code_version.startswith("paramine")
    assert header.created_at.endswith("+00:00")
    done = header.manifest(
        threshold={"mode": "fixed", "value": 0.5},
        counts=RunCounts.read(balanced()),
        files={"pairs": ["pairs/a.parquet"]},
        rows={"pairs": 2},
        rejects={"counted": {}, "written": {}},
        extra=RunExtra(encoding={"texts": 4}, runner="DirectRunner"),
    )
    assert (done.options, done.model, done.inputs, done.stages) == (
        header.options,
        header.model,
        header.inputs,
        header.stages,
    )
    assert (done.created_at, done.code_version) == (header.created_at, header.code_version)
    # The run's own extra adds to the header's; a key both name is the run's.
    assert done.extra == RunExtra(
        runner="DirectRunner", filters={"profile": "curated"}, encoding={"texts": 4}
    )
    write_manifest(str(tmp_path), done)
    assert read_manifest(str(tmp_path)) == done


def test_balanced_books_have_no_errors() -> None:
    assert accounting_errors(balanced()) == []


def test_a_stage_that_loses_records_is_named() -> None:
    counts = balanced()
    counts["GroupByPivot"]["in"] = 7  # one candidate vanished inside RegroupByPivot
    errors = accounting_errors(counts)
    assert any(e.startswith("GroupByPivot: in=7") for e in errors)
    assert any("ThresholdFilter kept 6 but GroupByPivot took in 7" in e for e in errors)


def test_a_missing_stage_is_an_error() -> None:
    counts = balanced()
    del counts["PostFilter"]
    assert accounting_errors(counts) == ["stage 'PostFilter' has no counts"]


def test_manifest_round_trips_and_refuses_unknown_versions(tmp_path: Path) -> None:
    write_manifest(str(tmp_path), manifest(balanced()))
    assert read_manifest(str(tmp_path)) == manifest(balanced())
    data = json.loads((tmp_path / "manifest.json").read_text())
    data["manifest_version"] = "paramine.manifest/99"
    with pytest.raises(ValueError, match=r"manifest/99.*not supported"):
        Manifest.from_json(json.dumps(data))
    assert not list(tmp_path.glob("*.tmp"))  # written through a temporary file


def test_a_version_1_manifest_is_read_as_version_2(tmp_path: Path) -> None:
    v1 = {
        **json.loads(manifest(balanced()).to_json()),
        "manifest_version": "paramine.manifest/1",
        "counts": {"read": {"in": 10, "kept": 10, "dropped": {}}, "postfilter": {"in": 3}},
        "stages": [{"name": "read", "unit": "aligned pair", "reasons": None}],
        "options": {"tgt_lang": "pl", "filters": {"profile": "curated"}, "runner": "FnApiRunner"},
    }
    (tmp_path / "manifest.json").write_text(json.dumps(v1), encoding="utf-8")
    read = read_manifest(str(tmp_path))
    assert read.manifest_version == "paramine.manifest/2"
    assert set(read.counts) == {"ReadBitext", "PostFilter"}
    assert read.stages[0]["name"] == "ReadBitext"
    assert read.options == {"tgt_lang": "pl"}
    assert read.extra.filters == {"profile": "curated"} and read.extra.runner == "FnApiRunner"


def test_no_manifest_means_incomplete(tmp_path: Path) -> None:
    with pytest.raises(IncompleteDatasetError, match="did not finish"):
        read_manifest(str(tmp_path))


def test_reject_rows_are_bounded() -> None:
    row = reject_row(Rejected("x" * 10_000, "line_too_long", "s.tsv", 3))
    assert len(row["record"]) == MAX_REJECTED_RECORD_CHARS
    assert set(row) == set(REJECTS_SCHEMA.names)
    assert schema_version(REJECTS_SCHEMA) == "paramine.rejects/1"


def test_relative_names_climb_out_of_a_version() -> None:
    assert _join("gs://b/root/v=2", "../v=1/pairs/p.parquet") == "gs://b/root/v=1/pairs/p.parquet"
    assert _join("/data/root/v=2/", "pairs/p.parquet") == "/data/root/v=2/pairs/p.parquet"
