"""Run an evaluation suite (:mod:`.suite`) for a model, and print its table.

``paramine evaluate MODEL --suite pl --suite-data DIR`` prints the paper's
table (Dadas 2022, Table I): one row per model, the average, then one column
per task in the suite's order; ``--json FILE`` writes
``{"tasks": {"PPC": .., ...}, "average": ..}``. Figures are on the paper's
scale (accuracy and Spearman x100), rounded to 2 decimals; the average is
the mean of the rounded figures, as the paper's is.

Vectors are frozen: each distinct sentence of a task is encoded once, with
the model's prefix (``query: `` for e5), by
:func:`~paramine.encoders.inference.handler.encode_unpadded`, the same unit vectors
``paramine mine`` scores with; a sentence's vector does not depend on the
sentences batched with it, so a task scores the same alone or in a suite.
Sentences shared by tasks (CDSC-E and CDSC-R read the same files) are
encoded once per run, and dropped once no later task needs them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from paramine.encoders.evaluation import probes
from paramine.encoders.evaluation.suite import (
    Split,
    Suite,
    SuiteTask,
    load_suite,
    read_suite,
    resolve_data_root,
)
from paramine.schemas.errors import UsageError

if TYPE_CHECKING:
    import numpy as np
    from paramine.encoders.evaluation.config import EvaluateConfig
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

#: Texts in, ``(len(texts), dim)`` float32 vectors out, rows in the order of the texts.
Encode = Callable[[list[str]], "np.ndarray"]


def model_encoder(model: SentenceTransformer, prefix: str = "", batch_size: int = 64) -> Encode:
    """Encode with a loaded model, ``prefix`` applied unless the model adds its own prompt."""
    from paramine.encoders.inference.handler import encode_unpadded
    from paramine.encoders.models.resolve import prompt_applied

    def encode(texts: list[str]) -> np.ndarray:
        with prompt_applied(model, prefix):
            return encode_unpadded(model, texts, batch_size)  # (texts, dim)

    return encode


def random_encoder(dim: int, seed: int = 0) -> Encode:
    """Random unit vectors, one fixed vector per distinct text: the probes' null model.

    Scored on a suite they must give chance: the majority class's accuracy,
    and Spearman near 0 (``python -m benchmarks.speed.bench_evaluate --random``).
    """
    import numpy as np

    def encode(texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), dim), dtype="float32")
        for i, text in enumerate(texts):
            digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
            rng = np.random.default_rng([seed, int.from_bytes(digest, "little")])
            row = rng.standard_normal(dim)
            out[i] = row / np.linalg.norm(row)
        return out

    return encode


def _distinct_texts(splits: dict[str, Split]) -> set[str]:
    return {text for split in splits.values() for text in (*split.texts, *split.second)}


def task_features(task: SuiteTask, split: Split, vectors: dict[str, np.ndarray]) -> np.ndarray:
    """A split's probe features: the sentence's vector, or the pair's (u, v, |u-v|, u*v)."""
    import numpy as np

    first = np.stack([vectors[text] for text in split.texts])  # (rows, dim)
    if task.kind == "classify":
        return first
    second = np.stack([vectors[text] for text in split.second])  # (rows, dim)
    return probes.pair_features(first, second)  # (rows, 4 * dim)


def probe_task(
    task: SuiteTask,
    splits: dict[str, Split],
    vectors: dict[str, np.ndarray],
    grid: Sequence[float] = probes.C_GRID,
) -> probes.ProbeResult:
    """Train and score the probe of one task on vectors of all its sentences."""
    train, dev, test = (
        (task_features(task, splits[name], vectors), splits[name].labels)
        for name in ("train", "dev", "test")
    )
    if task.kind == "relatedness":
        return probes.relatedness(train, dev, test, grid)
    return probes.classify(train, dev, test, grid)


def majority_accuracy(splits: dict[str, Split]) -> float:
    """Test accuracy x100 of always answering the train split's most frequent label."""
    from collections import Counter

    counts = Counter(splits["train"].labels)
    top = max(sorted(counts), key=lambda label: counts[label])
    test = splits["test"].labels
    return 100 * sum(label == top for label in test) / len(test)


