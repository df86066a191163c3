"""Encoding speed and agreement of the inference backends, side by side in one run.

CPU (default): the same real sentences (Tatoeba eng-pol, both sides) encoded
by each backend with the default model (e5-small) through the handler's own
unpadded encoding, rounds alternated so that machine noise hits all alike;
prints sentences/s, the ratio to torch fp32, and the largest difference to
torch fp32 of the (English, Polish) pairs' cosines. Then mines eng-pol with
each backend and prints the share of identical pairs (same pair_id set).
Target for the best CPU backend: >= 2x torch fp32, >= 98% identical pairs.

GPU (``--device cuda``): a base-size model with random weights (XLM-R base
shape, no download; the e5-small tokenizer) encoded by sentence-transformers'
default ``encode`` and by the mining handler as a GPU worker runs it
(``EncoderHandler``: length buckets by token budget, fp16/bf16, SDPA
attention, tokenization overlapped with the GPU). Target: >= 3x the default
``encode``.

    python -m benchmarks.speed.bench_encode [--sentences 2000] [--rounds 2] [--no-mine]
    python -m benchmarks.speed.bench_encode --device cuda
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.lib.paths import TATOEBA, TATOEBA_STEM

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

MOSES = TATOEBA / "eng-pol" / TATOEBA_STEM
#: (backend, quantize) in the order printed; torch fp32 is the reference.
CPU_VARIANTS = [
    ("torch", "none"),
    ("onnx", "none"),
    ("onnx", "int8"),
    ("openvino", "none"),
    ("openvino", "int8"),
]


def read_pairs(count: int, moses: Path = MOSES) -> tuple[list[str], list[str]]:
    """The first ``count`` (English, Polish) pairs of Tatoeba eng-pol with distinct texts."""
    english = (moses.parent / f"{moses.name}.eng").read_text(encoding="utf-8").splitlines()
    polish = (moses.parent / f"{moses.name}.pol").read_text(encoding="utf-8").splitlines()
    seen: set[str] = set()
    pivots, candidates = [], []
    for en, pl in zip(english, polish, strict=True):
        en, pl = en.strip(), pl.strip()
        if en and pl and en not in seen and pl not in seen:
            seen.update((en, pl))
            pivots.append(en)
            candidates.append(pl)
        if len(pivots) == count:
            break
    return pivots, candidates


def pair_cosines(vectors: Any, pairs: int) -> Any:
    """Cosines of rows i and pairs + i: unit vectors, so a dot product."""
    return (vectors[:pairs] * vectors[pairs:]).sum(axis=1)


def run_cpu(args: argparse.Namespace) -> None:
    """Encode with each CPU backend, then mine with each."""
    import numpy as np
    from paramine.encoders.inference.backends import BackendChoice
    from paramine.encoders.inference.export import export_model
    from paramine.encoders.inference.handler import encode_unpadded
    from paramine.encoders.inference.loading import load_for_backend
    from paramine.encoders.models.resolve import resolve_model

    pivots, candidates = read_pairs(args.sentences // 2, args.corpus)
    resolved = resolve_model(args.model)
    texts = [resolved.prefix + t for t in pivots + candidates]
    print(f"model: {resolved.model_id} ({resolved.path})")
    print(
        f"sentences: {len(texts):,} ({len(pivots):,} eng-pol pairs, both sides); cores: "
        f"{os.cpu_count()}; rounds: {args.rounds}"
    )

    variants = [v for v in CPU_VARIANTS if f"{v[0]}-{v[1]}" in args.variants]
    models: dict[tuple[str, str], Any] = {}
    for backend, quantize in variants:
        if backend != "torch":
            start = time.perf_counter()
            folder = export_model(resolved.path, backend, quantize, resolved.revision)
            print(
                f"export {backend:8s} {quantize:4s} {time.perf_counter() - start:6.1f} s  {folder}"
            )
        models[(backend, quantize)] = load_for_backend(
            resolved.path, BackendChoice(backend, quantize, "cpu"), resolved.revision
        )
        encode_unpadded(models[(backend, quantize)], texts[:64])  # warm-up
    seconds: dict[tuple[str, str], list[float]] = {v: [] for v in variants}
    vectors: dict[tuple[str, str], Any] = {}
    for _ in range(args.rounds):
        for variant in variants:
            start = time.perf_counter()
            vectors[variant] = encode_unpadded(models[variant], texts)
            seconds[variant].append(time.perf_counter() - start)
    reference = variants[0]
    ref_rate = len(texts) / statistics.median(seconds[reference])
    ref_cos = pair_cosines(vectors[reference], len(pivots))
    print()
    print(
        f"{'backend':9s} {'quant':5s} {'sent/s':>8s} {'x torch':>8s} {'max |dcos|':>11s} "
        f"{'max 1-cos(emb)':>15s}  runs (s)"
    )
    for variant in variants:
        rate = len(texts) / statistics.median(seconds[variant])
        cos = pair_cosines(vectors[variant], len(pivots))
        drift = 1.0 - (vectors[variant] * vectors[reference]).sum(axis=1)
        print(
            f"{variant[0]:9s} {variant[1]:5s} {rate:8.1f} {rate / ref_rate:8.2f} "
            f"{np.abs(cos - ref_cos).max():11.5f} {drift.max():15.6f}  "
            + ", ".join(f"{s:.1f}" for s in seconds[variant])
        )
    del models
    if args.no_mine:
        return
    print()
    mined = {variant: mine(args.model, variant, args.corpus) for variant in variants}
    ref_pairs = mined[reference][0]
    print(f"{'backend':9s} {'quant':5s} {'pairs':>6s} {'identical':>10s} {'mine s':>7s}")
    for variant in variants:
        pairs, took = mined[variant]
        same = len(pairs & ref_pairs) / max(len(pairs | ref_pairs), 1)
        print(f"{variant[0]:9s} {variant[1]:5s} {len(pairs):6d} {same:10.2%} {took:7.1f}")


def mine(model: str, variant: tuple[str, str], moses: Path = MOSES) -> tuple[set[str], float]:
    """Mine Tatoeba eng-pol with one backend; the pair_id set and the seconds taken."""
    from paramine.pipelines.run.mine import run
    from paramine.schemas.reader import read_pairs as read_dataset

    backend, quantize = variant
    with tempfile.TemporaryDirectory() as tmp:
        argv = [
            str(moses),  # the Moses prefix: .eng and .pol beside it
            "--src-lang",
            "en",
            "--tgt-lang",
            "pl",
            "--model",
            model,
            "--output",
            f"{tmp}/out",
            "--backend",
            backend,
            "--quantize",
            quantize,
            "--quiet",
        ]
        start = time.perf_counter()
        run(argv)
        took = time.perf_counter() - start
        table, _ = read_dataset(f"{tmp}/out")
        return set(table.column("pair_id").to_pylist()), took


def build_base_model(folder: Path, tokenizer_from: str) -> Path:
    """An XLM-R base-shaped sentence-transformers model with random weights, no download."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, XLMRobertaConfig, XLMRobertaModel

    tokenizer = AutoTokenizer.from_pretrained(str(Path(tokenizer_from)))
    config = XLMRobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=768,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=514,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    XLMRobertaModel(config).save_pretrained(folder / "hf")
    tokenizer.save_pretrained(folder / "hf")
    transformer = models.Transformer(str(folder / "hf"), max_seq_length=128)
    pooling = models.Pooling(transformer.get_embedding_dimension(), "mean")
    SentenceTransformer(modules=[transformer, pooling, models.Normalize()]).save(str(folder / "st"))
    return folder / "st"


