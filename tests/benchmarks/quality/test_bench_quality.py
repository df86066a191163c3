"""benchmarks/quality/bench_quality.py with language noise, as the issues' acceptance runs it.

On 300 Tatoeba eng-pol lines with the tiny model: the mining run goes
through the benchmark's cached encoder (``line_scores.cached_handler``),
the path that crashed inside RunInference when the handler changed. Then
several pairs at once, Polish the shared candidate side (x-pol + eng-pol):
150 lines each of jpn-pol and eng-pol, mined in one ``--src-lang auto`` run.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from paramine.pipelines.core.groups import pivot_language
from paramine.schemas.reader import read_pairs

from benchmarks.quality.line_scores import run_prefilter
from benchmarks.quality.noisy_corpus import corrupted_pair
from benchmarks.quality.pivot_sets import corrupted_sets, find_sets
from tests.benchmarks.harness import (
    TATOEBA_STEM,
    key_values,
    markdown_rows,
    run_script,
    write_pivot_sets_sample,
)

pytestmark = pytest.mark.pipeline

SEED, RATE = 13, 0.2


@pytest.fixture(scope="module")
def quality_run(tatoeba_sample: Path, tiny_model_dir: Path, tmp_path_factory) -> dict:
    """One run: what it printed, its --json, and its workdir (the mined dataset in out-default)."""
    workdir = tmp_path_factory.mktemp("bench-quality")
    results = workdir / "results.json"
    done = run_script(
        "benchmarks.quality.bench_quality", tatoeba_sample, "--noise", "language", "--rate", RATE,
        "--model", tiny_model_dir, "--workdir", workdir, "--json", results,
    )  # fmt: skip
    return {"out": done.stdout, "json": json.loads(results.read_text()), "workdir": workdir}


def test_the_table_and_the_last_line_give_the_runs_figures(quality_run, tiny_model_dir):
    out, result = quality_run["out"], quality_run["json"]["results"]["default"]
    table, manifest = read_pairs(str(quality_run["workdir"] / "out-default"))
    assert result["pairs"] == table.num_rows == manifest.rows.pairs > 0
    assert result["cut"] == manifest.threshold["value"]
    [row] = markdown_rows(out, "default")
    assert row[1:6] == [
        f"{result['cut']:.4f}",
        f"{result['pairs']:,}",
        f"{result['precision']:.4f}",
        f"{result['recall']:.4f}",
        f"{result['noise_passed']:.4f}",
    ]
    assert 0 <= result["precision"] <= 1 and 0 < result["recall"] <= 1
    # The denominator of "agree" is the manifest's own count.
    assert result["kept_by_cut_manifest"] == manifest.counts["ThresholdFilter"]["kept"]
    assert row[6] == f"{result['kept_by_cut_recomputed']}/{result['kept_by_cut_manifest']}"
    assert (
        f"eng-pol (en->pl, language noise: 60 of 300 lines replaced, seed {SEED}); "
        f"model {tiny_model_dir}"
    ) in out
    assert result["noise_lines"] == 60
    assert key_values(out.strip().splitlines()[-1]) == {
        "precision": round(result["precision"], 4),
        "recall": round(result["recall"], 4),
        "planted_in_pairs": result["planted_in_pairs"],
        "true_dropped_by_prefilter": round(result["true_dropped_share"], 4),
    }
    # The last column: the true lines the prefilter dropped, from the run's own drops.
    assert result["prefilter_agrees"]
    true_dropped = sum(result["true_dropped_by_prefilter"].values())
    assert result["true_dropped_share"] == round(true_dropped / result["true_lines"], 4)
    assert row[8].startswith(f"{100 * result['true_dropped_share']:.1f}% (")


def test_recall_losses_add_up_to_the_candidates_not_found(quality_run):
    result = quality_run["json"]["results"]["default"]
    losses = result["recall_losses"]
    found = round(result["recall"] * result["eligible"])
    # Where each lost candidate was lost; near_equal, other_pivot and pairing
    # break down pairing_postfilter.
    where = ("prefilter", "below_cut", "singleton", "pairing_postfilter")
    assert sum(losses.get(k, 0) for k in where) == result["eligible"] - found
    breakdown = ("near_equal", "other_pivot", "pairing")
    assert sum(losses.get(k, 0) for k in breakdown) == losses.get("pairing_postfilter", 0)


def test_every_planted_line_is_stopped_somewhere_or_in_pairs(quality_run):
    out, result = quality_run["out"], quality_run["json"]["results"]["default"]
    planted = result["planted"]
    # Close-language translations: Czech first, then Russian and Ukrainian.
    assert set(planted) <= {
        f"{lang} {how}" for lang in ("cs", "ru", "uk") for how in ("same", "similar")
    }
    assert "cs similar" in planted
    for label, counts in planted.items():
        stopped = sum(n for k, n in counts.items() if k.startswith("prefilter "))
        assert counts["lines"] == stopped + counts.get("passed_prefilter", 0)
        later = ("below_cut", "later", "in_pairs")
        assert counts.get("passed_prefilter", 0) == sum(counts.get(k, 0) for k in later)
        [row] = markdown_rows(out, label)
        assert row[1] == f"{counts['lines']:,}" and row[6] == str(counts.get("in_pairs", 0))
    assert sum(c["lines"] for c in planted.values()) <= result["noise_lines"]
    # Most close-language lines go at the language check, as in the real run.
    stopped = sum(c.get("prefilter wrong_language_candidate", 0) for c in planted.values())
    assert stopped > sum(c["lines"] for c in planted.values()) / 2
    assert result["planted_in_pairs"] == sum(c.get("in_pairs", 0) for c in planted.values())
    for example in result["planted_passed_prefilter"]:
        assert re.search(r"-> (pass|unchecked|(strong|weak) \S+)", example["detector"])


def test_the_prefilter_fates_it_recomputes_are_the_runs_own(quality_run, tatoeba_sample):
    """The benchmark replays the run's prefilter from its manifest: the same drops by reason."""
    _, manifest = read_pairs(str(quality_run["workdir"] / "out-default"))
    _, _, corpus = corrupted_pair(tatoeba_sample, "eng", "language", RATE, SEED)
    judged = run_prefilter(manifest)
    assert judged.detector is not None and judged.options.junk_rules  # the profile's, resolved
    reasons: Counter[str] = Counter()
    seen = set()
    pairs = zip(corpus.pivots, corpus.candidates, strict=True)
    lines = [(p, c, corpus.pivot_lang, corpus.lang) for p, c in pairs]
    for (pivot, candidate, _, _), reason in zip(lines, judged.reasons(lines), strict=True):
        if not reason and (pivot, candidate) in seen:
            reason = "duplicate_pair"
        seen.add((pivot, candidate))
        if reason:
            reasons[reason] += 1
    assert reasons == Counter(manifest.counts["Prefilter"]["dropped"])


