"""benchmarks/studies/bench_close_languages.py on a sample: its three tables, and what they show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.harness import run_script


@pytest.mark.slow
def test_the_tables_show_confusions_true_lines_and_planted_lines(
    tmp_path: Path, shared_corpora: Path
) -> None:
    done = run_script(
        "benchmarks.studies.bench_close_languages",
        "--per-lang",
        "150",
        "--json",
        str(tmp_path / "c.json"),
    )
    figures = json.loads((tmp_path / "c.json").read_text())
    # Tatoeba's "slv" lines are mostly Slovak: the confusion table says so.
    assert figures["confusions"]["sl"]["py3langid"]["top"]["sk"] > 75
    # Polish lines stay, Czech and Slovak lines planted on them go.
    assert figures["true"]["pl"]["now"] <= 0.01
    assert figures["planted"]["cs>pl"]["caught_now"] >= 0.9
    # Never more than a line fewer caught than the hand-kept list caught, on any case
    # (on a sample this small a weakly planted line is one line).
    for case, row in figures["planted"].items():
        one_line = 1 / row["planted_lines"]
        assert row["caught_now"] >= row["caught_before"] - one_line - 1e-6, case
    assert "| cs | pl | " in done.stdout and "1. the detectors' confusions" in done.stdout
