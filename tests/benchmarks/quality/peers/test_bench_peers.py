"""benchmarks/quality/peers/bench_peers.py end to end on a tiny sample.

The end-to-end run is small (300 synthetic pairs, 30 lines of each Tatoeba
file of the several-pivot set, the tiny offline model): the figures it
prints mean nothing, but the books must balance and the tables must print
the figures of its --json. The gold groups and OpusFilter's configuration
on hand-made data: test_mining.py and test_prefilter.py beside this file.

OpusFilter runs where its environment (``peers.env``) was made before, by
``bench_peers`` or by this test with ``PARAMINE_PEERS_INSTALL=1``;
elsewhere its tests are skipped, saying why. The test does not create it by
default: that takes 1-3 minutes of pip and a package index
(benchmarks/results/peers.md).
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest

from benchmarks.quality.peers.bench_peers import target_speedup
from tests.benchmarks.harness import markdown_rows, run_script

pytestmark = pytest.mark.slow

#: Lines of each Tatoeba file of the several-pivot set (28 x-pol sets and eng-pol).
SAMPLE = 30


@pytest.fixture(scope="module")
def peers_run(tiny_model_dir: Path, shared_corpora: Path, tmp_path_factory) -> dict:
    """One tiny run of every part: what it printed (``out``) and its --json (``json``)."""
    workdir = tmp_path_factory.mktemp("bench-peers")
    figures = workdir / "report.json"
    install = [] if os.environ.get("PARAMINE_PEERS_INSTALL") == "1" else ["--no-install"]
    done = run_script(
        "benchmarks.quality.peers.bench_peers",
        "--tiny", "--model", tiny_model_dir, "--corpora", "x-pol",
        "--sample", SAMPLE, "--corpora-dir", shared_corpora, "--workdir", workdir,
        "--json", figures, *install, timeout=1800,
    )  # fmt: skip
    return {"out": done.stdout, "json": json.loads(figures.read_text())}


@pytest.fixture
def opusfilter_ran(peers_run: dict) -> None:
    """Skips, saying why, where the peers' environment could not be made."""
    error = peers_run["json"]["peers_env"]["error"]
    if error:
        pytest.skip(f"OpusFilter not run: {error}")


def test_paramine_prefilter_books_balance(peers_run):
    report = peers_run["json"]
    # Tatoeba eng-pol feeds the prefilter part only when --corpora names it.
    assert [r["input"] for r in report["prefilter"]] == ["synthetic 300"]
    for r in report["prefilter"]:
        (job,) = r["paramine"]
        assert job["run"]["returncode"] == 0
        assert job["run"]["cpu_s"] > 0 and job["run"]["peak_rss_kib"] > 0
        # Every pair read is kept or dropped for one reason (duplicates included).
        assert job["pairs_in"] == job["kept"] + sum(job["dropped"].values())
        assert 0 < job["kept"] < job["pairs_in"]
        # The loop runs the same code without the runner: the same pairs kept.
        assert r["paramine_loop"]["kept"] == job["kept"]
        assert r["paramine_loop"]["pairs"] == job["pairs_in"]


def test_the_prefilter_table_prints_each_tools_run(peers_run):
    report, out = peers_run["json"], peers_run["out"]
    (r,) = report["prefilter"]
    rows = {row[1]: row for row in markdown_rows(out, "synthetic 300")}
    job = rows["paramine prefilter job"]
    assert job[3] == "1"  # runs
    assert job[5] == f"{r['paramine'][0]['run']['cpu_s']:.1f}"
    assert job[-2] == f"{r['paramine'][0]['kept']:,}"
    loop = rows["paramine prefilter loop"]
    assert loop[-2] == f"{r['paramine_loop']['kept']:,}"
    opus = rows["OpusFilter 3.3.1"]
    if report["peers_env"]["error"]:
        assert opus[2].startswith("not run: ")
        assert "kept" not in r  # nothing to compare
    else:
        assert opus[-2] == f"{r['opusfilter'][0]['kept']:,}"
        assert job[-1] == opus[-1] == f"{r['kept']['both']:,}"
        assert "OpusFilter CPU / paramine job CPU = " in out


