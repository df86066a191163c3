"""The RunInference model handler that encodes texts with the run's sentence encoder.

One handler and one path, on CPU and GPU: text in, ``(text, unit vector)``
out. ``load_model`` loads the encoder where it will run and wraps it in a
:class:`LoadedEncoder`, which picks the encoding for its device once
(:func:`on_cuda`): on a CUDA device the length-bucketed encoder
(:func:`~paramine.encoders.inference.bucketed.encode_bucketed`: batches filled to the
handler's token budget, tokenization on a thread ahead of the device, fp16 or
bf16 weights), elsewhere :func:`encode_unpadded`. The encoding runs as a
method of the loaded object, so it runs where the model is, also when Beam
serves one model to several SDK processes (``share_model_across_processes``:
the handler then holds a proxy that forwards method calls only).

torch and sentence-transformers are imported in ``load_model``, on the
worker. Importing this module imports Beam's ``apache_beam.ml.inference.base``,
and Beam 2.77's ``base`` imports its model manager, which imports torch where
torch is installed (2-5 s on a 2-core VM); where it is not, ``base`` goes on
without it. paramine's commands import this module only where they build a
graph or encode, never for ``--help`` or config checks.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from apache_beam.metrics import Metrics
from apache_beam.ml.inference.base import ModelHandler
from paramine.encoders.inference.backends import (
    DEVICES,
    GPU_DTYPES,
    check_backend,
    choose_backend,
)
from paramine.encoders.inference.bucketed import encode_bucketed
from paramine.encoders.inference.loading import load_for_backend
from paramine.encoders.inference.options import EncoderOptions
from paramine.encoders.models.resolve import ResolvedModel, resolve_model
from paramine.schemas.errors import UsageError

log = logging.getLogger(__name__)

#: Estimated tokens per RunInference batch of texts; on a GPU also the most
#: tokens (rows x length) in one forward pass of ``encode_bucketed``.
DEFAULT_TOKEN_BUDGET = 65_536


def estimated_tokens(text: str) -> int:
    """A cheap token estimate for packing batches: about 4 characters a token, plus specials."""
    return len(text) // 4 + 2


def on_cuda(model: Any) -> bool:
    """Whether a loaded model runs on a CUDA device: where the encoding path is chosen."""
    return getattr(getattr(model, "device", None), "type", None) == "cuda"


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

    The rows of a forward pass are a power of two (``row_batches``): the
    OpenVINO runtime compiles and keeps kernels for every input shape it
    meets (up to 5,000), and a run's many batches would meet most row
    counts at every length. With the tiny test model, 400,000 texts grew
    the process from 0.7 to 4.4 GiB that way (104 CPU-s), and to 1.8 GiB
    with these shapes (85-89 CPU-s).

    The texts are tokenized once, by the model's own preprocessing
    (truncation and a stored default prompt included, as ``encode`` does),
    and each batch is cut from that: the same bits as calling ``encode`` per
    batch, which tokenized every text a second time (with the tiny test
    model that was 30% of the encoding's CPU).

    Args:
        model: A loaded SentenceTransformer.
        texts: Texts to encode, prefixes applied.
        batch_size: Most texts per forward pass (at least 2).

    Returns:
        ``(len(texts), dim)`` float32 array, rows in the order of ``texts``.
    """
    import numpy as np
    import torch

    batch_size = max(batch_size, 2)
    out = np.zeros((len(texts), model.get_embedding_dimension()), dtype="float32")
    if not texts:
        return out
    # The prompt encode would apply: the model's default, if it stores one.
    default = getattr(model, "default_prompt_name", None)
    prompt = model.prompts.get(default) if default else None
    features = model.preprocess(texts, prompt=prompt)
    mask = features["attention_mask"]  # (texts, longest)
    width = mask.shape[1]
    # Per-token tensors are cut to a batch's rows and tokens; the rest
    # (e.g. the modality) goes with every batch as it is.
    per_token = {
        name: value
        for name, value in features.items()
        if isinstance(value, torch.Tensor) and value.shape[:2] == mask.shape
    }
    shared = {name: value for name, value in features.items() if name not in per_token}
    left = getattr(getattr(model, "tokenizer", None), "padding_side", "right") == "left"
    by_length: dict[int, list[int]] = {}
    for i, length in enumerate(mask.sum(dim=1).tolist()):
        by_length.setdefault(length, []).append(i)
    model.eval()  # as encode does: no dropout
    device = model.device
    with torch.inference_mode():
        for length, rows in by_length.items():
            tokens = slice(width - length, width) if left else slice(0, length)
            for chunk, run in row_batches(rows, batch_size):
                index = torch.tensor(run)
                batch = {name: value[index, tokens].to(device) for name, value in per_token.items()}
                if not bool(batch["attention_mask"].all()):
                    raise RuntimeError(
                        f"the tokenizer of {type(model).__name__} pads in a way paramine "
                        "does not know: a batch cut to its texts' length still holds padding"
                    )
                vectors = model({**batch, **shared})["sentence_embedding"]
                vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
                out[chunk] = vectors.cpu().numpy()[: len(chunk)]
    return out