@pytest.fixture(scope="module")
def pivot_sets_run(shared_corpora: Path, tiny_model_dir: Path, tmp_path_factory) -> dict:
    """x-pol (jpn-pol alone) + eng-pol, 150 lines each, language noise: one run's output."""
    directories = write_pivot_sets_sample(tmp_path_factory.mktemp("pivot-sets"), lines=150)
    workdir = tmp_path_factory.mktemp("bench-quality-sets")
    results = workdir / "results.json"
    done = run_script(
        "benchmarks.quality.bench_quality",
        *directories, "--candidate", "pol", "--noise", "language",
        "--rate", RATE, "--model", tiny_model_dir, "--workdir", workdir, "--json", results,
    )  # fmt: skip
    return {
        "out": done.stdout,
        "json": json.loads(results.read_text()),
        "workdir": workdir,
        "directories": directories,
    }


def test_several_pairs_are_mined_in_one_run_with_each_files_pivot_language(pivot_sets_run):
    out, result = pivot_sets_run["out"], pivot_sets_run["json"]["results"]["default"]
    workdir = pivot_sets_run["workdir"]
    # The noised pairs keep their suffixes: paramine reads each file's pivot language.
    assert sorted(p.name for p in (workdir / "sets").iterdir()) == ["eng-pol", "jpn-pol"]
    assert (workdir / "sets" / "jpn-pol" / f"{TATOEBA_STEM}.jpn").is_file()
    table, manifest = read_pairs(str(workdir / "out-default"))
    assert manifest.options["src_lang"] == "auto"
    assert result["pairs"] == table.num_rows == manifest.rows.pairs > 0
    assert 0 < result["precision"] <= 1 and 0 < result["recall"] <= 1
    assert "x-pol + eng-pol (auto->pl, language noise: 60 of 300 lines replaced, seed 13)" in out
    [row] = markdown_rows(out, "default")
    figures = [f"{result['pairs']:,}", f"{result['precision']:.4f}", f"{result['recall']:.4f}"]
    assert row[2:5] == figures

    # Both pivot languages, each with its own pair, lines and gold groups.
    languages = result["pivot_languages"]
    assert list(languages) == ["en", "ja"]  # most lines first, then by name: 150 each
    assert [languages[lang]["sets"] for lang in languages] == [["eng-pol"], ["jpn-pol"]]
    assert all(f["lines"] == 150 and f["eligible"] > 0 for f in languages.values())
    assert sum(f["pairs"] for f in languages.values()) == result["pairs"]
    assert {pivot_language(lang) for lang in table.column("pivot_lang").to_pylist()} <= {"en", "ja"}
    for lang, figures in languages.items():
        [row] = [row for row in markdown_rows(out, lang) if row[0] == lang]
        assert row[1:4] == [", ".join(figures["sets"]), "150", f"{figures['pairs']:,}"]
        assert 0 <= figures["precision"] <= 1 and 0 <= figures["recall"] <= 1


