"""What a run wrote, typed: the manifest's rows, files and rejects, read and written alike."""

from __future__ import annotations

import json

import pytest
from paramine.schemas.errors import DatasetError
from paramine.schemas.manifest import Manifest
from paramine.schemas.written import RejectCounts, WrittenFiles, WrittenRows

MINED = {
    "rows": {"pairs": 12, "rejects": 3, "scored": 40},
    "files": {"pairs": ["pairs/a.parquet"], "rejects": ["rejects/a.parquet"], "scored": []},
    "rejects": {"counted": {"blank_line": 5}, "written": {"blank_line": 3}},
}
REFRESHED = {
    "rows": {"pairs": 9, "pair_rows_added": 4, "pair_rows_removed": 2, "rejects": 0},
    "files": {"rejects": []},
    "rejects": {"counted": {}, "written": {}},
}


@pytest.mark.parametrize("record", [MINED, REFRESHED, {"rows": {}, "files": {}, "rejects": {}}])
def test_each_part_reads_and_writes_the_same_json(record: dict) -> None:
    rows, files = WrittenRows.read(record["rows"]), WrittenFiles.read(record["files"])
    rejects = RejectCounts.read(record["rejects"])
    assert files.to_json() == record["files"]
    assert rejects.to_json() == record["rejects"]
    assert rows.to_json() == {"pairs": 0, **record["rows"]}  # pairs, always written


def test_the_parts_are_attributes() -> None:
    rows = WrittenRows.read(REFRESHED["rows"])
    assert (rows.pairs, rows.pair_rows_added, rows.pair_rows_removed, rows.scored) == (
        9,
        4,
        2,
        None,
    )
    files = WrittenFiles.read(MINED["files"])
    assert (files.pairs, files.scored) == (("pairs/a.parquet",), ())
    assert WrittenFiles.read(REFRESHED["files"]).pairs is None  # a refresh's pairs: its table
    assert RejectCounts.read(MINED["rejects"]).written == {"blank_line": 3}


@pytest.mark.parametrize(
    ("kind", "record", "part"),
    [
        (WrittenRows, {"pairs": 1, "pairz": 2}, "rows: pairz"),
        (WrittenFiles, {"pairs": [], "extra_table": []}, "files: extra_table"),
        (RejectCounts, {"counted": {}, "kept": {}}, "rejects: kept"),
    ],
)
def test_a_key_this_code_does_not_know_is_named(kind: type, record: dict, part: str) -> None:
    with pytest.raises(DatasetError, match=f"manifest {part} unknown to this paramine"):
        kind.read(record)


def test_a_manifest_keeps_its_json_layout_through_the_typed_parts() -> None:
    manifest = Manifest(
        created_at="2026-12-04T00:00:00+00:00",
        code_version="paramine test",
        options={},
        model={},
        threshold={},
        inputs=[],
        counts={},
        **MINED,
    )
    assert manifest.rows.pairs == 12 and manifest.files.rejects == ("rejects/a.parquet",)
    written = json.loads(manifest.to_json())
    assert {key: written[key] for key in MINED} == MINED
    again = Manifest.from_json(manifest.to_json())
    assert again == manifest and again.to_json() == manifest.to_json()
    # A refresh keeps the record in its Delta commit: JSON types, read back the same.
    record = json.loads(json.dumps(manifest.to_record()))
    assert Manifest(**record) == manifest and record["files"] == MINED["files"]
