"""Signals beyond the default checks, measured on the wrong pairs that survive them.

Reads one run of bench_quality.py (its output folder) with the same corpus,
noise, rate and seed, labels each output candidate right (an original
translation of its pivot) or wrong, as bench_quality does, and reports how
well each signal tells the wrong candidates from the right ones:

- ``cosine``: cos(pivot, candidate), what the cut already used;
- ``ibm1``: IBM model 1, a word translation table learnt by EM from the
  whole corrupted input (lowercase words, both directions; a candidate's
  score is the smaller of the two mean log-probabilities per word), the
  adequacy signal of classic bitext cleaners;
- ``rank sum``: the two ranks added.

For each: the AUC (a right candidate scores above a wrong one) and the wrong
candidates that a cut losing 1% of the right ones would catch. Then it
replays two checks that drop output pairs (not re-paired; precision and
recall recomputed with bench_quality's definitions):

- a cut on the two candidates' own cosine;
- the rival contest within one language: a candidate goes when a kept
  candidate of another pivot (margin at or above the run's floor, found
  with faiss) is closer to it than its closest group-mate by more than a
  margin. Pivots whose groups share a candidate text count as paraphrases
  and are skipped.

docs/thresholds.md quotes the figures.

Usage::

    python -m benchmarks.quality.bench_quality DIR --noise lexical --rate 0.2 \\
        --workdir /tmp/qa/run --embeddings-cache /tmp/qa/cache.npz
    python -m benchmarks.studies.bench_signals DIR --noise lexical --rate 0.2 \\
        --run /tmp/qa/run/out-default --embeddings-cache /tmp/qa/cache.npz
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paramine.pipelines.core.groups import pivot_key
from paramine.schemas.reader import read_pairs

from benchmarks.quality.line_scores import encode_all
from benchmarks.quality.noisy_corpus import WORD, Corpus, corrupted_pair

NULL = "<null>"  # IBM model 1's empty word: a word may translate nothing


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def ibm1(bitext: Sequence[tuple[list[str], list[str]]], iterations: int = 8) -> dict:
    """p(f | e) for source words e and target words f, by EM (Brown et al. 1993)."""
    table: dict[tuple[str, str], float] = defaultdict(lambda: 1.0)  # uniform start
    for _ in range(iterations):
        counts: dict[tuple[str, str], float] = defaultdict(float)
        totals: dict[str, float] = defaultdict(float)
        for source, target in bitext:
            source = [*source, NULL]
            for f in target:
                norm = sum(table[(f, e)] for e in source)
                for e in source:
                    share = table[(f, e)] / norm
                    counts[(f, e)] += share
                    totals[e] += share
        table = {fe: c / totals[fe[1]] for fe, c in counts.items()}
    return table


def translation_score(table: dict, source: list[str], target: list[str]) -> float:
    """Mean log p(f | source) per target word, alignments uniform (model 1)."""
    if not target:
        return 0.0
    source = [*source, NULL]
    total = 0.0
    for f in target:
        p = sum(table.get((f, e), 0.0) for e in source) / len(source)
        total += math.log(max(p, 1e-9))
    return total / len(target)


def auc(right: Sequence[float], wrong: Sequence[float]) -> float:
    """Share of (right, wrong) couples in which the right candidate scores higher."""
    import numpy as np

    r, w = np.asarray(right)[:, None], np.asarray(wrong)[None, :]
    return float((r > w).mean() + 0.5 * (r == w).mean())


def caught_at(right: Sequence[float], wrong: Sequence[float], lost: float = 0.01) -> int:
    """Wrong candidates below the cut that loses ``lost`` of the right ones."""
    import numpy as np

    cut = np.quantile(np.asarray(right), lost)
    return int((np.asarray(wrong) < cut).sum())


def precision_recall(corpus: Corpus, rows: list[dict[str, Any]]) -> tuple[float, float, int]:
    """bench_quality's precision and recall of these output rows, and their wrong pairs."""

    def right(row: dict[str, Any], side: str) -> bool:
        return row[side] in corpus.originals.get(pivot_key(row["pivot_sentence"]), ())

    good = sum(1 for r in rows if right(r, "sentence_a") and right(r, "sentence_b"))
    mined = {
        (pivot_key(r["pivot_sentence"]), r[s]) for r in rows for s in ("sentence_a", "sentence_b")
    }
    eligible = [(k, c) for k, cands in corpus.originals.items() if len(cands) >= 2 for c in cands]
    found = sum(1 for kc in eligible if kc in mined)
    return good / max(len(rows), 1), found / max(len(eligible), 1), len(rows) - good


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="the Tatoeba pair bench_quality read")
    parser.add_argument("--run", type=Path, required=True, help="a bench_quality output folder")
    parser.add_argument("--pivot", default="eng")
    parser.add_argument("--noise", choices=("random", "lexical"), default="random")
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--model", default="e5-small")
    parser.add_argument("--embeddings-cache", type=Path, default=None)
    parser.add_argument(
        "--pair-cuts", default="0.88,0.90", help="cuts on cos(a, b) to replay (0.88,0.90)"
    )
    parser.add_argument(
        "--other-pivot-margins",
        default="0.03,0.05",
        help="margins of the contest within one language to replay (0.03,0.05)",
    )
    args = parser.parse_args(argv)
    import numpy as np

    _, _, corpus = corrupted_pair(args.directory, args.pivot, args.noise, args.rate, args.seed)
    index, embeddings = encode_all(corpus, args.model, args.embeddings_cache)
    rows = read_pairs(str(args.run))[0].to_pylist()

    def cos(a: str, b: str) -> float:
        return float(embeddings[index[a]] @ embeddings[index[b]])

    bitext = [(words(p), words(c)) for p, c in zip(corpus.pivots, corpus.candidates, strict=True)]
    forward = ibm1(bitext)  # p(candidate word | pivot words)
    backward = ibm1([(c, p) for p, c in bitext])

    scores: dict[str, tuple[list[float], list[float]]] = {"cosine": ([], []), "ibm1": ([], [])}
    for row in rows:
        pivot = row["pivot_sentence"]
        originals = corpus.originals.get(pivot_key(pivot), set())
        for side in ("sentence_a", "sentence_b"):
            candidate = row[side]
            fate = 0 if candidate in originals else 1  # 0: right, 1: wrong
            scores["cosine"][fate].append(cos(pivot, candidate))
            p, c = words(pivot), words(candidate)
            lexical = min(translation_score(forward, p, c), translation_score(backward, c, p))
            scores["ibm1"][fate].append(lexical)
    ranks = {name: np.argsort(np.argsort(r + w)) for name, (r, w) in scores.items()}
    n_right = len(scores["cosine"][0])
    summed = ranks["cosine"] + ranks["ibm1"]
    scores["rank sum"] = (list(summed[:n_right]), list(summed[n_right:]))

    precision, recall, wrong_pairs = precision_recall(corpus, rows)
    print(
        f"{args.directory.name}, {args.noise} noise, seed {args.seed}: {len(rows)} pairs, "
        f"{wrong_pairs} wrong; {n_right} right and {len(scores['cosine'][1])} wrong candidates"
    )
    print("| signal | AUC | wrong caught at 1% of right lost |")
    print("|---|---|---|")
    for name, (right, wrong) in scores.items():
        if wrong:
            print(f"| {name} | {auc(right, wrong):.3f} | {caught_at(right, wrong)} |")
    print(f"\ndefault output: precision {precision:.3f} recall {recall:.3f}")
    for text in args.pair_cuts.split(","):
        cut = float(text)
        kept = [r for r in rows if cos(r["sentence_a"], r["sentence_b"]) >= cut]
        p, r, w = precision_recall(corpus, kept)
        print(f"cos(a, b) >= {cut:.2f}: precision {p:.3f} recall {r:.3f} ({w} wrong)")

    leans = other_pivot_leans(corpus, index, embeddings, rows, args.run)
    for text in args.other_pivot_margins.split(","):
        margin = float(text)
        dropped = {kc for kc, lean in leans.items() if lean > margin}
        kept = [r for r in rows if not dropped & set(candidates_of(r))]
        p, r, w = precision_recall(corpus, kept)
        caught = sum(1 for k, c in dropped if c not in corpus.originals.get(k, ()))
        print(
            f"closer to another pivot's candidate by > {margin:.2f}: precision {p:.3f} "
            f"recall {r:.3f} ({w} wrong; {len(dropped)} candidates dropped, {caught} wrong)"
        )
    return 0


