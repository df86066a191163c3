"""The RunInference model handler that scores aligned pairs with a sentence encoder.

Building the pipeline graph imports nothing heavy: torch and
sentence-transformers are imported in ``load_model`` on the worker.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

from apache_beam.metrics import Metrics
from apache_beam.utils import shared
from paramine.encoders.backends import BackendChoice, check_backend, choose_backend
from paramine.encoders.models import ResolvedModel, resolve_model
from paramine.encoders.run_inference import ModelHandler
from paramine.schemas.errors import UsageError
from paramine.schemas.records import AlignedPair, ScoredPair

log = logging.getLogger(__name__)

DEVICES = ("auto", "cpu", "cuda")

# One loaded encoder per model and device in a worker process, whichever
# RunInference step asks for it (pair scoring and the calibration sample).
_LOADED: dict[str, shared.Shared] = {}


class _Progress:
    """Logs pairs scored and the rate, at most every ``every_s`` seconds (worker logs)."""

    def __init__(self, every_s: float) -> None:
        self.every_s = every_s
        self.start = time.monotonic()
        self.last = self.start
        self.pairs = 0
        self.texts = 0

    def add(self, pairs: int, texts: int) -> None:
        self.pairs += pairs
        self.texts += texts
        now = time.monotonic()
        if self.every_s > 0 and now - self.last >= self.every_s:
            self.last = now
            rate = self.texts / max(now - self.start, 1e-9)
            log.info(
                "scored %s pairs (%s texts encoded, %.0f texts/s)",
                f"{self.pairs:,}",
                f"{self.texts:,}",
                rate,
            )


def encode_unpadded(model: Any, texts: list[str], batch_size: int = 128) -> Any:
    """Encode texts as unit vectors, each in a batch of texts of its own token length.

    With no padding, a text's embedding does not depend on the texts batched
    with it: a padded batch changes the shapes of the attention products and
    with them the float rounding (1e-7 on e5-small), so the same pair could
    score differently in two runs and land on the other side of the cut.
    One more shape matters: a forward pass of a single row takes another
    BLAS path (matrix-vector) and differs in the last bits, so a lone text
    is encoded beside a copy of itself. Measured on CPU, e5-small and the
    tiny test model: bit-identical embeddings in batches of 2 to 129 rows,
    in any order. It also spends no time on padding.

    Args:
        model: A loaded SentenceTransformer.
        texts: Texts to encode, prefixes applied.
        batch_size: Most texts per forward pass (at least 2).

    Returns:
        ``(len(texts), dim)`` float32 array, rows in the order of ``texts``.
    """
    import numpy as np

    batch_size = max(batch_size, 2)
    out = np.zeros((len(texts), model.get_embedding_dimension()), dtype="float32")
    if not texts:
        return out
    # The model's own preprocessing (truncation included), as encode does it.
    features = model.preprocess(texts) if hasattr(model, "preprocess") else model.tokenize(texts)
    lengths = features["attention_mask"].sum(dim=1).tolist()  # (texts,)
    by_length: dict[int, list[int]] = {}
    for i, length in enumerate(lengths):
        by_length.setdefault(length, []).append(i)
    for rows in by_length.values():
        for start in range(0, len(rows), batch_size):
            chunk = rows[start : start + batch_size]
            batch = [texts[i] for i in chunk]
            if len(batch) == 1:
                batch = batch * 2
            vectors = model.encode(
                batch,
                batch_size=len(batch),
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )  # (len(batch), dim)
            out[chunk] = vectors[: len(chunk)]
    return out


class PairEncoderHandler(ModelHandler[AlignedPair, ScoredPair, Any]):
    """Scores batches of aligned pairs by the cosine of their embeddings.

    Each distinct text of a batch is encoded once: subtitles and Tatoeba
    repeat pivots ("Yes.") many times, and a pivot shared by a group is most
    often in the same batch after the shuffle before scoring.

    Args:
        model: What ``--model`` named; resolved on the worker.
        batch_size: Pairs per RunInference batch (the encoder's own batch is
            the number of distinct texts in it).
        device: ``auto`` (CUDA when present), ``cpu`` or ``cuda``.
        prefix: Text put before every sentence; ``None`` takes the model's
            own (``query: `` for e5).
        share_across_processes: Load one model per worker machine and share it
            between SDK processes (Beam's multi-process shared model), instead
            of one per process: on a GPU worker one copy fits where several
            would run out of memory.
        progress_every_s: Seconds between progress lines on stderr; 0 for none.
        keep_vectors: Attach each pair's two embeddings to its ScoredPair, for
            the threshold calibration to reuse instead of encoding again.
        backend: ``torch``, ``onnx``, ``openvino``, or ``auto`` (the best
            measured CPU backend on CPU, torch on GPU); see
            :mod:`paramine.encoders.backends`.
        quantize: ``none`` or ``int8`` (onnx and openvino); None for the
            backend's default (``none``; for ``auto`` on CPU, its measured best).
    """

    def __init__(
        self,
        model: str,
        batch_size: int = 4096,
        device: str = "auto",
        prefix: str | None = None,
        share_across_processes: bool = False,
        progress_every_s: float = 10.0,
        keep_vectors: bool = False,
        backend: str = "auto",
        quantize: str | None = None,
    ) -> None:
        if device not in DEVICES:
            raise UsageError(f"--device {device!r} is not a device; allowed: {', '.join(DEVICES)}")
        if batch_size < 1:
            raise UsageError(f"--batch-size must be positive, got {batch_size}")
        check_backend(backend, quantize)
        if device != "auto":
            choose_backend(backend, quantize, device)  # refuses e.g. onnx on cuda, here
        self._backend = backend
        self._quantize = quantize
        self._choice: BackendChoice | None = None
        self._model_spec = model
        self._batch_size = batch_size
        self._device = device
        self._prefix = prefix
        self._share = share_across_processes
        self._progress_every_s = progress_every_s
        self._keep_vectors = keep_vectors
        self._progress: _Progress | None = None
        self._resolved: ResolvedModel | None = None
        self._texts_encoded = Metrics.counter("paramine", "texts_encoded")
        self._pairs_scored = Metrics.counter("paramine", "pairs_scored")
        super().__init__()

    def load_model(self) -> Any:
        """The worker process's copy of the encoder, loaded on first use."""
        key = f"{self._model_spec}|{self._device}|{self._backend}|{self._quantize}"
        handle = _LOADED.setdefault(key, shared.Shared())
        return handle.acquire(self._load)

    def _load(self) -> Any:
        """Resolve and load the encoder on its backend; fp16 and SDPA on GPU."""
        try:
            import torch
        except ImportError as error:  # pragma: no cover - depends on the install
            raise ImportError(
                "scoring needs torch and sentence-transformers: pip install paramine "
                "(on GPU workers install torch with CUDA first)"
            ) from error
        from paramine.encoders.backends import load_encoder, load_for_gpu

        self._resolved = resolve_model(self._model_spec)
        device = self._device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self._choice = choose_backend(self._backend, self._quantize, device)
        if device == "cuda":
            # Half precision doubles throughput on GPU; cosines move by ~1e-3.
            model = load_for_gpu(self._resolved.path, device, dtype="float16")
        else:
            model = load_encoder(self._resolved.path, self._choice, self._resolved.revision)
        log.info(
            "loaded %s on %s (backend %s, quantize %s)",
            self._resolved.model_id,
            device,
            self._choice.backend,
            self._choice.quantize,
        )
        return model

    @property
    def prefix(self) -> str:
        """The text prefix applied to every sentence."""
        if self._prefix is not None:
            return self._prefix
        if self._resolved is None:
            self._resolved = resolve_model(self._model_spec)
        return self._resolved.prefix

    def run_inference(
        self,
        batch: Sequence[AlignedPair],
        model: Any,
        inference_args: dict[str, Any] | None = None,
    ) -> Iterable[ScoredPair]:
        """Encode each distinct text of the batch once; return pairs with cosines."""
        prefix = self.prefix
        index: dict[str, int] = {}
        for pair in batch:
            index.setdefault(pair.pivot, len(index))
            index.setdefault(pair.candidate, len(index))
        texts = [prefix + text for text in index]
        # Unit vectors: the dot product is the cosine.
        if model.device.type == "cuda":
            from paramine.encoders.backends import encode_bucketed

            embeddings = encode_bucketed(model, texts)  # (distinct texts, dim)
        else:
            embeddings = encode_unpadded(model, texts)  # (distinct texts, dim)
        if self._progress is None:
            self._progress = _Progress(self._progress_every_s)
        self._progress.add(len(batch), len(texts))
        self._texts_encoded.inc(len(texts))
        self._pairs_scored.inc(len(batch))
        pivots = embeddings[[index[p.pivot] for p in batch]]  # (batch, dim)
        candidates = embeddings[[index[p.candidate] for p in batch]]  # (batch, dim)
        scores = (pivots.astype("float32") * candidates.astype("float32")).sum(axis=1)
        # Rounding puts identical texts at 1.0000001; a cosine stays in [-1, 1].
        scores = scores.clip(-1.0, 1.0)
        if not self._keep_vectors:
            return [
                ScoredPair(pair, float(score)) for pair, score in zip(batch, scores, strict=True)
            ]
        # Copies: a row view would keep the whole batch's matrix alive.
        return [
            ScoredPair(pair, float(score), pivots[i].copy(), candidates[i].copy())
            for i, (pair, score) in enumerate(zip(batch, scores, strict=True))
        ]

    def batch_elements_kwargs(self) -> dict[str, Any]:
        """Fixed-size batches of pairs: the encoder sorts texts by length inside."""
        return {"min_batch_size": self._batch_size, "max_batch_size": self._batch_size}

    def share_model_across_processes(self) -> bool:
        """One model per machine when asked (GPU workers with several processes)."""
        return self._share

    def get_metrics_namespace(self) -> str:
        """Metrics appear under ``paramine`` in runner UIs."""
        return "paramine"
