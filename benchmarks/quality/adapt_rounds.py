"""bench_quality ``--adapt``: run ``paramine adapt`` on the corrupted input, judge every round.

The planted lines stay in the loop's input as they are in a real dump: the
loop trains on every aligned line it keeps, so a round that learned a planted
line's wrong meaning would show it as lost precision in the rounds after.
Each round's pass is judged as a plain run is (``run_figures.evaluate``), its
per-line scores read from the pass's own ``scored/`` table (what its cut saw,
with the round's encoder), so the losses by stage are the pass's.
"""

from __future__ import annotations

import math
import shlex
import time
from pathlib import Path
from typing import Any

from paramine.schemas.adapt_record import AdaptRecord, held_out_score

from benchmarks.quality.noisy_corpus import Corpus
from benchmarks.quality.run_figures import evaluate


def run_loop(
    inputs: list[Path], out: Path, pivot_lang: str, lang: str, model: str, flags: str
) -> tuple[AdaptRecord, float]:
    """Run ``paramine adapt`` on the inputs; its record and wall seconds."""
    import json

    from paramine.pipelines.adapt.command import main

    started = time.monotonic()
    main(
        [
            *map(str, inputs),
            "--src-lang",
            pivot_lang,
            "--tgt-lang",
            lang,
            "--model",
            model,
            "--output",
            str(out),
            "--runner",
            "FnApiRunner",
            *shlex.split(flags),
        ]
    )
    seconds = time.monotonic() - started
    with open(out / "adapt.json", encoding="utf-8") as f:
        return AdaptRecord.from_record(json.load(f)), seconds


def pass_scores(corpus: Corpus, dataset: str) -> list[float]:
    """Every corpus line's score in a pass's ``scored/`` table; -inf for lines it lacks."""
    from paramine.schemas.reader import read_scored

    table, _ = read_scored(dataset)
    found = dict(
        zip(
            zip(table["pivot"].to_pylist(), table["candidate"].to_pylist(), strict=True),
            table["score"].to_pylist(),
            strict=True,
        )
    )
    return [
        float(found.get((p, c), -math.inf))
        for p, c in zip(corpus.pivots, corpus.candidates, strict=True)
    ]


def judge_rounds(corpus: Corpus, record: AdaptRecord) -> list[tuple[str, dict[str, Any]]]:
    """Each round's pass judged: precision, recall, planted lines, losses; and the round's facts."""
    from paramine.schemas.reader import read_pairs

    results = []
    for round_ in record.rounds:
        mined = round_.mining
        if mined is None:
            continue
        table, manifest = read_pairs(mined.dataset)
        columns = ["pivot_sentence", "pivot_lang", "sentence_a", "sentence_b"]
        rows = table.select(columns).to_pylist()
        result = evaluate(corpus, pass_scores(corpus, mined.dataset), rows, manifest)
        result["threshold"] = manifest.threshold
        result["seconds"] = mined.seconds
        training = round_.training
        if training is not None:
            result["train_seconds"] = training.seconds
            result["held_out"] = held_out_score(training.held_out)
            result["held_out_base"] = held_out_score(training.held_out_base)
            result["train_rows"] = training.rows
        label = f"round {round_.round}" + (" (final)" if round_.round == record.final_round else "")
        results.append((label, result))
    return results


def format_rounds(results: list[tuple[str, dict[str, Any]]], seconds: float) -> str:
    """The rounds' time and held-out figures, a Markdown table, and the loop's wall time."""
    lines = [
        "| round | training rows | train s | mine s | held-out bitext retrieval | pairs "
        "| precision | recall |",
        "|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for label, r in results:
        held = ""
        if r.get("held_out") is not None:
            held = f"{r['held_out_base']:.2f} -> {r['held_out']:.2f}"
        lines.append(
            f"| {label} | {r.get('train_rows', '')} | {r.get('train_seconds', '')} "
            f"| {r['seconds']} | {held} | {r['pairs']:,} | {r['precision']:.4f} "
            f"| {r['recall']:.4f} |"
        )
    lines.append(f"\nthe whole loop: {seconds / 60:.1f} min wall")
    return "\n".join(lines)
