"""The openvino backend: the ONNX graph converted to OpenVINO IR, and OpenVINO running it.

``export.py`` converts the graph ``onnx_backend.export_onnx`` wrote with
``export_openvino`` (NNCF's weight compression for ``--quantize int8``);
``loading.py`` runs the export with ``OpenVinoRuntime``. OpenVINO is imported
when a function runs, not with this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paramine.encoders.inference.backends import EXTRAS
from paramine.schemas.errors import ModelError

#: The export's OpenVINO IR (its weights beside it, ``openvino_model.bin``).
OPENVINO_FILE = "openvino_model.xml"


def export_openvino(onnx_path: Path, quantize: str, dest: Path) -> None:
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


class OpenVinoRuntime:
    """An OpenVINO export compiled for the CPU: token arrays in, hidden states out.

    Args:
        folder: The export folder (``export.export_model``), holding ``OPENVINO_FILE``.
    """

    def __init__(self, folder: Path) -> None:
        import openvino as ov

        compiled = ov.Core().compile_model(
            str(folder / OPENVINO_FILE), "CPU", {"PERFORMANCE_HINT": "LATENCY"}
        )
        self._request = compiled.create_infer_request()
        self._output = compiled.output(0)

    def __call__(self, feed: dict[str, Any]) -> Any:
        """``(batch, tokens, hidden)`` hidden states for a feed of int64 arrays."""
        return self._request.infer(feed)[self._output]