def run_gpu(args: argparse.Namespace) -> None:
    """Default ``encode`` against the handler's GPU path on one device, rounds alternated."""
    import numpy as np
    import torch
    from paramine.encoders.inference.handler import EncoderHandler
    from paramine.encoders.models.resolve import resolve_model
    from sentence_transformers import SentenceTransformer

    device = args.device
    if device == "cuda" and not torch.cuda.is_available():
        sys.exit("bench_encode: --device cuda, but torch sees no CUDA device")
    pivots, candidates = read_pairs(args.sentences // 2, args.corpus)
    texts = (pivots + candidates) * args.repeat_texts
    e5 = resolve_model("e5-small")
    with tempfile.TemporaryDirectory() as tmp:
        path = str(build_base_model(Path(tmp), e5.path))
        default = SentenceTransformer(path, device=device)
        handler = EncoderHandler(
            path,
            device=device,
            prefix="",
            backend="torch",
            token_budget=args.token_budget,
            gpu_dtype=args.dtype,
        )
        fast = handler.load_model()
        print(
            f"model: XLM-R base shape, random weights; device {device}; "
            f"dtype {next(fast.model.parameters()).dtype}; "
            f"handler path {'bucketed' if fast.bucketed else 'unpadded'}; "
            f"sentences {len(texts):,}"
        )
        default.encode(texts[:256], batch_size=32)
        list(handler.run_inference(texts[:256], fast))
        slow_s, fast_s = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            ref = default.encode(texts, batch_size=32, normalize_embeddings=True)
            slow_s.append(time.perf_counter() - start)
            start = time.perf_counter()
            out = list(handler.run_inference(texts, fast))
            fast_s.append(time.perf_counter() - start)
            got = np.stack([vector for _, vector in out])
    slow, quick = len(texts) / statistics.median(slow_s), len(texts) / statistics.median(fast_s)
    drift = float((1.0 - (np.asarray(ref) * got).sum(axis=1)).max())
    print(
        f"default encode (batch 32, fp32): {slow:9.1f} sentences/s  runs "
        + ", ".join(f"{s:.2f}" for s in slow_s)
    )
    print(
        f"handler, {args.dtype}, SDPA:      {quick:9.1f} sentences/s  runs "
        + ", ".join(f"{s:.2f}" for s in fast_s)
    )
    print(f"ratio: {quick / slow:.2f}x (target >= 3x); max 1-cos to default: {drift:.5f}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its figures."""
    from paramine.encoders.inference.backends import GPU_DTYPES
    from paramine.encoders.inference.handler import DEFAULT_TOKEN_BUDGET

    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cpu: the backends; cuda: the GPU path (default: %(default)s)",
    )
    parser.add_argument("--model", default="e5-small", help="CPU encoder (default: %(default)s)")
    parser.add_argument(
        "--corpus",
        type=Path,
        default=MOSES,
        help="Moses prefix of an English-Polish pair, .eng and .pol beside it "
        "(default: Tatoeba eng-pol in shared/corpora)",
    )
    parser.add_argument(
        "--sentences",
        type=int,
        default=2000,
        help="sentences, half English, half Polish (default: %(default)s)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="timed rounds per backend, alternated (default: %(default)s)",
    )
    parser.add_argument(
        "--variants",
        nargs="+",
        default=[f"{b}-{q}" for b, q in CPU_VARIANTS],
        help="CPU backends as backend-quantize (default: all)",
    )
    parser.add_argument("--no-mine", action="store_true", help="skip the mining comparison")
    parser.add_argument(
        "--dtype",
        choices=GPU_DTYPES,
        default="float16",
        help="GPU path precision, as the handler's gpu_dtype (default: %(default)s)",
    )
    parser.add_argument(
        "--token-budget",
        type=int,
        default=DEFAULT_TOKEN_BUDGET,
        help="GPU path: the handler's token budget, most tokens per forward pass "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--repeat-texts",
        type=int,
        default=10,
        help="GPU path: encode the sentences this many times over, so that "
        "the GPU is timed on more than a few batches (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.device == "cpu":
        run_cpu(args)
    else:
        run_gpu(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
