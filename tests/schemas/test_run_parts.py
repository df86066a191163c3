"""Tests of schemas/run_parts.py: the model, inputs and facts of a manifest, typed, layout kept."""

from __future__ import annotations

import json

import pytest
from paramine.schemas.dataset import PAIRS_SCHEMA_VERSION, REJECTS_SCHEMA_VERSION
from paramine.schemas.errors import DatasetError
from paramine.schemas.manifest import Manifest
from paramine.schemas.run_parts import FileRecord, InputRecord, ModelRecord, RunExtra, TrainedFrom

MINED_INPUT = {
    "format": "tsv",
    "corpus": "tatoeba",
    "pivot_lang": "en",
    "lang": "pl",
    "files": [
        {"url": "/data/a.tsv", "size": 120, "mtime": "1733300000.0"},
        {"url": "gs://b/b.tsv", "size": 7, "checksum": "abc"},
    ],
}
REFRESHED_INPUT = {"url": "/data/a.tsv", "format": "tsv", "corpus": "tatoeba", "files": []}
TRAINED_MODEL = {
    "spec": "runs/kab/model",
    "id": "runs/kab/model",
    "revision": None,
    "prefix": "query: ",
    "training": {
        "dataset": "runs/kab/round-0",
        "dataset_created_at": "2026-12-01T10:00:00+00:00",
        "base": "intfloat/multilingual-e5-small",
        "recipe": "adapt",
        "train_on": "aligned",
        "loss_directions": "both",
        "seed": 42,
        "eval_share": 0.05,
        "train_rows": 20608,
        "global_step": 644,
    },
}


@pytest.mark.parametrize("record", [MINED_INPUT, REFRESHED_INPUT])
def test_an_input_reads_typed_and_writes_its_own_keys_back(record: dict) -> None:
    shard = InputRecord.read(record)
    assert shard.to_json() == record
    assert all(isinstance(f, FileRecord) for f in shard.files)


def test_an_inputs_size_adds_its_files() -> None:
    assert InputRecord.read(MINED_INPUT).size == 127
    assert InputRecord.read(REFRESHED_INPUT).size == 0


def test_a_trained_model_reads_typed_and_writes_the_same_record() -> None:
    model = ModelRecord.read(TRAINED_MODEL)
    assert isinstance(model.training, TrainedFrom)
    assert model.training.dataset == "runs/kab/round-0" and model.training.global_step == 644
    assert model.to_json() == TRAINED_MODEL


def test_a_model_writes_its_four_keys_even_where_unknown() -> None:
    assert ModelRecord.read({"id": "tiny"}).to_json() == {
        "spec": None,
        "id": "tiny",
        "revision": None,
        "prefix": None,
    }


def test_facts_write_what_the_run_recorded_and_add_up() -> None:
    extra = RunExtra.read({"runner": "DirectRunner", "encoding": {"texts_encoded": 11}})
    assert extra.to_json() == {"runner": "DirectRunner", "encoding": {"texts_encoded": 11}}
    more = extra.with_facts(adapt={"final_round": 1})
    assert more.adapt == {"final_round": 1} and more.runner == "DirectRunner"
    assert extra.adapt is None  # the record is not changed in place


@pytest.mark.parametrize(
    ("cls", "record", "part"),
    [
        (ModelRecord, {"id": "x", "weights": "w"}, "model: weights"),
        (TrainedFrom, {"recipe": "adapt", "optimizer": "adamw"}, "model.training: optimizer"),
        (InputRecord, {"files": [], "shard": 3}, "inputs: shard"),
        (FileRecord, {"url": "a", "inode": 4}, "inputs.files: inode"),
        (RunExtra, {"gpu": "h200"}, "extra: gpu"),
    ],
)
def test_a_key_this_paramine_does_not_know_is_an_error_naming_the_part(
    cls: type, record: dict, part: str
) -> None:
    with pytest.raises(DatasetError, match=f"manifest {part} unknown to this paramine"):
        cls.read(record)


def test_a_manifest_reads_its_parts_typed_and_writes_the_same_json() -> None:
    record = {
        "created_at": "2026-12-04T12:00:00+00:00",
        "code_version": "paramine test",
        "options": {"src_lang": "en", "tgt_lang": "pl"},
        "model": TRAINED_MODEL,
        "threshold": {"mode": "fixed", "value": 0.5},
        "inputs": [MINED_INPUT],
        "counts": {},
        "files": {"pairs": ["pairs-00000.parquet"]},
        "rows": {"pairs": 2},
        "rejects": {},
        "manifest_version": "paramine.manifest/2",
        "pairs_schema_version": PAIRS_SCHEMA_VERSION,
        "rejects_schema_version": REJECTS_SCHEMA_VERSION,
        "extra": {"runner": "DirectRunner", "line_checks": {}, "adapt": {"final_round": 1}},
        "stages": [],
    }
    text = json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    manifest = Manifest.from_json(text)
    assert manifest.model.training is not None and manifest.model.training.recipe == "adapt"
    assert manifest.inputs[0].lang == "pl" and manifest.extra.adapt == {"final_round": 1}
    assert manifest.to_json() == text
