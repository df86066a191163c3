"""py3langid's model from an uncompressed copy in the cache: the package's arrays, or its file."""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np
import pytest
from paramine.encoders.models.cache import cached_folders, is_complete
from paramine.pipelines.stages.filter.rules import langid_model
from py3langid import modelio


@pytest.fixture(scope="module")
def shipped() -> langid_model.Model:
    return modelio.load_model(langid_model.shipped_model())


def assert_same(found: langid_model.Model, shipped: langid_model.Model) -> None:
    ptc, pc, classes, nextmove, row, output = found
    assert np.array_equal(ptc, shipped[0]) and ptc.dtype == shipped[0].dtype
    assert np.array_equal(pc, shipped[1]) and pc.dtype == shipped[1].dtype
    assert classes == shipped[2] and output == shipped[5]
    assert nextmove == shipped[3] and nextmove.typecode == shipped[3].typecode
    assert row == shipped[4] and row.typecode == shipped[4].typecode


def test_the_first_load_writes_the_copy_and_the_next_reads_it_without_lzma(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: langid_model.Model
) -> None:
    monkeypatch.setenv("PARAMINE_CACHE", str(tmp_path))
    assert_same(langid_model.load_model(), shipped)
    folder = langid_model.cached_folder()
    assert is_complete(folder) and (folder / langid_model.MODEL_NAME).stat().st_size > 10**7
    # Listed with the cache's other folders, so `paramine models` can prune it.
    assert [f.path for f in cached_folders(tmp_path)] == [folder]

    def no_lzma(*args: object, **kwargs: object) -> None:
        raise AssertionError("the shipped file was decompressed again")

    monkeypatch.setattr(lzma, "open", no_lzma)
    assert_same(langid_model.load_model(), shipped)


def test_without_a_writable_cache_the_package_file_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: langid_model.Model
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("PARAMINE_CACHE", str(blocker / "cache"))
    assert_same(langid_model.load_model(), shipped)


def test_a_damaged_copy_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: langid_model.Model
) -> None:
    monkeypatch.setenv("PARAMINE_CACHE", str(tmp_path))
    langid_model.load_model()
    copy = langid_model.cached_folder() / langid_model.MODEL_NAME
    copy.write_bytes(copy.read_bytes()[: 1 << 20])
    assert_same(langid_model.load_model(), shipped)
