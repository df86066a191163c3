"""The inference backends' names and the choice among them: torch, ONNX Runtime, OpenVINO.

On CPU workers (most Spark and Flink clusters, a laptop) encoding is the cost
of a mining job. paramine exports the Transformer of any sentence-transformers
model to ONNX once, offline, into its cache (``export.py``, optionally with
int8 weights), and loads it back as an ordinary ``SentenceTransformer`` whose
Transformer runs in ONNX Runtime or OpenVINO (``loading.py``). Tokenization,
pooling, normalization and any other module (our LSTM pooling included) stay
the model's own, so every backend gives the same kind of embedding from the
same folder.

Why not ``SentenceTransformer(path, backend="onnx")``: that path goes through
optimum-onnx, whose releases pin ``transformers<4.58`` (paramine runs on 5.x),
and it exports from the hub by default. Here the export is ``torch.onnx``,
the runtimes are the plain ``onnxruntime`` and ``openvino`` wheels, and
nothing is downloaded.

This module holds what ``--device``, ``--backend`` and ``--quantize`` accept
and how ``auto`` resolves; it imports no runtime, so the settings can read it.
The GPU encoding (``bucketed.encode_bucketed``) is in ``bucketed.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from paramine.schemas.errors import ModelError, UsageError

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
