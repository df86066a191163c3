"""Tests of pipelines/formats/czeng.py: CzEng's six columns, its documents and its direction."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.formats.helpers import read_inputs


class TestCzEng:
    def test_six_columns_documents_and_direction(self, tmp_path: Path) -> None:
        path = tmp_path / "czeng20-train"
        path.write_text(
            "d1-s1\t0.9\t1\t1\tDobrý den.\tGood day.\n"
            "d1-s2\t0.8\t1\t1\tAhoj.\tHi.\n"
            "\n"
            "d2-s1\t0.7\t1\tAno.\tYes.\n"
            "d2-s2\t0.7\t1\t1\tNe.\tNo.\n",
            encoding="utf-8",
        )
        pairs, rejected, _ = read_inputs([str(path)], "en", "cs")
        assert [(p.pivot, p.candidate, p.line) for p in pairs] == [
            ("Good day.", "Dobrý den.", 1),
            ("Hi.", "Ahoj.", 2),
            ("No.", "Ne.", 5),
        ]
        assert [(r.reason, r.line) for r in rejected] == [("column_count", 4)]
        pairs, _, _ = read_inputs([str(path)], "cs", "en", fmt="czeng")
        assert (pairs[0].pivot, pairs[0].candidate) == ("Dobrý den.", "Good day.")
        with pytest.raises(ValueError, match="Czech-English"):
            read_inputs([str(path)], "en", "pl", fmt="czeng")
