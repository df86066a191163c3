"""The export of a model's Transformer to ONNX or OpenVINO, cached and built once, offline.

The export is ``torch.onnx`` (the TorchScript exporter), int8 weights come from
ONNX Runtime's dynamic quantization or NNCF's weight compression (each
backend's module: ``onnx_backend.py``, ``openvino_backend.py``), and the
result lives in the paramine cache under a key that covers the model's
content (``export_dir``). ``loading.py`` runs it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from paramine.encoders.inference.backends import check_backend, require_runtime
from paramine.encoders.inference.onnx_backend import ONNX_FILE, export_onnx, quantize_onnx
from paramine.encoders.inference.openvino_backend import OPENVINO_FILE, export_openvino
from paramine.encoders.models.cache import EXPORTS_DIR
from paramine.encoders.models.resolve import atomic_build, cache_root, folder_fingerprint
from paramine.schemas.errors import ModelError, UsageError
from paramine.schemas.text_keys import text_digest

log = logging.getLogger(__name__)

#: Bumped when the export changes, so that old cached exports are not reused.
EXPORT_FORMAT = 1
#: The export's record: its source, backend, quantization and input names.
EXPORT_INFO = "paramine_export.json"


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


def transformer_module(model: Any, shown: str) -> Any:
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
        from paramine.encoders.modules.lstm_pooling import load_encoder

        model = load_encoder(str(model_path), device="cpu")
        model.eval()
        transformer_module(model, str(model_path))
        inputs = _input_names(model)
        fp32 = tmp / ("fp32.onnx" if backend == "openvino" or quantize == "int8" else ONNX_FILE)
        export_onnx(model, inputs, fp32)
        if backend == "onnx":
            if quantize == "int8":
                quantize_onnx(fp32, tmp / ONNX_FILE)
                fp32.unlink()
        else:
            export_openvino(fp32, quantize, tmp / OPENVINO_FILE)
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
