"""Training cost per step: MNRL or cached MNRL, batch, hard negatives, the in-batch contests scored.

Transformer (e5-small by default, built offline) + pooling (LSTM 1024, the
paper's), AdamW, 128 tokens at most (Dadas 2022). The pairs are real
sentences: the LASER Tatoeba pol-eng test set (a Polish sentence and its
English translation per pair), so the token lengths are those of short
everyday sentences. With ``--hard-negatives N`` each pair gets N negatives
mined as ``paramine train --hard-negatives`` mines them
(:mod:`paramine.encoders.training.hard_negatives`, the base model's vectors,
faiss); each is one more text per pair to encode.

Prints one row per setting: seconds per step (median of the timed steps),
pairs/s, CPU seconds per step, and the peak memory of the process (RSS on
CPU; the CUDA allocator's peak on a GPU). Each setting runs in a process of
its own, so each peak is its own. Steps run one after another without the
trainer's data loading, so the figures are the model's, not the loader's.

The cached loss (GradCache) gives the same loss and gradient as MNRL; what
it buys is memory that does not grow with the batch (``--mini-batch-size``
texts per forward pass), for one more forward pass per step.

    python -m benchmarks.speed.bench_train                        # the 8 rows, CPU, e5-small
    python -m benchmarks.speed.bench_train --device cuda          # where a GPU is lent
    python -m benchmarks.speed.bench_train --loss mnrl --batch-size 64 --hard-negatives 0 --steps 5
    python -m benchmarks.speed.bench_train --loss mnrl --batch-size 32 --hard-negatives 0 \
        --loss-directions forward all                            # what --loss-directions costs
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from paramine.encoders.training.recipes import LOSS_DIRECTIONS

from benchmarks.lib.paths import LASER

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CORPUS = LASER


def read_pairs(corpus: Path) -> list[tuple[str, str]]:
    """The 1000 (Polish, English) pairs of the LASER Tatoeba test set."""
    pol = (corpus / "tatoeba.pol-eng.pol").read_text(encoding="utf-8").splitlines()
    eng = (corpus / "tatoeba.pol-eng.eng").read_text(encoding="utf-8").splitlines()
    return list(zip(pol, eng, strict=True))


def to_device(features: dict, device: object) -> dict:
    """The tensors of a feature dict on ``device``; other entries as they are."""
    return {k: v.to(device) if hasattr(v, "to") else v for k, v in features.items()}


def with_negatives(
    base: object, prefix: str, pairs: list[tuple[str, str]], count: int
) -> list[tuple[str, ...]]:
    """Each pair with ``count`` hard negatives, as ``paramine train`` mines them.

    The pairs are one-to-one translations, so every pair is its own group;
    pairs that got fewer than ``count`` negatives are left out.
    """
    from paramine.encoders.evaluation.suite_eval import model_encoder
    from paramine.encoders.training.hard_negatives import mine_hard_negatives

    anchors, positives = [a for a, _ in pairs], [b for _, b in pairs]
    mined = mine_hard_negatives(
        anchors, positives, anchors, model_encoder(base, prefix, 64), count, 0.05
    )
    return [(*pair, *neg) for pair, neg in zip(pairs, mined.negatives, strict=True) if neg]


def measure(args: argparse.Namespace, setting: dict) -> dict:
    """Time ``args.steps`` optimizer steps after ``args.warmup`` untimed ones."""
    import torch
    from paramine.encoders.models.resolve import resolve_model
    from paramine.encoders.modules.lstm_pooling import load_encoder
    from paramine.encoders.training.modeling import build_model, make_loss

    torch.manual_seed(0)
    resolved = resolve_model(args.base)
    base = load_encoder(resolved.path, device=args.device)
    prefix = resolved.prefix
    rows: list[tuple[str, ...]] = read_pairs(args.corpus)
    if setting["negatives"]:
        rows = with_negatives(base, prefix, rows, setting["negatives"])
    batch_size = setting["batch_size"]
    model = build_model(base, setting["pooling"], args.lstm_hidden, False, False, 128, args.device)
    model.train()
    loss_fn = make_loss(model, setting["loss"], args.mini_batch_size, setting["directions"])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    device = model.device
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    wall: list[float] = []
    cpu: list[float] = []
    for step in range(args.warmup + args.steps):
        start = (step * batch_size) % (len(rows) - batch_size)
        batch = rows[start : start + batch_size]
        columns = list(zip(*batch, strict=True))  # anchor, positive, negative_1 ...
        features = [
            to_device(model.preprocess([prefix + text for text in column]), device)
            for column in columns
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
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    if device.type == "cuda":
        peak = torch.cuda.max_memory_allocated() / 2**30
    return {
        **setting,
        "s_per_step": per_step,
        "pairs_per_s": batch_size / per_step,
        "cpu_s_per_step": statistics.median(cpu),
        "peak_gb": peak,
        "params_m": sum(p.numel() for p in model.parameters()) / 1e6,
        "rows": len(rows),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure each setting in a process of its own and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="e5-small", help="base model (default e5-small)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    parser.add_argument(
        "--pooling", nargs="+", default=["lstm"], choices=["lstm", "mean", "lstm-residual"]
    )
    parser.add_argument("--loss", nargs="+", default=["mnrl", "cached"], choices=["mnrl", "cached"])
    parser.add_argument(
        "--loss-directions",
        nargs="+",
        default=["forward"],
        choices=list(LOSS_DIRECTIONS),
        help="the in-batch contests the loss scores (paramine train --loss-directions)",
    )
    parser.add_argument("--batch-size", nargs="+", type=int, default=[64, 256])
    parser.add_argument(
        "--hard-negatives", nargs="+", type=int, default=[0, 1], help="negatives per pair"
    )
    parser.add_argument("--mini-batch-size", type=int, default=32, help="cached loss (32)")
    parser.add_argument("--lstm-hidden", type=int, default=1024, help="the paper's 1024")
    parser.add_argument("--steps", type=int, default=3, help="timed steps (default 3)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps first (default 1)")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="laser_tatoeba_v1 folder")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a setting, as JSON: measure it here
    args = parser.parse_args(argv)

    if args.one:
        print(json.dumps(measure(args, json.loads(args.one))))
        return 0
    import torch

    print(
        f"base {args.base}, LSTM hidden {args.lstm_hidden}, cached mini-batch "
        f"{args.mini_batch_size}, {args.steps} timed steps after {args.warmup}; device "
        f"{args.device}, torch threads {torch.get_num_threads()}, load average "
        f"{os.getloadavg()[0]:.1f}",
        file=sys.stderr,
    )
    memory = "peak GPU GB" if args.device.startswith("cuda") else "peak RSS GB"
    print(
        f"| pooling | loss | directions | batch | negatives | s/step | pairs/s | CPU-s/step "
        f"| {memory} |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    grid = itertools.product(
        args.pooling, args.hard_negatives, args.batch_size, args.loss, args.loss_directions
    )
    for pooling, negatives, batch_size, loss, directions in grid:
        setting = {"pooling": pooling, "loss": loss, "batch_size": batch_size}
        setting |= {"negatives": negatives, "directions": directions}
        # The flags as given, then the one setting: the child measures only it.
        command = [sys.executable, "-m", "benchmarks.speed.bench_train"]
        command += argv if argv is not None else sys.argv[1:]
        done = subprocess.run(
            [*command, "--one", json.dumps(setting)], check=True, stdout=subprocess.PIPE, text=True
        )
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"| {pooling} | {loss} | {directions} | {batch_size} | {negatives} | "
            f"{r['s_per_step']:.2f} | "
            f"{r['pairs_per_s']:.1f} | {r['cpu_s_per_step']:.2f} | {r['peak_gb']:.1f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