def run_suite(
    encode: Encode,
    suite: Suite,
    data_root: str,
    grid: Sequence[float] = probes.C_GRID,
    details: dict[str, dict[str, Any]] | None = None,
    data: dict[str, dict[str, Split]] | None = None,
) -> dict[str, Any]:
    """Score the vectors ``encode`` gives on every task of ``suite``.

    Args:
        encode: Texts to vectors (:func:`model_encoder`, :func:`random_encoder`).
        suite: The tasks, in the table's column order.
        data_root: The folder (or fsspec URL) the suite's file paths are under.
        grid: The ``C`` values tried on dev.
        details: If given, filled per task with the dev score, the chosen ``C``,
            the split sizes, the majority-class accuracy and the seconds spent.
        data: The suite's splits, if already read (:func:`read_suite`).

    Returns:
        ``{"tasks": {name: figure, ...}, "average": figure}``, x100, 2 decimals.

    Raises:
        InputError: a file is missing or cannot be read.
    """
    data = data or read_suite(suite, data_root)
    needed = [_distinct_texts(data[task.name]) for task in suite.tasks]
    vectors: dict[str, np.ndarray] = {}
    figures: dict[str, float] = {}
    for i, task in enumerate(suite.tasks):
        started = time.perf_counter()
        new = sorted(needed[i] - vectors.keys())  # sorted: the same batches every run
        if new:
            # Copies: a row view would keep the whole batch's matrix alive.
            vectors.update((t, row.copy()) for t, row in zip(new, encode(new), strict=True))
        encoded = time.perf_counter()
        result = probe_task(task, data[task.name], vectors, grid)
        figures[task.name] = round(result.test, 2)
        seconds = (encoded - started, time.perf_counter() - encoded)
        log.info(
            "%s: %.2f (dev %.2f, C=%g; %d/%d/%d rows; %d texts encoded in %.0f s, probe %.0f s)",
            task.name, result.test, result.dev, result.c, *result.sizes, len(new), *seconds,
        )  # fmt: skip
        if details is not None:
            details[task.name] = {
                "kind": task.kind,
                "test": result.test,
                "dev": result.dev,
                "c": result.c,
                "sizes": list(result.sizes),
                "encoded": len(new),
                "encode_s": seconds[0],
                "probe_s": seconds[1],
            }
            if task.kind != "relatedness":
                details[task.name]["majority"] = majority_accuracy(data[task.name])
        later = set().union(*needed[i + 1 :])
        for text in [t for t in vectors if t not in later]:
            del vectors[text]
    average = round(sum(figures.values()) / len(figures), 2)
    return {"tasks": figures, "average": average}


def evaluate_on_suite(
    model: SentenceTransformer,
    suite: Suite,
    data_root: str,
    prefix: str = "",
    batch_size: int = 64,
    data: dict[str, dict[str, Split]] | None = None,
) -> dict[str, Any]:
    """:func:`run_suite` for a loaded SentenceTransformer (``prefix``: ``query: `` for e5)."""
    return run_suite(model_encoder(model, prefix, batch_size), suite, data_root, data=data)


def encoding_name(backend: str, quantize: str, device: str, dtype: str, prefix: str) -> str:
    """How a model encodes, as a suite cache key holds it (``suite_cache``).

    ``device`` counts by kind (``cuda:1`` is ``cuda``); ``dtype`` is the
    weights' (``float16`` where ``load_for_backend`` runs torch on a GPU).
    """
    return f"{backend}|{quantize}|{device.partition(':')[0]}|{dtype}|{prefix!r}"


def describe_encoding(encoding: str) -> str:
    """``encoding_name``'s string in words: "encoded with torch, float32, on cpu"."""
    backend, quantize, device, dtype, _ = encoding.split("|", 4)
    quantized = "" if quantize == "none" else f" {quantize}"
    return f"encoded with {backend}{quantized}, {dtype}, on {device}"


def trainer_encoding(device: str | None, prefix: str) -> str:
    """How ``paramine train`` encodes a suite's texts (``encoding_name``).

    torch in float32, as ``load_encoder`` loads the base and as training
    leaves the model: ``paramine evaluate --backend torch`` encodes the same
    way, its default backend (OpenVINO on a CPU) not quite (docs/training.md).
    """
    return encoding_name("torch", "none", device or default_device(), "float32", prefix)


