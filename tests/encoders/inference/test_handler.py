"""One encoder path: the RunInference handler takes the bucketed encoding on a GPU, unpadded on CPU.

No GPU is needed: the device check (``handler.on_cuda``) is mocked to say
CUDA, and ``encode_bucketed`` itself runs on CPU in fp32, so the GPU branch
is exercised for real, through the handler and through a Beam pipeline.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that
from apache_beam.utils.multi_process_shared import MultiProcessShared
from paramine.encoders.inference import handler as handler_module
from paramine.encoders.inference.handler import EncoderHandler, estimated_tokens
from paramine.pipelines.run.encoder import encoder_for
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import RunSettings
from paramine.pipelines.stages.score.encode_texts import EncodeTexts
from paramine.schemas.errors import UsageError

TEXTS = [
    "the cat sat on the mat",
    "a dog",
    "hello world again and again and again",
    "x",
    "a dog barks at the postman",
    "kot siedział na macie",
]

#: Every call of a spied encoder, ``(name, texts, kwargs)``, in this process
#: (FnApiRunner runs the pipeline's DoFns in it too).
CALLS: list[tuple[str, list[str], dict[str, Any]]] = []


def spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    """The real encoder, recording each call."""

    def recorded(model: Any, texts: list[str], **kwargs: Any) -> Any:
        CALLS.append((name, list(texts), kwargs))
        return real(model, texts, **kwargs)

    return recorded


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str], dict[str, Any]]]:
    """Spies on both encodings; the list of their calls."""
    CALLS.clear()
    for name in ("encode_bucketed", "encode_unpadded"):
        monkeypatch.setattr(handler_module, name, spy(name, getattr(handler_module, name)))
    return CALLS


@pytest.fixture
def on_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The device check says CUDA; nothing else changes (the model stays on CPU, fp32)."""
    monkeypatch.setattr(handler_module, "on_cuda", lambda model: True)


def reference(handler: EncoderHandler, texts: list[str]) -> np.ndarray:
    """The model's own ``encode`` of the texts, unit vectors."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(handler.model_name, device="cpu")
    prefixed = [handler.prefix + text for text in texts]
    return np.asarray(model.encode(prefixed, normalize_embeddings=True))


def test_on_a_gpu_the_handler_encodes_bucketed_with_its_token_budget(
    tiny_model_dir: Path, calls: list, on_gpu: None
) -> None:
    handler = EncoderHandler(str(tiny_model_dir), device="cpu", backend="torch", token_budget=24)
    loaded = handler.load_model()
    assert loaded.bucketed
    out = list(handler.run_inference(TEXTS, loaded))

    prefixed = [handler.prefix + text for text in TEXTS]
    assert calls == [("encode_bucketed", prefixed, {"token_budget": 24})]
    assert [text for text, _ in out] == TEXTS
    vectors = np.stack([vector for _, vector in out])
    np.testing.assert_allclose(vectors, reference(handler, TEXTS), atol=1e-5)


def test_on_cpu_the_handler_encodes_unpadded_as_the_model_does(
    tiny_model_dir: Path, calls: list
) -> None:
    handler = EncoderHandler(str(tiny_model_dir), device="cpu", backend="torch")
    loaded = handler.load_model()
    assert not loaded.bucketed
    out = list(handler.run_inference(TEXTS, loaded))

    assert [name for name, _, _ in calls] == ["encode_unpadded"]
    vectors = np.stack([vector for _, vector in out])
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, reference(handler, TEXTS), atol=1e-5)


@pytest.mark.parametrize("bucketed", [False, True], ids=["unpadded", "bucketed"])
def test_a_vector_does_not_depend_on_its_batch(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, bucketed: bool
) -> None:
    monkeypatch.setattr(handler_module, "on_cuda", lambda model: bucketed)
    handler = EncoderHandler(str(tiny_model_dir), device="cpu", backend="torch")
    loaded = handler.load_model()
    others = [f"how are you today {'my friend ' * i}" for i in range(12)]
    text = "the quick brown fox"
    alone = dict(handler.run_inference([text], loaded))[text]
    mixed = dict(handler.run_inference([*others[:5], text, *others[5:]], loaded))[text]
    # Bit for bit: no padding, so no rounding that depends on the batch-mates.
    np.testing.assert_array_equal(alone, mixed)


def test_a_shared_model_encodes_where_it_is_loaded(
    tiny_model_dir: Path, tmp_path: Path, calls: list, on_gpu: None
) -> None:
    # share_model_across_processes: Beam hands run_inference a proxy that
    # forwards method calls only (no attributes such as ``device``), so the
    # encoding must be a method of what load_model returns.
    handler = EncoderHandler(
        str(tiny_model_dir), device="cpu", backend="torch", share_across_processes=True
    )
    proxy = MultiProcessShared(
        handler.load_model,
        tag=f"paramine-test-{uuid.uuid4().hex}",
        path=str(tmp_path),
        always_proxy=True,
    ).acquire()
    with pytest.raises(AttributeError):
        proxy.device  # noqa: B018 - what a proxy does not forward
    out = dict(handler.run_inference(TEXTS, proxy))
    assert [name for name, _, _ in calls] == ["encode_bucketed"]
    vectors = np.stack([out[text] for text in TEXTS])
    np.testing.assert_allclose(vectors, reference(handler, TEXTS), atol=1e-5)


@pytest.mark.pipeline
def test_the_mining_graph_runs_the_gpu_path_through_run_inference(
    tiny_model_dir: Path, calls: list, on_gpu: None
) -> None:
    settings = MiningSettings(model=str(tiny_model_dir), backend="torch")
    handler = encoder_for(settings, RunSettings(batch_tokens=64))
    texts = [*TEXTS, *TEXTS[:3]]  # repeats: each distinct text is encoded once
    expected = dict(zip(TEXTS, reference(handler, TEXTS), strict=True))

    def check(got: list[tuple[str, np.ndarray]]) -> None:
        assert sorted(text for text, _ in got) == sorted(TEXTS)
        for text, vector in got:
            np.testing.assert_allclose(vector, expected[text], atol=1e-5)

    with TestPipeline(runner="FnApiRunner") as pipeline:
        vectors = pipeline | beam.Create(texts) | EncodeTexts(handler)
        assert_that(vectors, check)

    assert {name for name, _, _ in calls} == {"encode_bucketed"}
    assert {kwargs["token_budget"] for _, _, kwargs in calls} == {64}
    assert sorted(text for _, batch, _ in calls for text in batch) == sorted(TEXTS)


def test_batches_are_packed_by_the_token_budget(tiny_model_dir: Path) -> None:
    handler = EncoderHandler(str(tiny_model_dir), token_budget=4096)
    assert handler.batch_elements_kwargs() == {
        "min_batch_size": 4096,
        "max_batch_size": 4096,
        "element_size_fn": estimated_tokens,
    }
    assert not handler.share_model_across_processes()
    assert EncoderHandler("m", share_across_processes=True).share_model_across_processes()
    assert handler.get_metrics_namespace() == "paramine"


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"device": "tpu"}, "allowed: auto, cpu, cuda"),
        ({"token_budget": 0}, "must be positive"),
        ({"gpu_dtype": "int8"}, "allowed: float16, bfloat16, float32"),
        ({"device": "cuda", "backend": "openvino"}, "CPU only"),
    ],
)
def test_bad_settings_are_refused_where_they_are_given(
    settings: dict[str, Any], named: str
) -> None:
    with pytest.raises(UsageError, match=named):
        EncoderHandler("any-model", **settings)
