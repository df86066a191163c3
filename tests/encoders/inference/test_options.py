"""EncoderOptions: the model, its prefix and backend, checked when made, as the flags are."""

from __future__ import annotations

import pytest
from paramine.encoders.inference.handler import EncoderHandler
from paramine.encoders.inference.options import EncoderOptions
from paramine.encoders.models.registry import DEFAULT_MODEL
from paramine.pipelines.settings.mining import MiningSettings
from paramine.schemas.errors import UsageError


def test_the_defaults_are_the_registrys_model_on_the_best_backend() -> None:
    options = EncoderOptions()
    assert (options.model, options.prefix, options.backend, options.quantize) == (
        DEFAULT_MODEL,
        None,
        "auto",
        None,
    )
    assert MiningSettings().encoder_options == options


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"backend": "tensorrt"}, r"^--backend 'tensorrt'; allowed: auto, torch, onnx, openvino"),
        ({"quantize": "int4"}, r"^--quantize 'int4'; allowed: none, int8"),
        ({"backend": "torch", "quantize": "int8"}, r"^--quantize int8 needs --backend onnx"),
    ],
)
def test_a_bad_choice_names_its_flag(values: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        EncoderOptions(**values)
    with pytest.raises(UsageError, match=message):
        MiningSettings(**values)


def test_the_handler_of_options_carries_them_and_the_runs_own_settings() -> None:
    options = EncoderOptions("some/folder", prefix="passage: ", backend="onnx", quantize="int8")
    handler = EncoderHandler.of(options, device="cpu", token_budget=512)
    assert (handler.model_name, handler.prefix, handler.backend, handler.quantize) == (
        "some/folder",
        "passage: ",
        "onnx",
        "int8",
    )
    assert (handler.device, handler.token_budget) == ("cpu", 512)
