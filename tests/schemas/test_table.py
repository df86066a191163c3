"""Tests of schemas/table.py: which folders hold a Delta table."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest
from paramine.schemas.table import is_table


def test_a_plain_folder_is_no_table_without_asking_deltalake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pairs-00000.parquet").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "deltalake", None)  # importing it now fails
    assert is_table(str(tmp_path)) is False
    assert is_table(f"file://{tmp_path}") is False


def test_a_delta_table_is_one_as_a_path_and_as_a_file_url(tmp_path: Path) -> None:
    from deltalake import write_deltalake

    write_deltalake(str(tmp_path / "t"), pa.table({"x": [1, 2]}))
    assert is_table(str(tmp_path / "t")) is True
    assert is_table(f"file://{tmp_path / 't'}") is True


def test_an_empty_delta_log_is_asked_of_deltalake(tmp_path: Path) -> None:
    (tmp_path / "_delta_log").mkdir()
    assert is_table(str(tmp_path)) is False
