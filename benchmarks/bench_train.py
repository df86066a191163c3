"""Training throughput of the LSTM-pooled encoder, in pairs per second, with the paper's settings.

Transformer (e5-small by default, built offline) + LSTMPooling (hidden 1024),
multiple-negatives ranking loss, AdamW at lr 2e-6, batch 64, 128 tokens at
most (Dadas 2022). The pairs are real sentences: the LASER Tatoeba pol-eng
test set (a Polish sentence and its English translation per pair), so the
token lengths are those of short everyday sentences.

Prints, per pooling: seconds per step (median of the timed steps), pairs/s,
CPU seconds per step, and peak memory. Steps run one after another without
the trainer's data loading, so the figures are the model's, not the loader's.

    python benchmarks/bench_train.py                       # CPU, e5-small
    python benchmarks/bench_train.py --device cuda         # where a GPU is lent
    python benchmarks/bench_train.py --pooling lstm mean --steps 5
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "laser_tatoeba_v1"


def read_pairs(corpus: Path) -> list[tuple[str, str]]:
    """The 1000 (Polish, English) pairs of the LASER Tatoeba test set."""
    pol = (corpus / "tatoeba.pol-eng.pol").read_text(encoding="utf-8").splitlines()
    eng = (corpus / "tatoeba.pol-eng.eng").read_text(encoding="utf-8").splitlines()
    return list(zip(pol, eng, strict=True))


def to_device(features: dict, device: object) -> dict:
    """The tensors of a feature dict on ``device``; other entries as they are."""
    return {k: v.to(device) if hasattr(v, "to") else v for k, v in features.items()}


def measure(args: argparse.Namespace, pooling: str, pairs: list[tuple[str, str]]) -> dict:
    """Time ``args.steps`` optimizer steps after ``args.warmup`` untimed ones."""
    import torch
    from paramine.encoders.lstm_pooling import load_encoder
    from paramine.encoders.models.resolve import resolve_model
    from paramine.encoders.training.modeling import build_model
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    torch.manual_seed(0)
    resolved = resolve_model(args.base)
    base = load_encoder(resolved.path, device=args.device)
    model = build_model(base, pooling, args.lstm_hidden, False, False, 128, args.device)
    model.train()
    loss_fn = MultipleNegativesRankingLoss(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-6)
    device = model.device
    prefix = resolved.prefix
    wall: list[float] = []
    cpu: list[float] = []
    for step in range(args.warmup + args.steps):
        start = (step * args.batch_size) % (len(pairs) - args.batch_size)
        batch = pairs[start : start + args.batch_size]
        features = [
            to_device(model.preprocess([prefix + a for a, _ in batch]), device),
            to_device(model.preprocess([prefix + b for _, b in batch]), device),
        ]
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0, c0 = time.perf_counter(), time.process_time()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(features, None)
        loss.backward()
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        if step >= args.warmup:
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    per_step = statistics.median(wall)
    return {
        "pooling": pooling,
        "s_per_step": per_step,
        "pairs_per_s": args.batch_size / per_step,
        "cpu_s_per_step": statistics.median(cpu),
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
        "params_m": sum(p.numel() for p in model.parameters()) / 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="e5-small", help="base model (default e5-small)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    parser.add_argument("--pooling", nargs="+", default=["lstm"], choices=["lstm", "mean"])
    parser.add_argument("--batch-size", type=int, default=64, help="the paper's 64")
    parser.add_argument("--lstm-hidden", type=int, default=1024, help="the paper's 1024")
    parser.add_argument("--steps", type=int, default=5, help="timed steps (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps first (default 1)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="laser_tatoeba_v1 folder")
    args = parser.parse_args(argv)

    import torch

    pairs = read_pairs(args.corpus)
    print(
        f"base {args.base}, batch {args.batch_size}, LSTM hidden {args.lstm_hidden}, "
        f"lr 2e-6, {args.steps} timed steps after {args.warmup}; device {args.device}, "
        f"torch threads {torch.get_num_threads()}, load average "
        f"{os.getloadavg()[0]:.1f}",
        file=sys.stderr,
    )
    print("| pooling | s/step | pairs/s | CPU-s/step | peak RSS GB | params (M) |")
    print("|---|---:|---:|---:|---:|---:|")
    for pooling in args.pooling:
        r = measure(args, pooling, pairs)
        print(
            f"| {r['pooling']} | {r['s_per_step']:.2f} | {r['pairs_per_s']:.1f} | "
            f"{r['cpu_s_per_step']:.2f} | {r['peak_rss_gb']:.1f} | {r['params_m']:.1f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
