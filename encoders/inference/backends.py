"""Inference backends for the sentence encoder: torch, ONNX Runtime, OpenVINO.

On CPU workers (most Spark and Flink clusters, a laptop) encoding is the cost
of a mining job. This module exports the Transformer of any
sentence-transformers model to ONNX once, offline, into the paramine cache
(optionally with int8 weights), and loads it back as an ordinary
``SentenceTransformer`` whose Transformer runs in ONNX Runtime or OpenVINO.
Tokenization, pooling, normalization and any other module (our LSTM pooling
included) stay the model's own, so every backend gives the same kind of
embedding from the same folder.

Why not ``SentenceTransformer(path, backend="onnx")``: that path goes through
optimum-onnx, whose releases pin ``transformers<4.58`` (paramine runs on 5.x),
and it exports from the hub by default. Here the export is ``torch.onnx``,
the runtimes are the plain ``onnxruntime`` and ``openvino`` wheels, and
nothing is downloaded.

The GPU encoding (:func:`encode_bucketed`, which the RunInference handler
runs on a CUDA device) is here too: texts grouped by token length so that no
batch carries padding, batches filled up to a token budget, fp16/bf16
weights, SDPA attention, and the next chunk tokenized on a thread while the
device runs the current one.
"""

from __future__ import annotations

import json
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paramine.encoders.models.cache import EXPORTS_DIR
from paramine.encoders.models.resolve import atomic_build, cache_root, folder_fingerprint
from paramine.schemas.errors import ModelError, UsageError
from paramine.schemas.text_keys import text_digest

log = logging.getLogger(__name__)

#: What ``--device`` accepts. ``auto``: CUDA when the worker has it, else CPU.
DEVICES = ("auto", "cpu", "cuda")
#: The torch backend's weight precisions on a GPU (on CPU it runs fp32).
GPU_DTYPES = ("float16", "bfloat16", "float32")
#: What ``--backend`` accepts. ``auto``: :data:`BEST_CPU` on CPU, torch on GPU.
BACKENDS = ("auto", "torch", "onnx", "openvino")
#: What ``--quantize`` accepts; unset means the backend's own default.
QUANTIZATIONS = ("none", "int8")
#: The extra that installs each runtime.
EXTRAS = {"onnx": "paramine[onnx]", "openvino": "paramine[openvino]"}
#: The CPU backend and quantization that ``auto`` (the default) picks on CPU:
#: the fastest whose vectors do not depend on the batch. OpenVINO fp32: 2.82x
#: torch fp32 in benchmarks/speed/bench_encode.py on e5-small on an idle machine
#: (1.92-2.10x under load), the same mined pairs, pair cosines within 0.001
#: (docs/results.md). ONNX int8 is faster (2.7-3.8x) but
#: its dynamic quantization takes one activation scale per batch, which moved
#: a pair cosine by up to 0.023 between two batchings of the same texts.
BEST_CPU = ("openvino", "none")
#: Bumped when the export changes, so that old cached exports are not reused.
EXPORT_FORMAT = 1
ONNX_FILE = "model.onnx"
OPENVINO_FILE = "openvino_model.xml"
EXPORT_INFO = "paramine_export.json"


@dataclass(frozen=True)
class BackendChoice:
    """A validated backend, its quantization, and the device it runs on.

    Attributes:
        backend: ``torch``, ``onnx`` or ``openvino`` (``auto`` resolved).
        quantize: ``none`` or ``int8``.
        device: ``cpu`` or ``cuda``.
    """

    backend: str
    quantize: str
    device: str


def check_backend(backend: str, quantize: str | None) -> None:
    """Refuse a backend or quantization name we do not know, naming the allowed ones.

    Raises:
        UsageError: an unknown name, or int8 asked of the torch backend.
    """
    if backend not in BACKENDS:
        raise UsageError(f"--backend {backend!r} is not a backend; allowed: {', '.join(BACKENDS)}")
    if quantize is not None and quantize not in QUANTIZATIONS:
        raise UsageError(
            f"--quantize {quantize!r} is not a quantization; allowed: {', '.join(QUANTIZATIONS)}"
        )
    if backend == "torch" and quantize == "int8":
        raise UsageError(
            "--quantize int8 needs --backend onnx or openvino (or auto); the torch backend "
            "runs the model's own weights"
        )


