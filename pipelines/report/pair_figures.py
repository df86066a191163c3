"""The report's figures of the written pairs themselves: groups, pivot languages, lengths, samples.

What ``report.stats.gather_stats`` reads from the Parquet files alone (no
manifest): distributions over the pairs a run wrote and a sample of them
chosen by a stable hash, so a rebuilt report shows the same pairs.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
from paramine.schemas.text_keys import inflection_variants, stable_hash

#: Pairs shown per sample in the report.
SAMPLE_SIZE = 5
#: Sentence lengths (in words) from which on sentences share the last bin.
MAX_LENGTH_BIN = 60


def _count_histogram(values: Iterable[int]) -> dict[str, int]:
    counter = collections.Counter(int(v) for v in values)
    return {str(k): counter[k] for k in sorted(counter)}


def groups(pairs: pa.Table) -> dict[str, Any]:
    """Group sizes (distinct candidates per pivot) and pairs made per group.

    A group is a pivot in its language: one text in two pivot languages is two groups.
    """
    sizes: dict[tuple[str, str], int] = {}
    pairs_per_group: collections.Counter[tuple[str, str]] = collections.Counter()
    for pivot_lang, pivot, size in zip(
        pairs.column("pivot_lang").to_pylist(),
        pairs.column("pivot_sentence").to_pylist(),
        pairs.column("group_size").to_pylist(),
        strict=True,
    ):
        sizes[(pivot_lang, pivot)] = int(size)
        pairs_per_group[(pivot_lang, pivot)] += 1
    n = len(sizes)
    return {
        "groups": n,
        "mean_size": round(sum(sizes.values()) / n, 4) if n else 0.0,
        "mean_pairs": round(sum(pairs_per_group.values()) / n, 4) if n else 0.0,
        "size_histogram": _count_histogram(sizes.values()),
        "pairs_histogram": _count_histogram(pairs_per_group.values()),
    }


def pivot_languages(pairs: pa.Table) -> dict[str, dict[str, int]]:
    """Pairs and groups written per pivot language, most pairs first."""
    written: collections.Counter[str] = collections.Counter()
    pivots: dict[str, set[str]] = collections.defaultdict(set)
    for pivot_lang, pivot in zip(
        pairs.column("pivot_lang").to_pylist(),
        pairs.column("pivot_sentence").to_pylist(),
        strict=True,
    ):
        written[pivot_lang] += 1
        pivots[pivot_lang].add(pivot)
    return {
        lang: {"pairs": n, "groups": len(pivots[lang])}
        for lang, n in sorted(written.items(), key=lambda item: (-item[1], item[0]))
    }


def inflection_share(pairs: pa.Table) -> dict[str, Any]:
    """Pairs whose sentences differ only in word endings (``inflection_variants``)."""
    n = sum(
        inflection_variants(a, b)
        for a, b in zip(
            pairs.column("sentence_a").to_pylist(),
            pairs.column("sentence_b").to_pylist(),
            strict=True,
        )
    )
    return {"pairs": n, "share": round(n / len(pairs), 4) if len(pairs) else 0.0}


def _words(text: str) -> int:
    return len(text.split())


def lengths(pairs: pa.Table) -> dict[str, Any]:
    """Sentence lengths in words of the distinct pivots and candidates written."""
    pivots = set(pairs.column("pivot_sentence").to_pylist())
    candidates = set(pairs.column("sentence_a").to_pylist()) | set(
        pairs.column("sentence_b").to_pylist()
    )

    def summary(texts: set[str]) -> dict[str, Any]:
        words = [min(_words(t), MAX_LENGTH_BIN) for t in texts]
        return {
            "n": len(words),
            "mean": round(float(np.mean(words)), 3) if words else 0.0,
            "histogram": _count_histogram(words),
        }

    return {
        "unit": "words",
        "last_bin": f"{MAX_LENGTH_BIN} or more",
        "pivot": summary(pivots),
        "candidate": summary(candidates),
    }


def random_pairs(pairs: pa.Table, n: int = SAMPLE_SIZE) -> list[dict[str, Any]]:
    """``n`` written pairs chosen by a stable hash of their ids: the same on every rebuild."""
    columns = ["pair_id", "sentence_a", "sentence_b", "pivot_sentence", "score_a", "score_b"]
    rows = pairs.select(columns).to_pylist()
    rows.sort(key=lambda r: stable_hash("report-sample", r["pair_id"]))
    out = []
    for r in rows[:n]:
        out.append(
            {
                "pair_id": r["pair_id"],
                "sentence_a": r["sentence_a"],
                "sentence_b": r["sentence_b"],
                "pivot": r["pivot_sentence"],
                "score_a": round(float(r["score_a"]), 6),
                "score_b": round(float(r["score_b"]), 6),
            }
        )
    return out
