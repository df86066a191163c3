"""Tests of pipelines/formats/unpaired.py: a stray file is one counted reject, not an abort."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.pipelines.formats import resolve_inputs
from paramine.schemas.errors import UsageError

from tests.pipelines.formats.helpers import read_inputs


class TestStrayFile:
    """Defect 10: a stray file is skipped with a counted reject, not an abort."""

    def test_stray_file_in_a_folder_is_one_reject(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        (tmp_path / "c.en").write_text("Cat.\nDog.\n")
        (tmp_path / "c.pl").write_text("Kot.\nPies.\n")
        (tmp_path / "x.en").write_text("Lonely.\n")
        pairs, rejected, _ = read_inputs([str(tmp_path)])
        assert [(p.pivot, p.candidate) for p in pairs] == [("Cat.", "Kot."), ("Dog.", "Pies.")]
        assert [(Path(r.shard).name, r.reason) for r in rejected] == [("x.en", "unpaired_file")]
        assert "no " in rejected[0].record and "x.pl" in rejected[0].record
        assert "x.en" in caplog.text

    def test_unpaired_is_not_a_user_format(self, tmp_path: Path) -> None:
        (tmp_path / "a.tsv").write_text("a\tb\n")
        with pytest.raises(UsageError, match="unknown"):
            resolve_inputs([str(tmp_path)], "en", "pl", fmt="unpaired")
