"""benchmarks/studies/bench_length.py on a sample: length() judges unspaced lines, words do not."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from paramine.pipelines.stages.filter.rules.pair_judge import PairJudge, PrefilterOptions
from paramine.pipelines.stages.filter.rules.words import length

from benchmarks.studies import bench_length
from tests.benchmarks.harness import markdown_rows, run_script
from tests.paths import TATOEBA

UNITS = ["whitespace", "treebank", "code points", "length()"]


@pytest.fixture(scope="module")
def sample_run(shared_corpora: Path, tatoeba_sample: Path, tmp_path_factory) -> tuple[str, dict]:
    """200 lines of eng-pol, eng-heb, eng-zho and jpn-pol: what it printed, its --json."""
    figures = tmp_path_factory.mktemp("length") / "length.json"
    sets = [
        tatoeba_sample,
        *(TATOEBA / s for s in ("scripts/eng-heb", "scripts/eng-zho", "x-pol/jpn-pol")),
    ]
    done = run_script(
        "benchmarks.studies.bench_length", "--limit", 200, "--json", figures, "--sets", *sets
    )
    return done.stdout, json.loads(figures.read_text(encoding="utf-8"))


def table(out: str) -> dict[tuple[str, str], dict[str, float]]:
    """The printed table: (group, unit) -> its figures."""
    rows = [row for group in bench_length.GROUPS for row in markdown_rows(out, group)]
    keys = ("drop", "catch", "auc", "cpu_us")
    return {(g, u): dict(zip(keys, map(float, rest), strict=True)) for g, u, *rest in rows}


def test_every_group_and_unit_is_measured_on_the_sets_asked_for(sample_run):
    out, figures = sample_run
    assert out.startswith("4 sets, 800 aligned pairs; seed 0\n")
    assert {name: s["group"] for name, s in figures["sets"].items()} == {
        "eng-pol": "latin/cyrillic", "eng-heb": "other spaced",
        "eng-zho": "unspaced", "jpn-pol": "unspaced",
    }  # fmt: skip
    assert {s["pairs"] for s in figures["sets"].values()} == {200}
    # The misaligned pairs: most of the lines, less those that pair a line with a translation.
    assert all(150 < s["misaligned"] <= 200 for s in figures["sets"].values())
    rows = table(out)
    assert list(rows) == [(g, u) for g in bench_length.GROUPS for u in UNITS]
    for row in rows.values():
        assert 0 <= row["drop"] <= 1 and 0 <= row["catch"] <= 1 and 0 <= row["auc"] <= 1
        assert row["cpu_us"] > 0


def test_length_keeps_the_unspaced_pairs_that_word_counts_drop(sample_run):
    rows = table(sample_run[0])
    new = rows["unspaced", "length()"]
    # A Chinese or Japanese line is one or two whitespace "words": most aligned pairs fail 2.5.
    for unit in ("whitespace", "treebank"):
        old = rows["unspaced", unit]
        assert old["drop"] > 0.4 and new["drop"] < 0.02
        assert abs(old["auc"] - 0.5) < 0.1 < new["auc"] - old["auc"]
    # Where words are separated by spaces, length() counts as the whitespace count does.
    for group in ("latin/cyrillic", "other spaced"):
        assert {k: rows[group, "length()"][k] for k in ("drop", "catch", "auc")} == {
            k: rows[group, "whitespace"][k] for k in ("drop", "catch", "auc")
        }


def test_the_json_holds_what_was_printed(sample_run):
    out, figures = sample_run
    for (group, unit), row in table(out).items():
        expected = figures["groups"][group]["units"][unit]
        for key, places in (("drop", 4), ("catch", 3), ("auc", 3), ("cpu_us", 1)):
            assert row[key] == pytest.approx(expected[key], abs=0.51 * 10**-places)
        sets = [figures["sets"][name]["units"][unit] for name in figures["groups"][group]["sets"]]
        assert expected["drop"] == pytest.approx(np.mean([s["drop"] for s in sets]))
        assert all(s["dropped"] == round(s["drop"] * 200) for s in sets)
    assert figures["changes"]["pairs"] == 200
    last = out.strip().splitlines()[-1]
    assert last == figures["summary"]
    unspaced = figures["groups"]["unspaced"]["units"]
    assert last.startswith(
        f"bench_length: unspaced length() drop@2.5 {unspaced['length()']['drop']:.4f} "
        f"(treebank {unspaced['treebank']['drop']:.4f}"
    )
    changes = figures["changes"]
    changed = changes["treebank_only"] + changes["length_only"]
    assert f"latin/cyrillic: {changed} of 200 aligned decisions change vs treebank" in last


def test_the_ratio_is_the_prefilters(shared_corpora: Path):
    aligned = bench_length.read_set(TATOEBA / "scripts/eng-zho", 300, seed=0)
    options = PrefilterOptions()
    judge = PairJudge(options, None)
    for x, y in zip(aligned.x, aligned.y, strict=True):
        shorter, longer = sorted((length(x), length(y)))
        [verdict] = judge.judge([(x, y, "en", "zh")])
        reason = verdict.reason
        if (
            shorter >= options.min_words
            and longer <= options.max_words
            and reason != "untranslated"
        ):
            ratio = bench_length.ratio(np.array([length(x)]), np.array([length(y)]))[0]
            assert (reason == "length_ratio") == (ratio > options.max_length_ratio), (x, y)


def test_misaligned_pairs_pair_no_line_with_a_translation(tmp_path: Path):
    folder = tmp_path / "eng-pol"
    folder.mkdir()
    english = ["Yes.", "Yes.", "Yes.", "No.", "Tom is here.", "Tom is here."]
    polish = ["Tak.", "Owszem.", "Tak.", "Nie.", "Tom tu jest.", "Tom jest tutaj."]
    (folder / "t.eng").write_text("".join(f"{line}\n" for line in english), encoding="utf-8")
    (folder / "t.pol").write_text("".join(f"{line}\n" for line in polish), encoding="utf-8")
    for seed in range(20):
        s = bench_length.read_set(folder, 0, seed)
        for i, j in zip(s.wrong_x, s.wrong_y, strict=True):
            assert s.x[i] != s.x[j] and s.y[i] != s.y[j]
    assert bench_length.auc(np.array([1.0, 2.0]), np.array([2.0, 3.0])) == 0.875
    (folder / "t.pol").unlink()
    with pytest.raises(SystemExit, match=r"eng-pol should hold one \*\.eng and one \*\.pol"):
        bench_length.read_set(folder, 0, 0)