def candidates_of(row: dict[str, Any]) -> list[tuple[str, str]]:
    """(pivot key, candidate) of both sentences of an output row."""
    key = pivot_key(row["pivot_sentence"])
    return [(key, row["sentence_a"]), (key, row["sentence_b"])]


def other_pivot_leans(
    corpus: Corpus, index: dict[str, int], embeddings: Any, rows: list[dict[str, Any]], run: Path
) -> dict[tuple[str, str], float]:
    """Per output candidate: its cosine to the closest kept candidate of another pivot,
    less its cosine to its closest group-mate.

    The pool is every (pivot, candidate) of the input whose score reaches the
    run's floor (``threshold.support.floor``, or the cut), as the run kept them.
    """
    from paramine.encoders.neighbours import nearest
    from paramine.schemas.text_keys import comparison_key

    from benchmarks.quality.line_scores import line_margin_scores, line_scores

    manifest = json.loads((run / "manifest.json").read_text())
    threshold = manifest["threshold"]
    floor = threshold.get("support", {}).get("floor", threshold["value"])
    if threshold.get("score") == "margin":
        sample = int(manifest["options"]["calibration_sample"])
        margin_k = int(threshold["margin_k"])
        line_score = line_margin_scores(corpus, index, embeddings, margin_k, sample)
    else:
        line_score = line_scores(corpus, index, embeddings)
    pool = sorted(
        {
            (pivot_key(p), c)
            for p, c, score in zip(corpus.pivots, corpus.candidates, line_score, strict=True)
            if p and c and score >= floor
        }
    )
    group_keys: dict[str, set[str]] = defaultdict(set)  # pivot key -> candidate keys
    for k, c in pool:
        group_keys[k].add(comparison_key(c))
    mates: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        for k, c in candidates_of(row):
            mates[k].add(c)
    queries = sorted({kc for row in rows for kc in candidates_of(row)})
    near_scores, near_ids = nearest(
        embeddings[[index[c] for _, c in pool]],
        embeddings[[index[c] for _, c in queries]],
        k=20,
    )
    leans = {}
    for (key, text), row_scores, row_ids in zip(queries, near_scores, near_ids, strict=True):
        own = max(
            float(embeddings[index[text]] @ embeddings[index[m]]) for m in mates[key] - {text}
        )
        other = -1.0
        for score, i in zip(row_scores, row_ids, strict=True):
            if i < 0:
                break  # fewer than k in the pool
            other_key = pool[i][0]
            if other_key == key or group_keys[other_key] & group_keys[key]:
                continue  # its own pivot, or a paraphrase of it
            other = float(score)
            break
        leans[(key, text)] = other - own
    return leans


if __name__ == "__main__":
    sys.exit(main())
