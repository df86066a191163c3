"""EncoderOptions: the model a run encodes with, and how (``--model`` ... ``--quantize``).

The encoding stage's settings, stated once: ``paramine mine``'s flags, job
files and refresh configs read these declarations (``MiningSettings``
declares its fields from them). Where and in what batches the model runs
(``--device``, ``--batch-tokens``) is the run's, not the encoder's: a
different machine writes the same pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

from paramine.encoders.inference.backends import BACKENDS, QUANTIZATIONS, check_backend
from paramine.encoders.models.registry import DEFAULT_MODEL
from paramine.schemas.options import option, parse_fields


@dataclass(frozen=True)
class EncoderOptions:
    """The model a run encodes with, its prefix, and the backend it runs in.

    Attributes:
        model: A registry name (``e5-small``), a sentence-transformers
            folder, a folder URL or a hub id.
        prefix: Text put before every sentence; ``None``: the model's own.
        backend: ``auto``, ``torch``, ``onnx`` or ``openvino``.
        quantize: ``none`` or ``int8`` (ONNX, OpenVINO); ``None``: the backend's own.
    """

    model: str = option(
        DEFAULT_MODEL,
        "e5-small (offline default), a sentence-transformers folder, a folder URL, or a "
        "hub id (default: %(default)s)",
        group=None,
    )
    prefix: str | None = option(
        None,
        "text put before every sentence (default: the model's own, 'query: ' for e5)",
        group=None,
    )
    backend: str = option(
        "auto",
        "inference backend: torch, onnx (ONNX Runtime), openvino, or auto (on CPU the "
        "fastest measured whose vectors do not depend on the batch, today openvino; torch "
        "on GPU); exported models are cached, built offline (docs/models.md) "
        "(default: %(default)s)",
        group=None,
        choices=BACKENDS,
    )
    quantize: str | None = option(
        None,
        "with --backend onnx or openvino: none, or int8 (dynamic int8 weights) "
        "(default: the backend's own, none)",
        group=None,
        choices=QUANTIZATIONS,
    )

    def __post_init__(self) -> None:
        """Parse the declared options, then check the backend and its quantization together.

        Raises:
            UsageError: Naming the flag and what it allows.
        """
        parse_fields(self)
        check_backend(self.backend, self.quantize)