def suite_title(name: str, encoding: str) -> str:
    """A suite table's title, saying how its texts were encoded."""
    return f"Suite {name} ({describe_encoding(encoding)}):"


def scored_on_suite(
    revision: str | None,
    encoding: str,
    suite: Suite,
    data: dict[str, dict[str, Split]],
    model: str,
    compute: Callable[[], dict[str, Any]],
    use_cache: bool = True,
) -> dict[str, Any]:
    """``compute()``'s figures, or those kept for the same model, encoding and data.

    Only a model with a content fingerprint (``revision``) is cached
    (:mod:`paramine.encoders.evaluation.suite_cache`).
    """
    if not use_cache or not revision:
        return compute()
    from paramine.encoders.evaluation.suite_cache import cached_figures, suite_key

    key = suite_key(revision, encoding, suite, data, probes.C_GRID)
    return cached_figures(key, suite, model, compute)


def suite_table(rows: Sequence[tuple[str, dict[str, Any]]], suite: Suite) -> str:
    """A Markdown table, one row per model: the average, then the tasks in the suite's order.

    The layout of the paper's Table I (and of its rows in SOURCE.txt), so
    measured rows sit beside the published ones.
    """
    names = [task.name for task in suite.tasks]
    lines = [
        "| " + " | ".join(["model", "avg", *names]) + " |",
        "|---|" + "---:|" * (len(names) + 1),
    ]
    for model, result in rows:
        cells = [f"{result['average']:.2f}"]
        cells += [f"{result['tasks'][name]:.2f}" for name in names]
        lines.append("| " + " | ".join([model, *cells]) + " |")
    return "\n".join(lines)


def default_device() -> str:
    """``cuda`` where torch sees a GPU, else ``cpu``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def suite_command(config: EvaluateConfig) -> int:
    """``paramine evaluate MODEL... --suite S``: print the suite's table, maybe write JSON."""
    from paramine.encoders.inference.backends import choose_backend
    from paramine.encoders.inference.loading import load_for_backend
    from paramine.encoders.models.resolve import ResolvedModel, resolve_model

    if config.suite is None:
        raise UsageError("no --suite given")
    suite = load_suite(config.suite)
    root = resolve_data_root(suite, config.suite_data)
    data = read_suite(suite, root)  # before minutes of model loading
    device = config.device or default_device()
    choice = choose_backend(config.backend, None, "cuda" if device.startswith("cuda") else "cpu")
    half = choice.backend == "torch" and choice.device == "cuda"  # load_for_backend's
    dtype = "float16" if half else "float32"
    rows: list[tuple[str, dict[str, Any]]] = []
    for spec in config.scored:
        started = time.perf_counter()
        resolved = resolve_model(spec, flag="MODEL")

        def score(resolved: ResolvedModel = resolved) -> dict[str, Any]:
            model = load_for_backend(resolved.path, choice, resolved.revision)
            log.info("%s on %s, backend %s", resolved.model_id, device, choice.backend)
            return evaluate_on_suite(
                model, suite, root, resolved.prefix, config.batch_size, data=data
            )

        encoding = encoding_name(choice.backend, choice.quantize, device, dtype, resolved.prefix)
        result = scored_on_suite(
            resolved.revision, encoding, suite, data, spec, score, not config.no_suite_cache
        )
        result = {**result, "encoding": encoding}
        log.info("%s: suite %s in %.0f s", spec, suite.name, time.perf_counter() - started)
        name = f"{spec} (base)" if config.base and spec == config.base and not rows else spec
        rows.append((name, result))

    print(suite_table(rows, suite))
    # The figures depend on how the texts are encoded (torch and OpenVINO differ
    # in the first or second decimal); paramine train scores with torch. Every
    # row was encoded the same way but for its model's prefix, which is not said.
    print(f"\n{describe_encoding(rows[0][1]['encoding'])}")
    if config.json_path:
        from paramine.schemas.storage import atomic_write

        written: Any = rows[0][1] if len(rows) == 1 else [{"model": n, **r} for n, r in rows]
        atomic_write(config.json_path, json.dumps(written, indent=2) + "\n")
    return 0
