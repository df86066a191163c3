"""A ``SentenceTransformer`` whose Transformer runs on the chosen backend.

torch runs the folder as it is (on a GPU in fp16 or bf16 with SDPA attention);
onnx and openvino replace the Transformer's Hugging Face model by the cached
export (``export.py``) behind a torch module that answers the same call, so
``encode`` and the handler's unpadded encoding work unchanged. Each exported
backend's runtime is in its own module (``onnx_backend.py``,
``openvino_backend.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paramine.encoders.inference.backends import GPU_DTYPES, BackendChoice, require_runtime
from paramine.encoders.inference.export import EXPORT_INFO, export_model, transformer_module
from paramine.encoders.inference.onnx_backend import OnnxRuntime
from paramine.encoders.inference.openvino_backend import OpenVinoRuntime
from paramine.schemas.errors import UsageError


class ExportedRuntime:
    """Runs an export with its backend's runtime: token arrays in, float32 hidden states out."""

    def __init__(self, folder: Path, backend: str) -> None:
        info = json.loads((folder / EXPORT_INFO).read_text())
        self.inputs: list[str] = list(info["inputs"])
        self.backend = backend
        self._run: OnnxRuntime | OpenVinoRuntime = (
            OnnxRuntime(folder) if backend == "onnx" else OpenVinoRuntime(folder)
        )

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
    from paramine.encoders.modules.lstm_pooling import load_encoder

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
    transformer = transformer_module(model, model_path)
    runtime = ExportedRuntime(folder, choice.backend)
    # Drop the torch weights: the export holds them now.
    transformer.model = _exported_transformer(runtime, transformer.model.config)
    model.eval()
    return model
