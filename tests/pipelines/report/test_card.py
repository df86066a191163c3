"""Tests of pipelines/report/card.py: the card's YAML, as Hugging Face ``datasets`` reads it."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.schemas.manifest import read_manifest


@pytest.mark.pipeline
def test_datasets_load_dataset_gives_the_pairs_as_default_split(
    dataset: Path, tmp_path: Path
) -> None:
    datasets = pytest.importorskip("datasets")
    manifest = read_manifest(str(dataset))
    loaded = datasets.load_dataset(str(dataset), cache_dir=str(tmp_path / "hf"))
    assert list(loaded) == ["train"]
    assert loaded["train"].num_rows == manifest.rows.pairs
    assert "pivot_sentence" in loaded["train"].column_names
    rejects = datasets.load_dataset(str(dataset), "rejects", cache_dir=str(tmp_path / "hf"))
    assert rejects["train"].num_rows == manifest.rows.rejects == 1


@pytest.mark.pipeline
def test_the_card_names_languages_size_and_task(dataset: Path) -> None:
    import yaml

    text = (dataset / "README.md").read_text(encoding="utf-8")
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["language"] == ["pl", "en"]
    assert meta["size_categories"] == ["n<1K"]
    assert meta["task_categories"] == ["sentence-similarity"]
    assert meta["configs"][0]["config_name"] == "pairs" and meta["configs"][0]["default"]
    assert meta["license"] == "unknown"