def test_opusfilter_counts_add_up(peers_run, opusfilter_ran):
    report = peers_run["json"]
    assert report["peers_env"]["versions"]["opusfilter"] == "3.3.1"
    for r in report["prefilter"]:
        (run,) = r["opusfilter"]
        assert run["run"]["returncode"] == 0
        assert run["pairs_in"] >= run["after_dedup"] >= run["kept"] > 0
        # The profile reproduces the chain: each filter takes what the one before kept.
        profile = r["opusfilter_profile"]["filters"]
        assert profile[0]["in"] == run["after_dedup"]
        for before, after in itertools.pairwise(profile):
            assert after["in"] == before["kept"]
        assert profile[-1]["kept"] == run["kept"]
        assert [f["filter"] for f in profile][-1] == "LangidFilter"


def test_both_keep_no_more_than_each(peers_run, opusfilter_ran):
    for r in peers_run["json"]["prefilter"]:
        kept = r["kept"]
        assert kept["paramine_distinct"] == r["paramine"][0]["kept"]
        assert kept["both"] <= min(kept["paramine_distinct"], kept["opusfilter_distinct"])
        assert kept["both"] + kept["only_paramine"] == kept["paramine_distinct"]
        assert kept["both"] + kept["only_opusfilter"] == kept["opusfilter_distinct"]
        assert sum(kept["only_paramine_dropped_by_opusfilter"].values()) == kept["only_paramine"]


def test_quality_figures_are_in_range(peers_run):
    figures = peers_run["json"]["quality"]["x-pol"]
    methods = figures["methods"]
    assert set(methods) == {"paramine", "knn", "knn_nontrivial", "paper"}
    assert figures["lines"] == 29 * SAMPLE  # 28 x-pol sets and eng-pol
    # The manifest's count of pairs read is the set's lines.
    assert methods["paramine"]["pairs_read"] == methods["paper"]["pairs_read"] == figures["lines"]
    n = methods["paramine"]["pairs"]
    for name, m in methods.items():
        assert "error" not in m, m.get("error")
        assert 0 <= m["right"] <= m["pairs"]
        assert m["right"] <= m["right_by_components"] <= m["pairs"]
        assert (m["precision"] is None) == (m["pairs"] == 0)
        if m["pairs"]:
            assert 0.0 <= m["precision"] <= 1.0
        assert 0.0 <= m["recall_any_row"] <= 1.0
        if name.startswith("knn"):
            # Judged at paramine's number of pairs; every distinct Polish line encoded.
            assert m["pairs"] <= n
            if name == "knn":
                assert m["pairs"] == min(n, m["pairs_returned"])
            assert m["texts_encoded"] == figures["distinct_candidates"]
            assert m["recall"] is None
        else:
            assert 0.0 <= m["recall"] <= m["recall_any_row"] <= 1.0
    # The paper's method scores every pair: it encodes at least what paramine's grouping does.
    assert methods["paper"]["texts_encoded"] >= methods["paramine"]["texts_encoded"]


def test_the_quality_table_prints_each_methods_figures(peers_run):
    out = peers_run["out"]
    methods = peers_run["json"]["quality"]["x-pol"]["methods"]
    rows = markdown_rows(out, "x-pol")
    assert [row[1] for row in rows] == [
        "paramine mine, defaults",
        "kNN paraphrase_mining, top N",
        "kNN, trivial pairs dropped, top N",
        "paper: fixed 0.7 cosine, every pair scored",
    ]
    for row, m in zip(rows, methods.values(), strict=True):
        assert row[2] == f"{m['texts_encoded']:,}"
        assert row[5] == f"{m['pairs']:,}"
        precision = m["precision"]
        assert row[6] == ("-" if precision is None else f"{precision:.3f}")


def test_a_million_pairs_are_held_to_five_times_opusfilter_and_fewer_to_as_fast() -> None:
    assert target_speedup(1_000_000) == target_speedup(10_000_000) == 5.0
    assert target_speedup(999_999) == target_speedup(10_000) == 1.0
    assert target_speedup(None) == 1.0  # an input whose pairs were not counted