def row_batches(rows: list[int], batch_size: int) -> Iterator[tuple[list[int], list[int]]]:
    """Cut rows into forward passes of few shapes: ``(rows written, rows run)`` per pass.

    Each pass runs a power of two rows (2 up to ``batch_size``), so a model
    meets at most eight row counts per token length, however many batches
    a run has. Full passes take ``batch_size`` rows; what is left is cut
    into halving powers of two, and the last piece is padded with copies of
    its first row when that adds at most a third of its rows (a lone row
    always: one row takes another BLAS path, see ``encode_unpadded``). The
    copies are computed and thrown away: a row's vector does not depend on
    its batch.

    Args:
        rows: Indices of texts of one token length.
        batch_size: Most rows in one pass (at least 2).

    Yields:
        The rows whose vectors the pass gives, and the rows it runs: the
        same, or the same followed by copies of the first.
    """
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        while chunk:
            size = 2
            while size < len(chunk):
                size *= 2
            padding = size - len(chunk)
            if size > batch_size or (padding > len(chunk) // 3 and size > 2):
                head, chunk = chunk[: size // 2], chunk[size // 2 :]
                yield head, head
            else:
                yield chunk, chunk + chunk[:1] * padding
                chunk = []


class LoadedEncoder:
    """A loaded sentence encoder and the encoding its device takes: what ``load_model`` gives.

    The encoding is a method here, not in the handler, so that it runs in the
    process that holds the model: a model shared across processes reaches
    ``run_inference`` as a proxy that forwards method calls only.

    Args:
        model: A loaded SentenceTransformer (or anything ``encode_unpadded`` accepts).
        token_budget: Most tokens in one forward pass on a GPU.
    """

    def __init__(self, model: Any, token_budget: int = DEFAULT_TOKEN_BUDGET) -> None:
        self.model = model
        self.token_budget = token_budget
        self.bucketed = on_cuda(model)

    def encode(self, texts: list[str]) -> Any:
        """``(len(texts), dim)`` float32 unit vectors of texts (prefixes applied)."""
        if self.bucketed:
            return encode_bucketed(self.model, texts, token_budget=self.token_budget)
        return encode_unpadded(self.model, texts)


class EncoderHandler(ModelHandler[str, tuple[str, Any], LoadedEncoder]):
    """Encodes batches of distinct texts with the run's encoder: ``(text, unit vector)`` out.

    Args:
        model: What ``--model`` named; resolved on the worker.
        device: One of :data:`~paramine.encoders.inference.backends.DEVICES`; ``auto``
            is CUDA when the worker has it.
        prefix: Text put before every sentence; ``None`` takes the model's
            own (``query: `` for e5).
        share_across_processes: Load one model per worker machine and share it
            between SDK processes (Beam's multi-process shared model), instead
            of one per process: on a GPU worker one copy fits where several
            would run out of memory.
        backend: ``torch``, ``onnx``, ``openvino``, or ``auto`` (the best
            measured CPU backend on CPU, torch on GPU); see
            :mod:`paramine.encoders.inference.backends`.
        quantize: ``none`` or ``int8`` (onnx and openvino); None for the
            backend's default (``none``; for ``auto`` on CPU, its measured best).
        token_budget: Estimated tokens per RunInference batch; on a GPU also
            the most tokens in one forward pass.
        gpu_dtype: The weights' precision on a GPU, one of
            :data:`~paramine.encoders.inference.backends.GPU_DTYPES` (CPU runs fp32).

    Raises:
        UsageError: a setting that is not allowed, named with the allowed values.
    """

    def __init__(
        self,
        model: str,
        device: str = "auto",
        prefix: str | None = None,
        share_across_processes: bool = False,
        backend: str = "auto",
        quantize: str | None = None,
        token_budget: int = DEFAULT_TOKEN_BUDGET,
        gpu_dtype: str = "float16",
    ) -> None:
        if device not in DEVICES:
            raise UsageError(f"--device {device!r} is not a device; allowed: {', '.join(DEVICES)}")
        if token_budget < 1:
            raise UsageError(f"--batch-tokens must be positive, got {token_budget}")
        if gpu_dtype not in GPU_DTYPES:
            raise UsageError(f"gpu_dtype={gpu_dtype!r}; allowed: {', '.join(GPU_DTYPES)}")
        check_backend(backend, quantize)
        if device != "auto":
            choose_backend(backend, quantize, device)  # refuses e.g. onnx on cuda, here
        super().__init__()
        self.model_name = model
        self.device = device
        self.backend = backend
        self.quantize = quantize
        self.token_budget = token_budget
        self.gpu_dtype = gpu_dtype
        self._prefix = prefix
        self._share = share_across_processes
        self._resolved: ResolvedModel | None = None
        self._texts_encoded = Metrics.counter("paramine", "texts_encoded")

    @classmethod
    def of(
        cls,
        options: EncoderOptions,
        *,
        device: str = "auto",
        share_across_processes: bool = False,
        token_budget: int = DEFAULT_TOKEN_BUDGET,
    ) -> EncoderHandler:
        """The handler of a run's encoder options, on the run's device and batches."""
        return cls(
            options.model,
            device=device,
            prefix=options.prefix,
            share_across_processes=share_across_processes,
            backend=options.backend,
            quantize=options.quantize,
            token_budget=token_budget,
        )

    def _resolve(self) -> ResolvedModel:
        if self._resolved is None:
            self._resolved = resolve_model(self.model_name)
        return self._resolved

    @property
    def prefix(self) -> str:
        """The text prefix applied to every sentence."""
        return self._prefix if self._prefix is not None else self._resolve().prefix

    def load_model(self) -> LoadedEncoder:
        """Resolve the model and load it on its device and backend (fp16/bf16 and SDPA on GPU)."""
        try:
            import torch
        except ImportError as error:  # pragma: no cover - depends on the install
            raise ImportError(
                "encoding needs torch and sentence-transformers: pip install paramine "
                "(on GPU workers install torch with CUDA first)"
            ) from error

        resolved = self._resolve()
        device = self.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        choice = choose_backend(self.backend, self.quantize, device)
        model = load_for_backend(resolved.path, choice, resolved.revision, dtype=self.gpu_dtype)
        loaded = LoadedEncoder(model, self.token_budget)
        log.info(
            "loaded %s on %s (backend %s, quantize %s); encoding: %s",
            resolved.model_id,
            device,
            choice.backend,
            choice.quantize,
            f"bucketed, {self.gpu_dtype}, {self.token_budget:,} tokens a batch"
            if loaded.bucketed
            else "unpadded",
        )
        return loaded

    def run_inference(
        self,
        batch: Sequence[str],
        model: LoadedEncoder,
        inference_args: dict[str, Any] | None = None,
    ) -> Iterable[tuple[str, Any]]:
        """Encode a batch of texts with the run's prefix; ``(text, unit vector)`` per text."""
        prefix = self.prefix
        vectors = model.encode([prefix + text for text in batch])  # (texts, dim)
        self._texts_encoded.inc(len(batch))
        # Copies: a row view would keep the whole batch's matrix alive.
        return [(text, vectors[i].copy()) for i, text in enumerate(batch)]

    def batch_elements_kwargs(self) -> dict[str, Any]:
        """Batches of about ``token_budget`` estimated tokens, packed from many groups' texts."""
        return {
            "min_batch_size": self.token_budget,
            "max_batch_size": self.token_budget,
            "element_size_fn": estimated_tokens,
        }

    def share_model_across_processes(self) -> bool:
        """One model per machine when asked (GPU workers with several processes)."""
        return self._share

    def get_metrics_namespace(self) -> str:
        """Metrics appear under ``paramine`` in runner UIs."""
        return "paramine"
