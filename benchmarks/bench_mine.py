"""Throughput of ``paramine mine`` against plain ``SentenceTransformer.encode``.

Both encode the same distinct sentences of a corpus, side by side in one run,
so the ratio holds on a noisy machine where absolute rates do not:

    ratio = pipeline sentences/s / raw encode sentences/s

The pipeline's time is the whole job on the in-process FnApiRunner: reading, prefilter,
scoring (RunInference), threshold calibration, grouping, pairing, Parquet and
manifest. Target: a ratio of at least 0.8.

    python benchmarks/bench_mine.py [CORPUS_FILE] [--model e5-small]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT.parent / "shared/corpora/tatoeba_test_v2021-08-07/eng-pol/test.txt"


def distinct_sentences(path: Path) -> tuple[list[str], int]:
    """The distinct sentences of a Tatoeba 4-column file, and its number of pairs."""
    texts: dict[str, None] = {}
    pairs = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        columns = line.split("\t")
        if len(columns) == 4:
            pairs += 1
            texts.setdefault(columns[2].strip())
            texts.setdefault(columns[3].strip())
    return list(texts), pairs


def time_raw_encode(model_spec: str, texts: list[str], repeats: int) -> list[float]:
    """Seconds to encode ``texts`` with plain ``encode``, once per repeat, after a warm-up."""
    from sentence_transformers import SentenceTransformer

    from encoders.models import resolve_model

    resolved = resolve_model(model_spec)
    model = SentenceTransformer(resolved.path, device="cpu")
    prefixed = [resolved.prefix + t for t in texts]
    model.encode(prefixed[:256], batch_size=128)
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        model.encode(prefixed, batch_size=128, normalize_embeddings=True)
        seconds.append(time.perf_counter() - start)
    return seconds


def time_pipeline(
    model_spec: str, corpus: Path, extra: list[str]
) -> tuple[float, dict, object, list[tuple]]:
    """Seconds for the whole mining job, its counters, its manifest and its rows."""
    from pipelines.mine import run_with_metrics
    from schemas.reader import read_pairs

    with tempfile.TemporaryDirectory() as tmp:
        argv = [
            str(corpus),
            "--src-lang",
            "en",
            "--tgt-lang",
            "pl",
            "--model",
            model_spec,
            "--output",
            f"{tmp}/out",
            *extra,
        ]
        start = time.perf_counter()
        manifest, counters = run_with_metrics(argv)
        seconds = time.perf_counter() - start
        table, _ = read_pairs(f"{tmp}/out")
        rows = sorted(tuple(row.values()) for row in table.to_pylist())
        return seconds, counters, manifest, rows


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "corpus",
        nargs="?",
        default=str(DEFAULT_CORPUS),
        help="a Tatoeba 4-column TSV (default: the shared eng-pol test set)",
    )
    parser.add_argument("--model", default="e5-small", help="encoder (default: %(default)s)")
    parser.add_argument(
        "--repeats",
        type=int,
        default=2,
        help="raw encode and pipeline runs, alternated (default: %(default)s)",
    )
    parser.add_argument("pipeline_args", nargs="*", help="extra `paramine mine` flags after --")
    args = parser.parse_args(argv)
    corpus = Path(args.corpus)
    texts, pairs = distinct_sentences(corpus)
    print(f"corpus: {corpus} ({pairs:,} pairs, {len(texts):,} distinct sentences)")
    print(f"model: {args.model}; torch threads: {os.cpu_count()} cores")

    raw, piped, counters, manifest, outputs = [], [], {}, None, []
    for _ in range(args.repeats):
        # Alternate the two so that machine noise hits both alike.
        raw += time_raw_encode(args.model, texts, 1)
        seconds, counters, manifest, rows = time_pipeline(args.model, corpus, args.pipeline_args)
        piped.append(seconds)
        outputs.append(rows)

    raw_s, pipe_s = statistics.median(raw), statistics.median(piped)
    raw_rate, pipe_rate = len(texts) / raw_s, len(texts) / pipe_s
    encoded = counters.get("texts_encoded", 0)
    scored = counters.get("pairs_scored", 0)
    print()
    print(
        f"raw encode     {raw_s:8.1f} s  {raw_rate:8.1f} sentences/s   runs: "
        + ", ".join(f"{s:.1f}" for s in raw)
    )
    print(
        f"pipeline       {pipe_s:8.1f} s  {pipe_rate:8.1f} sentences/s   runs: "
        + ", ".join(f"{s:.1f}" for s in piped)
    )
    print(f"ratio (pipeline / raw sentences/s): {pipe_rate / raw_rate:.3f}   (target >= 0.8)")
    print(
        f"encoder calls (texts encoded) per input pair: pipeline {encoded / pairs:.3f} "
        f"({encoded:,} texts, the calibration sample's included, for {scored:,} pairs); "
        f"raw {len(texts) / pairs:.3f}"
    )
    identical = all(rows == outputs[0] for rows in outputs)
    print(f"rows identical across the {len(outputs)} pipeline runs: {identical}")
    if manifest is not None:
        print(
            f"pairs written: {manifest.rows['pairs']:,}; threshold: {manifest.threshold['value']} "
            f"({manifest.threshold['mode']})"
        )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
