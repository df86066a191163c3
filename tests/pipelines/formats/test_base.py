"""Tests of pipelines/formats/base.py: the readers' options, and a shard that vanished."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.pipelines.formats import ReaderOptions, resolve_inputs
from paramine.schemas.errors import InputError, UsageError

from tests.pipelines.formats.helpers import read_all


class TestTsvColumns:
    @pytest.mark.parametrize("columns", [(2, 2), (0, 3), (1, 2, 3), "2,x"])
    def test_bad_columns_are_refused_as_the_flag_refuses_them(self, columns: object) -> None:
        """One message for one bad value, from Python as from ``--tsv-columns``."""
        with pytest.raises(UsageError, match=r"^--tsv-columns .*(must differ|column numbers)"):
            ReaderOptions(tsv_columns=columns)  # type: ignore[arg-type]  # a bad value on purpose


class TestRejectCap:
    """Defect 13 of issue 11: the cap on reject rows is checked."""

    def test_option_is_checked(self) -> None:
        with pytest.raises(UsageError, match=r"^--max-rejects-per-reason -1 is negative"):
            ReaderOptions(max_rejects_per_reason=-1)


def test_a_file_gone_after_resolution_is_named(tmp_path: Path) -> None:
    """Read in a worker, a vanished shard says which file, not a bare OSError."""
    path = tmp_path / "gone.tsv"
    path.write_text("a\tb\n")
    shards = resolve_inputs([str(path)], "en", "pl")
    path.unlink()
    with pytest.raises(InputError, match=rf"{path}: cannot read {path}: No such file"):
        read_all(shards)
