"""benchmarks/studies/bench_signals.py: the word translation table and the figures it prints."""

from __future__ import annotations

import json

import pytest
from paramine.schemas.reader import read_pairs

from benchmarks.studies import bench_signals as signals
from tests.benchmarks.harness import markdown_rows, run_script


def test_ibm1_learns_which_word_translates_which():
    # "das" is in every line, so only co-occurrence across lines tells "Haus" from "das".
    bitext = [
        (["the", "house"], ["das", "haus"]),
        (["the", "book"], ["das", "buch"]),
        (["a", "book"], ["ein", "buch"]),
    ]
    table = signals.ibm1(bitext, iterations=10)
    assert table[("haus", "house")] > 0.6 > table[("das", "house")]
    assert table[("buch", "book")] > table[("ein", "book")]
    assert table[("das", "the")] > table[("haus", "the")]
    right = signals.translation_score(table, ["the", "book"], ["das", "buch"])
    wrong = signals.translation_score(table, ["the", "book"], ["das", "haus"])
    assert right > wrong


def test_auc_and_the_cut_that_loses_one_percent():
    right = [float(x) for x in range(100)]  # 0..99
    assert signals.auc(right, [-1.0, -2.0]) == 1.0
    assert signals.auc(right, [1000.0]) == 0.0
    assert signals.auc([1.0], [1.0]) == 0.5
    # The 1% quantile of 0..99 is 0.99: only scores below it are caught.
    assert signals.caught_at(right, [0.5, 0.99, 50.0]) == 1


def test_precision_recall_follow_bench_quality():
    corpus = signals.Corpus(
        pivots=[],
        candidates=[],
        replaced=[],
        pivot_lang="en",
        lang="pl",
        originals={"yes.": {"Tak.", "Owszem."}, "no.": {"Nie."}},
    )
    rows = [
        {"pivot_sentence": "Yes.", "sentence_a": "Tak.", "sentence_b": "Owszem."},
        {"pivot_sentence": "No.", "sentence_a": "Nie.", "sentence_b": "Tak."},
    ]
    # One pair of two is right; the recall base is "yes." (two originals), both found.
    assert signals.precision_recall(corpus, rows) == (0.5, 1.0, 1)
    assert signals.precision_recall(corpus, rows[1:]) == (0.0, 0.0, 1)


def test_a_candidate_leans_to_another_pivots_candidate_unless_the_pivots_are_paraphrases(
    tmp_path,
):
    import json

    import numpy as np

    def unit(*xs):
        v = np.array(xs, dtype="float32")
        return v / np.linalg.norm(v)

    vectors = {
        "tom has no raincoat.": unit(1, 0, 0, 0),
        "tom nemá pláštěnku.": unit(1, 0.1, 0, 0),
        "tom nemá bratra.": unit(0, 1, 0, 0),  # misplaced: translates the next pivot
        "tom has no brother.": unit(0, 1, 0, 0),
        "tom nemá žádného bratra.": unit(0, 1, 0.1, 0),
    }
    texts = sorted(vectors)
    index = {t: i for i, t in enumerate(texts)}
    embeddings = np.stack([vectors[t] for t in texts])
    lines = [
        ("tom has no raincoat.", "tom nemá pláštěnku."),
        ("tom has no raincoat.", "tom nemá bratra."),
        ("tom has no brother.", "tom nemá žádného bratra."),
    ]
    corpus = signals.Corpus(
        pivots=[p for p, _ in lines],
        candidates=[c for _, c in lines],
        replaced=[False, True, False],
        pivot_lang="en",
        lang="cs",
    )
    run = tmp_path / "run"
    run.mkdir()
    manifest = {"threshold": {"score": "cosine", "value": 0.0}, "options": {}}
    (run / "manifest.json").write_text(json.dumps(manifest))
    rows = [
        {
            "pivot_sentence": "tom has no raincoat.",
            "sentence_a": "tom nemá pláštěnku.",
            "sentence_b": "tom nemá bratra.",
        }
    ]
    leans = signals.other_pivot_leans(corpus, index, embeddings, rows, run)
    key = "tom has no raincoat."
    # "bratra" is at ~1.0 to the brother pivot's candidate and ~0.1 to its mate.
    assert leans[(key, "tom nemá bratra.")] > 0.8
    assert leans[(key, "tom nemá pláštěnku.")] < 0

    # Once the brother pivot's group also holds "tom nemá pláštěnku.", the two
    # pivots count as paraphrases: nothing else is left to lean to.
    corpus.pivots.append("tom has no brother.")
    corpus.candidates.append("tom nemá pláštěnku.")
    corpus.replaced.append(False)
    leans = signals.other_pivot_leans(corpus, index, embeddings, rows, run)
    assert leans[(key, "tom nemá bratra.")] < 0


@pytest.fixture(scope="module")
def signals_run(tatoeba_sample, tiny_model_dir, tmp_path_factory):
    """bench_quality with lexical noise and a low fixed cut, then bench_signals on its output.

    As docs/thresholds.md runs them, sharing the embeddings cache; the low cut
    lets wrong pairs into the output, which the signals are measured on.
    """
    workdir = tmp_path_factory.mktemp("bench-signals")
    cache, results = workdir / "cache.npz", workdir / "quality.json"
    noise = ["--noise", "lexical", "--rate", "0.2", "--model", tiny_model_dir]
    run_script(
        "benchmarks.quality.bench_quality", tatoeba_sample, *noise, "--scorings", "fixed:0.5",
        "--workdir", workdir / "run", "--embeddings-cache", cache, "--json", results,
    )  # fmt: skip
    run = workdir / "run" / "out-fixed-0-5"
    done = run_script(
        "benchmarks.studies.bench_signals",
        tatoeba_sample,
        *noise,
        "--run",
        run,
        "--embeddings-cache",
        cache,
    )
    quality = json.loads(results.read_text())["results"]["fixed:0.5"]
    return done.stdout, quality, run


def test_the_script_measures_each_signal_on_the_runs_right_and_wrong_candidates(signals_run):
    import re

    out, quality, run = signals_run
    rows = read_pairs(str(run))[0].num_rows
    header = re.match(
        r"eng-pol, lexical noise, seed 13: (\d+) pairs, (\d+) wrong; (\d+) right and (\d+) wrong "
        r"candidates",
        out,
    )
    assert header, out
    pairs, wrong_pairs, right, wrong = (int(g) for g in header.groups())
    assert pairs == rows == quality["pairs"] and right + wrong == 2 * pairs
    # Its precision is bench_quality's, on the same output.
    assert wrong_pairs == round(pairs * (1 - quality["precision"]))
    assert wrong_pairs > 0 and 0 < wrong <= 2 * wrong_pairs
    table = {cells[0]: cells[1:] for cells in markdown_rows(out, "")[1:]}
    assert list(table) == ["cosine", "ibm1", "rank sum"]
    for auc, caught in table.values():
        assert 0 <= float(auc) <= 1 and 0 <= int(caught) <= wrong
    assert (
        f"default output: precision {quality['precision']:.3f} recall {quality['recall']:.3f}"
        in out
    )
    replays = [line for line in out.splitlines() if line.startswith(("cos(a, b) >=", "closer to"))]
    assert len(replays) == 4
    for line in replays:
        figures = re.search(r"precision ([\d.]+) recall ([\d.]+) \((\d+) wrong", line)
        assert figures, line
        assert 0 <= float(figures.group(1)) <= 1 and int(figures.group(3)) <= wrong_pairs
        dropped = re.search(r"(\d+) candidates dropped, (\d+) wrong", line)
        assert dropped is None or int(dropped.group(2)) <= int(dropped.group(1))