def choose_backend(backend: str, quantize: str | None, device: str) -> BackendChoice:
    """Resolve ``auto`` and the default quantization for the device the model runs on.

    Args:
        backend: One of :data:`BACKENDS`.
        quantize: One of :data:`QUANTIZATIONS`, or None for the backend's default
            (``none``; for ``auto`` on CPU, what :data:`BEST_CPU` measured best).
        device: ``cpu`` or ``cuda`` (``auto`` already resolved by the caller).

    Raises:
        UsageError: an unknown name, or a combination that cannot run.
    """
    check_backend(backend, quantize)
    if backend == "auto":
        if device == "cuda":
            if quantize == "int8":
                raise UsageError(
                    "--quantize int8 runs on CPU backends only; on a GPU the torch backend "
                    "runs fp16: drop --quantize, or pass --device cpu"
                )
            return BackendChoice("torch", "none", device)
        best, best_quantize = BEST_CPU
        return BackendChoice(best, quantize or best_quantize, device)
    if backend != "torch" and device == "cuda":
        raise UsageError(
            f"--backend {backend} runs on CPU only; on a GPU use --backend torch (or auto), "
            "or pass --device cpu"
        )
    return BackendChoice(backend, quantize or "none", device)


def require_runtime(backend: str) -> None:
    """Import the runtime a backend needs, or say which extra installs it.

    Raises:
        ModelError: the runtime is not installed.
    """
    modules = {"onnx": ("onnx", "onnxruntime"), "openvino": ("onnx", "openvino")}
    for name in modules.get(backend, ()):
        try:
            __import__(name)
        except ImportError as error:
            raise ModelError(
                f"--backend {backend} needs the Python package {name!r}, which is not "
                f"installed: pip install '{EXTRAS[backend]}' (or --backend torch)"
            ) from error


# ------------------------------------------------------------- the cache


def export_key(fingerprint: str, backend: str, quantize: str) -> str:
    """The cache key of one export: the model's fingerprint, the backend, the quantization."""
    return text_digest(f"{fingerprint}|{backend}|{quantize}|export-{EXPORT_FORMAT}")


def export_dir(
    model_path: str | Path,
    backend: str,
    quantize: str,
    fingerprint: str | None = None,
    cache_dir: str | None = None,
) -> Path:
    """Where the export of a model for a backend lives in the cache.

    ``<cache>/models/exports/<folder name>-<backend>-<quantize>-<key>``, beside
    the materialized default model; the key covers the model's content
    fingerprint, so a retrained model in the same folder gets a new export.
    """
    path = Path(model_path)
    if fingerprint is None:
        from fsspec.implementations.local import LocalFileSystem

        fingerprint = folder_fingerprint(LocalFileSystem(), str(path.resolve()))
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in path.name) or "model"
    key = export_key(fingerprint, backend, quantize)
    return cache_root(cache_dir) / EXPORTS_DIR / f"{name}-{backend}-{quantize}-{key}"


def _transformer_module(model: Any, shown: str) -> Any:
    """The model's first module, checked to be a text Transformer we can export."""
    first = model[0]
    config = getattr(first, "modality_config", {}).get("text", {})
    if (
        type(first).__name__ != "Transformer"
        or config.get("method") != "forward"
        or config.get("method_output_name") != "last_hidden_state"
    ):
        raise ModelError(
            f"--model {shown}: the onnx and openvino backends export a text Transformer "
            f"module's hidden states; this model starts with {type(first).__name__}. "
            "Use --backend torch"
        )
    return first


def _input_names(model: Any) -> list[str]:
    """The tensors the model's tokenizer hands to its Transformer, in a fixed order."""
    features = model.preprocess(["a b", "c"])
    forward_params = model[0].model_forward_params
    return [
        name
        for name in ("input_ids", "attention_mask", "token_type_ids")
        if name in features and name in forward_params
    ]


