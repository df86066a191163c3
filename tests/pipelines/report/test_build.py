"""Tests of pipelines/report/build.py: ``paramine report`` rebuilds a dataset's report files."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.pipelines.cli import main as cli_main

from tests.pipelines.report.helpers import parse, parse_text


@pytest.mark.pipeline
def test_paramine_report_rebuilds_the_same_report(dataset: Path) -> None:
    names = ("report.html", "stats.json", "README.md")
    before = {n: (dataset / n).read_bytes() for n in names}
    (dataset / "report.html").unlink()
    (dataset / "README.md").unlink()
    assert cli_main(["report", str(dataset)]) == 0
    # The run's timing is kept from its stats.json: the very same files.
    assert {n: (dataset / n).read_bytes() for n in names} == before
    # From the manifest and Parquet alone, only the time is missing.
    (dataset / "stats.json").unlink()
    assert cli_main(["report", str(dataset)]) == 0
    old, new = parse_text(before["report.html"]), parse(dataset / "report.html")
    for section in ("funnel", "scores", "groups", "lengths", "samples"):
        assert new.sections[section] == old.sections[section], section
    assert "Time was not recorded" in " ".join(new.sections["run"]["text"])
    (dataset / "stats.json").write_bytes(before["stats.json"])
    assert cli_main(["report", str(dataset)]) == 0
