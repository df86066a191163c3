"""``paramine mine`` side by side: the default pipeline, ``--write-scored``, and plain encode.

Three things run in turn, repeated, on the same corpus, so that the ratios
hold on a noisy machine where absolute rates do not:

- raw: plain ``SentenceTransformer.encode`` of every distinct sentence;
- scored: ``paramine mine --write-scored``, which scores every prefiltered
  pair and so encodes every distinct sentence, as the pipeline did before it
  grouped pairs before scoring;
- default: ``paramine mine``, which encodes only the texts of pivots with two
  or more distinct candidates, plus the calibration sample.

Figures:

    texts_per_pair = texts the default run encoded (calibration included) / input pairs
    speedup        = scored run's wall time / default run's wall time
    ratio          = scored run's sentences/s / raw encode's sentences/s

Each pipeline time is the whole job on the in-process FnApiRunner: reading,
prefilter, grouping, encoding, calibration, pairing, Parquet, manifest and
report. Targets: texts_per_pair <= 0.3, speedup >= 4, ratio >= 0.8.

    python -m benchmarks.speed.bench_mine [CORPUS_FILE] [--model e5-small] [--repeats 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.lib.paths import TATOEBA

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DEFAULT_CORPUS = TATOEBA / "eng-pol" / "test.txt"


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
    from paramine.encoders.models.resolve import resolve_model
    from sentence_transformers import SentenceTransformer

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
) -> tuple[float, object, list[tuple]]:
    """Seconds for the whole mining job, its manifest and its rows."""
    from paramine.pipelines.run.mine import run
    from paramine.schemas.reader import read_pairs

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
            "--quiet",
            *extra,
        ]
        start = time.perf_counter()
        manifest = run(argv)
        seconds = time.perf_counter() - start
        table, _ = read_pairs(f"{tmp}/out")
        rows = sorted(tuple(row.values()) for row in table.to_pylist())
        return seconds, manifest, rows


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
        help="rounds of raw encode, --write-scored run and default run (default: %(default)s)",
    )
    parser.add_argument("pipeline_args", nargs="*", help="extra `paramine mine` flags after --")
    args = parser.parse_args(argv)
    corpus = Path(args.corpus)
    texts, pairs = distinct_sentences(corpus)
    print(f"corpus: {corpus} ({pairs:,} pairs, {len(texts):,} distinct sentences)")
    print(f"model: {args.model}; {os.cpu_count()} cores")

    raw: list[float] = []
    scored: list[float] = []
    default: list[float] = []
    manifests: dict[str, object] = {}
    outputs: list[list[tuple]] = []
    for _ in range(args.repeats):
        # In turn, so that machine noise hits all three alike.
        raw += time_raw_encode(args.model, texts, 1)
        seconds, manifests["scored"], rows = time_pipeline(
            args.model, corpus, ["--write-scored", *args.pipeline_args]
        )
        scored.append(seconds)
        outputs.append(rows)
        seconds, manifests["default"], rows = time_pipeline(args.model, corpus, args.pipeline_args)
        default.append(seconds)
        outputs.append(rows)

    raw_s, scored_s, default_s = (statistics.median(t) for t in (raw, scored, default))
    raw_rate, scored_rate = len(texts) / raw_s, len(texts) / scored_s
    print()
    for name, runs in (("raw encode", raw), ("--write-scored", scored), ("default", default)):
        print(
            f"{name:<16}{statistics.median(runs):8.1f} s   runs: "
            + ", ".join(f"{s:.1f}" for s in runs)
        )
    encoding = {k: m.extra.encoding or {} for k, m in manifests.items()}  # type: ignore[attr-defined]
    texts_per_pair = encoding["default"].get("texts_per_input_pair", 0.0)
    speedup = scored_s / default_s
    ratio = scored_rate / raw_rate
    print(
        f"texts encoded per input pair: default {texts_per_pair:.3f} "
        f"({encoding['default'].get('texts_encoded', 0):,} texts, calibration included), "
        f"--write-scored {encoding['scored'].get('texts_per_input_pair', 0.0):.3f}"
    )
    print(
        "single-candidate share of input pairs: "
        f"{encoding['default'].get('single_candidate_share', 0.0):.3f}"
    )
    identical = all(rows == outputs[0] for rows in outputs)
    print(f"rows identical across all {len(outputs)} pipeline runs (both modes): {identical}")
    manifest = manifests["default"]
    print(
        f"pairs written: {manifest.rows.pairs:,}; threshold: "  # type: ignore[attr-defined]
        f"{manifest.cut.value} ({manifest.cut.mode})"  # type: ignore[attr-defined]
    )
    print(f"texts_per_pair={texts_per_pair:.3f} speedup={speedup:.2f} ratio={ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