def _export_onnx(model: Any, inputs: list[str], dest: Path) -> None:
    """Write the model's Transformer as ONNX: token tensors in, last hidden state out."""
    import torch

    class HiddenStates(torch.nn.Module):
        """Positional inputs, one output: what torch.onnx traces."""

        def __init__(self, auto_model: torch.nn.Module) -> None:
            super().__init__()
            self.auto_model = auto_model

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            named = dict(zip(inputs, tensors, strict=True))
            return self.auto_model(**named, return_dict=True).last_hidden_state

    features = model.preprocess(["query: an example sentence", "query: short"])
    sample = tuple(features[name] for name in inputs)
    axes = {name: {0: "batch", 1: "tokens"} for name in [*inputs, "last_hidden_state"]}
    with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
        # The tracer warns about shape checks it freezes (``q_length > 1``):
        # true for every input, whose shortest text is [CLS] [SEP].
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        # The TorchScript exporter: the dynamo one needs onnxscript and is far
        # slower to export a BERT; both give the same graph for these models.
        torch.onnx.export(
            HiddenStates(model[0].model).eval(),
            sample,
            str(dest),
            input_names=inputs,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


def _quantize_onnx(source: Path, dest: Path) -> None:
    """int8 weights for every MatMul, one scale per output channel.

    Per-tensor scales moved e5-small's cosines by up to 0.024; per channel,
    0.007. Embedding lookups (Gather) stay fp32: quantizing a 250k-row
    vocabulary table costs accuracy and buys no speed.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(source),
        str(dest),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
    )


def _export_openvino(onnx_path: Path, quantize: str, dest: Path) -> None:
    """Convert the ONNX graph to OpenVINO IR; int8: weights compressed by NNCF."""
    import openvino as ov

    ov_model = ov.Core().read_model(str(onnx_path))
    if quantize == "int8":
        try:
            import nncf
        except ImportError as error:
            raise ModelError(
                "--backend openvino --quantize int8 needs the Python package 'nncf': "
                f"pip install '{EXTRAS['openvino']}'"
            ) from error
        ov_model = nncf.compress_weights(ov_model, mode=nncf.CompressWeightsMode.INT8_ASYM)
    ov.save_model(ov_model, str(dest), compress_to_fp16=False)


def export_model(
    model_path: str | Path,
    backend: str,
    quantize: str,
    fingerprint: str | None = None,
    cache_dir: str | None = None,
) -> Path:
    """The cached export of a local sentence-transformers folder; built once, offline.

    The build reads only ``model_path`` and runs in a temporary folder that
    is renamed into place when complete (``atomic_build``), so concurrent
    workers and crashes never leave a half-written export in use.

    Args:
        model_path: A local sentence-transformers folder (a resolved ``--model``).
        backend: ``onnx`` or ``openvino``.
        quantize: ``none`` or ``int8``.
        fingerprint: The model's content fingerprint, if known (else computed).
        cache_dir: The paramine cache; default per ``cache_root``.

    Returns:
        The export folder, holding :data:`ONNX_FILE` or :data:`OPENVINO_FILE`
        and :data:`EXPORT_INFO`.
    """
    if backend not in ("onnx", "openvino"):
        raise UsageError(f"only the onnx and openvino backends are exported, not {backend!r}")
    check_backend(backend, quantize)
    require_runtime(backend)
    target = export_dir(model_path, backend, quantize, fingerprint, cache_dir)

    def build(tmp: Path) -> dict[str, Any]:
        from paramine.encoders.lstm_pooling import load_encoder

        model = load_encoder(str(model_path), device="cpu")
        model.eval()
        _transformer_module(model, str(model_path))
        inputs = _input_names(model)
        fp32 = tmp / ("fp32.onnx" if backend == "openvino" or quantize == "int8" else ONNX_FILE)
        _export_onnx(model, inputs, fp32)
        if backend == "onnx":
            if quantize == "int8":
                _quantize_onnx(fp32, tmp / ONNX_FILE)
                fp32.unlink()
        else:
            _export_openvino(fp32, quantize, tmp / OPENVINO_FILE)
            fp32.unlink()
        info = {
            "source": str(model_path),
            "fingerprint": fingerprint,
            "backend": backend,
            "quantize": quantize,
            "inputs": inputs,
            "export_format": EXPORT_FORMAT,
        }
        (tmp / EXPORT_INFO).write_text(json.dumps(info, indent=2) + "\n")
        return info

    log.info("exporting %s for %s (%s) into %s", model_path, backend, quantize, target)
    return atomic_build(target, build)


# ------------------------------------------------------------- loading


class ExportedRuntime:
    """Runs an export: token tensors in, the last hidden state out, as numpy arrays."""

    def __init__(self, folder: Path, backend: str) -> None:
        info = json.loads((folder / EXPORT_INFO).read_text())
        self.inputs: list[str] = list(info["inputs"])
        self.backend = backend
        self._run: Any
        if backend == "onnx":
            import onnxruntime as ort

            options = ort.SessionOptions()
            # Threads that spin while waiting made torch 5-27x slower on
            # 2-core machines (OMP_WAIT_POLICY); ONNX Runtime spins by default.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            session = ort.InferenceSession(
                str(folder / ONNX_FILE), options, providers=["CPUExecutionProvider"]
            )
            self._run = lambda feed: session.run(["last_hidden_state"], feed)[0]
        else:
            import openvino as ov

            compiled = ov.Core().compile_model(
                str(folder / OPENVINO_FILE), "CPU", {"PERFORMANCE_HINT": "LATENCY"}
            )
            request = compiled.create_infer_request()
            self._run = lambda feed: request.infer(feed)[compiled.output(0)]

    def __call__(self, feed: dict[str, Any]) -> Any:
        """``(batch, tokens, hidden)`` float32 hidden states for a feed of int64 arrays."""
        import numpy as np

        return np.asarray(self._run(feed), dtype=np.float32)


def _exported_transformer(runtime: ExportedRuntime, config: Any) -> Any:
    """A torch module standing in for a Transformer module's Hugging Face model.

    ``Transformer.forward`` calls ``self.model(**features)`` and reads
    ``last_hidden_state``; this module answers that call from the runtime,
    and keeps the original ``config`` that sentence-transformers reads. It is
    built here, not at import, so that importing this module imports no torch.
    """
    import numpy as np
    import torch

    class ExportedTransformer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.config = config
            self.runtime = runtime
            # sentence-transformers finds the device from the first parameter
            # or buffer; the export has no weights here: answer with CPU.
            self.register_buffer("device_anchor", torch.zeros(1), persistent=False)

        def forward(self, **features: Any) -> dict[str, torch.Tensor]:
            feed = {
                name: np.ascontiguousarray(features[name].cpu().numpy(), dtype=np.int64)
                for name in runtime.inputs
            }
            hidden = runtime(feed)  # (batch, tokens, hidden)
            return {"last_hidden_state": torch.from_numpy(np.array(hidden, copy=True))}

    return ExportedTransformer()


def load_for_backend(
    model_path: str,
    choice: BackendChoice,
    fingerprint: str | None = None,
    cache_dir: str | None = None,
    dtype: str = "float16",
) -> Any:
    """A ``SentenceTransformer`` whose Transformer runs on the chosen backend.

    torch: the folder as it is; on CUDA with SDPA attention and its weights in
    ``dtype`` (one of :data:`GPU_DTYPES`), for :func:`encode_bucketed`.
    onnx / openvino: the model on CPU with its Hugging Face model replaced by
    the cached export (:func:`export_model`); everything else in the model is
    unchanged, so ``encode`` and the handler's unpadded encoding work as before.
    """
    from paramine.encoders.lstm_pooling import load_encoder

    # load_encoder also reads model folders saved before paramine's modules
    # moved under `paramine.`.
    if choice.backend == "torch" and choice.device == "cuda":
        if dtype not in GPU_DTYPES:
            raise UsageError(f"dtype={dtype!r}; allowed: {', '.join(GPU_DTYPES)}")
        import torch

        model = load_encoder(
            model_path, device=choice.device, model_kwargs={"attn_implementation": "sdpa"}
        )
        # Half precision doubles throughput on GPU; cosines move by ~1e-3. The
        # whole model, not only the Transformer: a pooling module with weights
        # (LSTM pooling) must take the Transformer's dtype.
        model.to(getattr(torch, dtype))
        model.eval()
        return model
    if choice.backend == "torch":
        model = load_encoder(model_path, device=choice.device)
        model.eval()
        return model
    require_runtime(choice.backend)
    folder = export_model(model_path, choice.backend, choice.quantize, fingerprint, cache_dir)
    model = load_encoder(model_path, device="cpu")
    transformer = _transformer_module(model, model_path)
    runtime = ExportedRuntime(folder, choice.backend)
    # Drop the torch weights: the export holds them now.
    transformer.model = _exported_transformer(runtime, transformer.model.config)
    model.eval()
    return model
