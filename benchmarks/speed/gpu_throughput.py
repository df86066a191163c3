"""Encoding throughput where a GPU is lent: the mining handler against plain encode, and the CPU.

With the real default encoder (e5-small, materialized offline) on the same
real sentences (Tatoeba eng-pol, both sides), encoded as a mining run encodes
them:

- ``handler cuda fp16``: ``EncoderHandler`` as a GPU worker runs it (length
  buckets by token budget, fp16, SDPA attention);
- ``encode cuda``: sentence-transformers' plain ``SentenceTransformer.encode``
  on the same GPU, its defaults (fp32, batch 32);
- ``handler cpu openvino``: the CPU default of ``paramine mine`` (``handler cpu
  torch`` where OpenVINO is not installed, as on a GPU image without it).

Prints texts/s of each, the ratios, the GPU's name and the peak memory the
CUDA allocator held. ``--dry-run`` runs the same code on the CPU with the
tiny test model (``--model PATH``) and a few sentences, and says it was a
dry run: the script is tested so that it works when a GPU comes.

    python -m benchmarks.speed.gpu_throughput [--sentences 4000] [--json FILE]
    python -m benchmarks.speed.gpu_throughput --dry-run --model TINY --sentences 64
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.lib.paths import TATOEBA, TATOEBA_STEM

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

MOSES = TATOEBA / "eng-pol" / TATOEBA_STEM


def sentences(count: int) -> list[str]:
    """``count`` distinct real sentences, English and Polish alternating."""
    # Lines end at "\n" only: a Tatoeba line may hold U+2028, which splitlines() splits at.
    eng, pol = (
        (MOSES.parent / f"{MOSES.name}.{ext}").read_text(encoding="utf-8").split("\n")
        for ext in ("eng", "pol")
    )
    mixed = [s for pair in zip(eng, pol, strict=True) for s in pair if s]
    return list(dict.fromkeys(mixed))[:count]


def timed(encode: Any, texts: list[str], rounds: int) -> float:
    """Texts per second of ``encode(texts)``: the best of ``rounds`` after one warm-up."""
    encode(texts[: min(len(texts), 64)])
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        encode(texts)
        best = min(best, time.perf_counter() - start)
    return len(texts) / best


def handler_encoder(model: str, device: str, backend: str) -> Any:
    """A mining worker's loaded encoder: ``EncoderHandler.load_model`` with the run's prefix."""
    from paramine.encoders.inference.handler import EncoderHandler

    handler = EncoderHandler(model, device=device, backend=backend)
    loaded = handler.load_model()
    prefix = handler.prefix
    return lambda texts: loaded.encode([prefix + t for t in texts])


def plain_encoder(model: str, device: str) -> Any:
    """sentence-transformers' own ``encode``, its defaults."""
    from paramine.encoders.models.resolve import resolve_model
    from sentence_transformers import SentenceTransformer

    resolved = resolve_model(model)
    st = SentenceTransformer(resolved.path, device=device)
    prefix = resolved.prefix
    return lambda texts: st.encode([prefix + t for t in texts], show_progress_bar=False)


def cpu_default_backend(dry_run: bool) -> str:
    """The CPU backend to compare with: OpenVINO where installed, else torch (and in a dry run)."""
    import importlib.util

    return "openvino" if not dry_run and importlib.util.find_spec("openvino") else "torch"


def main(argv: list[str] | None = None) -> int:
    """Measure and print; ``--dry-run`` on the CPU with a tiny model."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="e5-small", help="encoder (default e5-small)")
    parser.add_argument("--sentences", type=int, default=4000, help="texts encoded (4000)")
    parser.add_argument("--rounds", type=int, default=2, help="timed rounds, best kept (2)")
    parser.add_argument("--dry-run", action="store_true", help="the CPU stands in for the GPU")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    import torch

    texts = sentences(args.sentences)
    gpu = torch.cuda.is_available() and not args.dry_run
    device = "cuda" if gpu else "cpu"
    figures: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if gpu else "cpu (dry run)",
        "texts": len(texts),
        "model": args.model,
    }
    if gpu:
        torch.cuda.reset_peak_memory_stats()
    cpu_backend = cpu_default_backend(args.dry_run)
    rates = {
        f"handler {device} {'fp16' if gpu else 'fp32'}": timed(
            handler_encoder(args.model, device, "torch"), texts, args.rounds
        ),
        f"encode {device}": timed(plain_encoder(args.model, device), texts, args.rounds),
        f"handler cpu {cpu_backend}": timed(
            handler_encoder(args.model, "cpu", cpu_backend),
            texts[: max(len(texts) // 4, 1)],
            1,
        ),
    }
    figures["texts_per_s"] = {name: round(rate, 1) for name, rate in rates.items()}
    first, second, cpu = rates.values()
    figures["handler_over_encode"] = round(first / second, 2)
    figures["handler_over_cpu"] = round(first / cpu, 2)
    if gpu:
        figures["peak_gpu_memory_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    print(f"device: {figures['device']}; {len(texts)} texts, model {args.model}")
    for name, rate in figures["texts_per_s"].items():
        print(f"  {name:28s} {rate:10.1f} texts/s")
    print(
        f"  handler / encode {figures['handler_over_encode']}x; "
        f"handler / CPU {cpu_backend} {figures['handler_over_cpu']}x"
    )
    if "peak_gpu_memory_mib" in figures:
        print(f"  peak GPU memory {figures['peak_gpu_memory_mib']} MiB")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
