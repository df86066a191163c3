"""Tiny mined datasets for the trainer and evaluator tests (a helper, not a test module)."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from paramine.schemas.dataset import PAIRS_SCHEMA
from paramine.schemas.manifest import Manifest, write_manifest

# Words the tiny model's tokenizer was trained on.
WORDS = [
    *("the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog"),
    *("ala", "ma", "kota", "to", "jest", "zdanie", "po", "polsku"),
    *("this", "is", "a", "sentence", "in", "english", "dobry", "wieczór"),
    *("jak", "się", "masz", "how", "are", "you", "today", "my", "friend"),
]


def make_rows(groups: int = 48, seed: int = 0) -> list[dict]:
    """Paraphrase-like rows: in each group, b is a with words swapped and one changed."""
    rng = random.Random(seed)
    rows = []
    for g in range(groups):
        words = rng.sample(WORDS, 5)
        a = " ".join(words)
        b_words = words[:]
        b_words[0], b_words[1] = b_words[1], b_words[0]
        b = " ".join(b_words)
        rows.append(
            {
                "pair_id": f"p{g:04d}",
                "sentence_a": a,
                "sentence_b": b,
                "lang": "pl",
                "pivot_sentence": f"Pivot sentence number {g}.",
                "pivot_lang": "en",
                "score_a": 0.80 + (g % 10) / 100,
                "score_b": 0.85,
                "group_size": 2,
                "corpus": "synthetic",
            }
        )
    return rows


def write_dataset(folder: Path, rows: list[dict], with_manifest: bool = True) -> str:
    """Write rows as a PAIRS_SCHEMA Parquet dataset with (optionally) its manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=PAIRS_SCHEMA)
    pq.write_table(table, folder / "pairs-00000.parquet")
    if with_manifest:
        manifest = Manifest(
            created_at="2026-01-01T00:00:00Z",
            code_version="test",
            options={},
            model={"id": "tiny"},
            threshold={"value": 0.8},
            inputs=[],
            counts={},
            files={"pairs": ["pairs-00000.parquet"]},
            rows={"pairs": len(rows)},
        )
        write_manifest(str(folder), manifest)
    return str(folder)


#: A null as a run's calibration records it: mismatched pairs score 0.0 to 1.0, evenly.
NULL_THRESHOLD = {
    "value": 0.98,
    "score": "cosine",
    "mismatched_percentiles": [i / 100 for i in range(101)],
}


def write_scored_dataset(
    folder: Path,
    rows: list[dict],
    lines: list[tuple[str, str, float]],
    threshold: dict | None = None,
) -> str:
    """A dataset with a ``scored/`` table: its pairs, and every aligned line with its score.

    ``lines``: (pivot, candidate, score); ``threshold``: the manifest's
    record (default ``NULL_THRESHOLD``).
    """
    from paramine.schemas.dataset import SCORED_SCHEMA

    url = write_dataset(folder, rows, with_manifest=False)
    scored = [
        {
            "pivot": pivot,
            "candidate": candidate,
            "pivot_lang": "en",
            "lang": "pl",
            "corpus": "synthetic",
            "shard": "synthetic.en",
            "line": i + 1,
            "score": score,
            "passed": score >= 0.98,
        }
        for i, (pivot, candidate, score) in enumerate(lines)
    ]
    (folder / "scored").mkdir()
    pq.write_table(
        pa.Table.from_pylist(scored, schema=SCORED_SCHEMA), folder / "scored" / "part-0.parquet"
    )
    manifest = Manifest(
        created_at="2026-01-01T00:00:00Z",
        code_version="test",
        options={},
        model={"id": "tiny"},
        threshold=dict(threshold or NULL_THRESHOLD),
        inputs=[],
        counts={},
        files={"pairs": ["pairs-00000.parquet"], "scored": ["scored/part-0.parquet"]},
        rows={"pairs": len(rows), "scored": len(scored)},
    )
    write_manifest(url, manifest)
    return url
