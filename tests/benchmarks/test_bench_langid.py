"""benchmarks/bench_langid.py on a sample: py3langid, over all its labels and restricted."""

from __future__ import annotations

import json
from pathlib import Path

from tests.benchmarks.harness import run_script


def test_py3langid_is_measured_offline_and_mostly_right(shared_corpora: Path, tmp_path: Path):
    summary_path = tmp_path / "langid.json"
    done = run_script(
        "bench_langid",
        "--per-lang", 20, "--time-lines", 40, "--rounds", 1,
        "--configs", "py3langid,py3langid/set", "--json", summary_path,
    )  # fmt: skip
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    configs = {"py3langid", "py3langid/set"}
    assert set(summary["accuracy_macro"]) == set(summary["speed"]) == configs
    # Tatoeba's short lines: most top guesses are right, the restricted set more often.
    accuracy = summary["accuracy_macro"]
    assert 60 < accuracy["py3langid"] <= accuracy["py3langid/set"] <= 100
    for figures in summary["speed"].values():
        assert figures["load_s"] > 0 and figures["top_us"] > 0 and figures["shares_us"] > 0
    # Every rule of every configuration, the recommended one among them.
    assert len(summary["checks"]) == 2 * 6
    check = summary["checks"]["py3langid/set:ratio0.5"]
    assert 0 <= check["frr_macro"] <= 100 and 0 <= check["det_close"] <= 100
    # The model ships in the wheel: nothing tried the network.
    assert summary["network"] == {}
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("bench_langid: ") and last.endswith("network attempts 0")
    assert f"best macro accuracy {accuracy['py3langid/set']:.1f}% (py3langid/set)" in last
    # The accuracy table: 20 lines of each of the 28 test sets, and the macro over them.
    assert done.stdout.startswith("560 lines in 28 sets")
    section = done.stdout[done.stdout.index("== Accuracy per test set") :].split("\n\n")[0]
    rows = {cells[0]: cells[1:] for cells in map(str.split, section.splitlines()[2:])}
    macro = [f"{accuracy['py3langid']:.1f}", f"{accuracy['py3langid/set']:.1f}"]
    assert rows.pop("macro") == ["560", *macro]
    assert len(rows) == 28 and {cells[0] for cells in rows.values()} == {"20"}
