"""The onnx backend: the Transformer as an ONNX graph, int8 weights, and ONNX Runtime running it.

``export.py`` builds the cached export with ``export_onnx`` (and
``quantize_onnx`` for ``--quantize int8``); the OpenVINO backend converts the
same graph (``openvino_backend.py``). ``loading.py`` runs an export with
``OnnxRuntime``. The runtime is imported when a function runs, not with this
module.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

#: The export's ONNX graph.
ONNX_FILE = "model.onnx"


def export_onnx(model: Any, inputs: list[str], dest: Path) -> None:
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


def quantize_onnx(source: Path, dest: Path) -> None:
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


class OnnxRuntime:
    """An ONNX export run by ONNX Runtime on the CPU: token arrays in, hidden states out.

    Args:
        folder: The export folder (``export.export_model``), holding ``ONNX_FILE``.
    """

    def __init__(self, folder: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        # Threads that spin while waiting made torch 5-27x slower on
        # 2-core machines (OMP_WAIT_POLICY); ONNX Runtime spins by default.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(
            str(folder / ONNX_FILE), options, providers=["CPUExecutionProvider"]
        )

    def __call__(self, feed: dict[str, Any]) -> Any:
        """``(batch, tokens, hidden)`` hidden states for a feed of int64 arrays."""
        return self._session.run(["last_hidden_state"], feed)[0]
