"""benchmarks/studies/langid/bench_langid.py on a sample: py3langid over all its labels and
restricted, and heliport restricted where it is installed (it is in ``.[dev]``:
``paramine[heliport]``)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.benchmarks.harness import run_script

HELIPORT = importlib.util.find_spec("heliport") is not None
NO_HELIPORT = "heliport is not installed: pip install 'paramine[heliport]' (part of .[dev])"
#: The test sets of shared/corpora: Tatoeba's, PPC's Polish.
SETS = 33
#: Every configuration is checked by each rule, paramine's two among them.
RULES = 8


@pytest.fixture(scope="module")
def langid_run(
    shared_corpora: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    """One run over 20 lines a set: its --json summary and what it printed."""
    summary_path = tmp_path_factory.mktemp("langid") / "langid.json"
    done = run_script(
        "benchmarks.studies.langid.bench_langid",
        "--per-lang", 20, "--time-lines", 40, "--rounds", 1,
        "--configs", "py3langid,py3langid/set,heliport/set", "--json", summary_path,
    )  # fmt: skip
    return json.loads(summary_path.read_text(encoding="utf-8")), done


def test_py3langid_is_measured_offline_and_mostly_right(
    langid_run: tuple[dict[str, Any], subprocess.CompletedProcess[str]],
):
    summary, done = langid_run
    configs = {"py3langid", "py3langid/set"} | ({"heliport/set"} if HELIPORT else set())
    assert set(summary["accuracy_macro"]) == set(summary["speed"]) == configs
    # Tatoeba's short lines: most top guesses are right, the restricted set more often.
    accuracy = summary["accuracy_macro"]
    assert 60 < accuracy["py3langid"] <= accuracy["py3langid/set"] <= 100
    for figures in summary["speed"].values():
        assert figures["load_s"] > 0 and figures["top_us"] > 0 and figures["shares_us"] > 0
    # Every rule of every configuration, paramine's own among them.
    assert len(summary["checks"]) == len(configs) * RULES
    check = summary["checks"]["py3langid/set:ratio0.3"]
    assert 0 <= check["frr_macro"] <= 100 and 0 <= check["det_close"] <= 100
    assert summary["settings"]["py3langid/set"]["rule"] == "ratio0.3"
    # py3langid knows every language of the test sets.
    assert summary["coverage"]["py3langid"]["sets_known"] == SETS
    assert summary["coverage"]["py3langid"]["sets_missing"] == []
    # The model ships in the wheel: nothing tried the network.
    assert summary["network"] == {}
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("bench_langid: ") and last.endswith("network attempts 0")
    best = max(accuracy, key=lambda c: accuracy[c])
    assert f"best macro accuracy {accuracy[best]:.1f}% ({best})" in last
    # The accuracy table: 20 lines of each test set, and the macro over them.
    assert done.stdout.startswith(f"{20 * SETS} lines in {SETS} sets")
    section = done.stdout[done.stdout.index("== Accuracy per test set") :].split("\n\n")[0]
    rows = {cells[0]: cells[1:] for cells in map(str.split, section.splitlines()[2:])}
    assert rows.pop("macro")[:3] == [
        str(20 * SETS),
        f"{accuracy['py3langid']:.1f}",
        f"{accuracy['py3langid/set']:.1f}",
    ]
    assert len(rows) == SETS and {cells[0] for cells in rows.values()} == {"20"}


@pytest.mark.skipif(not HELIPORT, reason=NO_HELIPORT)
def test_heliport_is_measured_at_paramines_margin(
    langid_run: tuple[dict[str, Any], subprocess.CompletedProcess[str]],
):
    summary, done = langid_run
    assert summary["not_run"] == {}
    assert 60 < summary["accuracy_macro"]["heliport/set"] <= 100
    speed = summary["speed"]["heliport/set"]
    assert speed["top_us"] > 0 and speed["shares_us"] > 0
    # Its models are loaded into memory: hundreds of MB, where py3langid's take tens.
    assert speed["rss_load_mb"] > 100 and speed["rss_peak_mb"] >= speed["rss_load_mb"]
    # heliport's margin rule, and its labels mapped back: hbs, nob/nno to the folds.
    settings = summary["settings"]["heliport/set"]
    assert settings["rule"] == "margin0.75" and 0 <= settings["frr_macro"] <= 100
    assert 0 <= settings["det_close"] <= 100
    assert summary["coverage"]["heliport/set"]["sets_known"] == SETS
    assert summary["coverage"]["heliport/set"]["labels"] > 200
    assert "hrv -> sh" in done.stdout and "heliport/set:margin0.75" in done.stdout
    # The margin rule is the ratio rule at 10^-0.75: it passes at least what ratio 0.3 does.
    checks = summary["checks"]
    assert (
        checks["heliport/set:margin0.75"]["frr_macro"]
        <= checks["heliport/set:ratio0.3"]["frr_macro"]
    )
    assert summary["network"] == {}


def test_a_detector_that_cannot_be_imported_is_reported_not_run(
    shared_corpora: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # a heliport that fails to import, first on the path of the run and its workers
    (tmp_path / "heliport").mkdir()
    (tmp_path / "heliport" / "__init__.py").write_text(
        "raise ImportError('heliport hidden by the test')\n", encoding="utf-8"
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    summary_path = tmp_path / "langid.json"
    done = run_script(
        "benchmarks.studies.langid.bench_langid",
        "--per-lang", 5, "--time-lines", 10, "--rounds", 1,
        "--configs", "py3langid/set,heliport/set", "--json", summary_path,
    )  # fmt: skip
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert set(summary["accuracy_macro"]) == {"py3langid/set"}
    assert summary["not_run"] == {
        "heliport/set": "heliport hidden by the test; pip install heliport"
    }
    assert "not run: heliport/set (heliport hidden by the test; pip install heliport)" in (
        done.stdout
    )