def test_several_pairs_planted_lines_are_accounted_for_per_language(pivot_sets_run):
    result = pivot_sets_run["json"]["results"]["default"]
    assert result["noise_lines"] == 60  # 30 in each pair
    planted, languages = result["planted"], result["pivot_languages"]
    # Japanese pivots have no English: their donors are "loose" unless eng-pol bridges them.
    assert any(label.endswith(" loose") for label in planted)
    for counts in [*planted.values(), *(f["planted"] for f in languages.values())]:
        stopped = sum(n for k, n in counts.items() if k.startswith("prefilter "))
        assert counts["lines"] == stopped + counts.get("passed_prefilter", 0)
        later = ("below_cut", "later", "in_pairs")
        assert counts.get("passed_prefilter", 0) == sum(counts.get(k, 0) for k in later)
    total = sum(c["lines"] for c in planted.values())
    assert total == sum(f["planted"]["lines"] for f in languages.values()) > 50
    assert all(f["planted"]["lines"] > 20 for f in languages.values())
    in_pairs = sum(f["planted"].get("in_pairs", 0) for f in languages.values())
    assert in_pairs == result["planted_in_pairs"]


def test_several_pairs_prefilter_fates_are_the_runs_own(pivot_sets_run):
    """Replayed per line with its pivot's language and paramine's duplicate key."""
    _, manifest = read_pairs(str(pivot_sets_run["workdir"] / "out-default"))
    sets = find_sets(pivot_sets_run["directories"], "pol")
    _, corpus = corrupted_sets(sets, "pol", "language", RATE, SEED)
    judged = run_prefilter(manifest)
    reasons: Counter[str] = Counter()
    seen = set()
    lines = [
        (p, c, corpus.pivot_lang_of(i), corpus.lang)
        for i, (p, c) in enumerate(zip(corpus.pivots, corpus.candidates, strict=True))
    ]
    for (pivot, candidate, lang, _), reason in zip(lines, judged.reasons(lines), strict=True):
        key = (pivot, candidate, pivot_language(lang))
        if not reason and key in seen:
            reason = "duplicate_pair"
        seen.add(key)
        if reason:
            reasons[reason] += 1
    assert reasons == Counter(manifest.counts["Prefilter"]["dropped"])
