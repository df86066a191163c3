"""The inference backends on the tiny model: the choice, export and cache, loading and agreement,
int8, the GPU path (backends.py, export.py, loading.py, bucketed.py and the handler's encoding)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from paramine.encoders.inference import backends, bucketed, export, loading
from paramine.encoders.inference.backends import BackendChoice, choose_backend
from paramine.encoders.inference.export import export_dir, export_model
from paramine.encoders.inference.handler import EncoderHandler, encode_unpadded, row_batches
from paramine.schemas.errors import ModelError, UsageError

TEXTS = [
    "query: the cat sat on the mat",
    "query: a dog",
    "query: the cat sat on the mat",
    "query: hello world again and again and again",
    "query: x",
    "query: a dog barks at the postman",
    "query: a cat",
]


def _installed(*modules: str) -> bool:
    return all(importlib.util.find_spec(name) is not None for name in modules)


needs_onnx = pytest.mark.skipif(
    not _installed("onnx", "onnxruntime"),
    reason="onnx / onnxruntime not installed: pip install 'paramine[onnx]'",
)
needs_openvino = pytest.mark.skipif(
    not _installed("onnx", "openvino", "nncf"),
    reason="openvino / nncf not installed: pip install 'paramine[openvino]'",
)
EXPORTED = [
    pytest.param("onnx", "none", marks=needs_onnx),
    pytest.param("onnx", "int8", marks=needs_onnx),
    pytest.param("openvino", "none", marks=needs_openvino),
    pytest.param("openvino", "int8", marks=needs_openvino),
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One paramine cache for the module: each export is built once."""
    return str(tmp_path_factory.mktemp("paramine-cache"))


@pytest.fixture(scope="module")
def torch_vectors(tiny_model_dir: Path) -> np.ndarray:
    """The reference: the tiny model's torch fp32 embeddings of TEXTS."""
    model = loading.load_for_backend(str(tiny_model_dir), BackendChoice("torch", "none", "cpu"))
    return encode_unpadded(model, TEXTS)


# ------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("backend", "quantize", "named"),
    [
        ("tensorrt", None, "auto, torch, onnx, openvino"),
        ("onnx", "int4", "none, int8"),
        ("torch", "int8", "--backend onnx or openvino"),
    ],
)
def test_bad_backend_or_quantize_names_the_allowed_values(
    backend: str, quantize: str | None, named: str
) -> None:
    with pytest.raises(UsageError, match=named):
        EncoderHandler("any-model", backend=backend, quantize=quantize)


def test_exported_backends_refuse_an_explicit_gpu() -> None:
    with pytest.raises(UsageError, match="CPU only"):
        EncoderHandler("any-model", device="cuda", backend="onnx")


def test_auto_is_the_best_cpu_backend_on_cpu_and_torch_on_gpu() -> None:
    assert choose_backend("auto", None, "cpu") == BackendChoice(*backends.BEST_CPU, "cpu")
    assert choose_backend("auto", None, "cuda") == BackendChoice("torch", "none", "cuda")
    assert choose_backend("auto", "none", "cpu").quantize == "none"
    assert choose_backend("onnx", None, "cpu") == BackendChoice("onnx", "none", "cpu")
    with pytest.raises(UsageError, match="CPU backends only"):
        choose_backend("auto", "int8", "cuda")


def test_missing_runtime_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_openvino(name: str, *args: object, **kwargs: object) -> object:
        if name == "openvino":
            raise ImportError("No module named 'openvino'")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_openvino)
    with pytest.raises(ModelError, match=r"pip install 'paramine\[openvino\]'"):
        backends.require_runtime("openvino")


# -------------------------------------------------------------- the cache


def test_cache_key_covers_model_backend_and_quantization(tmp_path: Path) -> None:
    folder = tmp_path / "my-model"
    keys = {
        export_dir(folder, backend, quantize, fingerprint, str(tmp_path))
        for backend in ("onnx", "openvino")
        for quantize in ("none", "int8")
        for fingerprint in ("sha256:aaaa", "sha256:bbbb")
    }
    assert len(keys) == 8
    one = export_dir(folder, "onnx", "int8", "sha256:aaaa", str(tmp_path))
    assert one == export_dir(folder, "onnx", "int8", "sha256:aaaa", str(tmp_path))
    # Beside the materialized default model, in the paramine cache.
    assert one.parent == tmp_path / "models" / "exports"
    assert one.name.startswith("my-model-onnx-int8-")


def test_cache_key_follows_the_folder_content(tiny_model_dir: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "tiny"
    shutil.copytree(tiny_model_dir, copy)
    before = export_dir(copy, "onnx", "none", cache_dir=str(tmp_path))
    config = copy / "config_sentence_transformers.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "retrained": True}))
    assert export_dir(copy, "onnx", "none", cache_dir=str(tmp_path)) != before


@needs_onnx
def test_export_is_built_once_and_reused(tiny_model_dir: Path, cache: str) -> None:
    first = export_model(tiny_model_dir, "onnx", "none", cache_dir=cache)
    stamp = (first / export.ONNX_FILE).stat().st_mtime_ns
    again = export_model(tiny_model_dir, "onnx", "none", cache_dir=cache)
    assert again == first
    assert (again / export.ONNX_FILE).stat().st_mtime_ns == stamp
    info = json.loads((first / export.EXPORT_INFO).read_text())
    assert info["backend"] == "onnx" and info["quantize"] == "none"
    assert "input_ids" in info["inputs"] and "attention_mask" in info["inputs"]
    # No temporary build folder is left beside it.
    assert [p.name for p in first.parent.iterdir() if p.name.startswith(".")] == []


# ----------------------------------------------------- loading, agreement


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "quantize"), EXPORTED)
def test_each_backend_loads_and_agrees_with_torch(
    tiny_model_dir: Path, cache: str, torch_vectors: np.ndarray, backend: str, quantize: str
) -> None:
    model = loading.load_for_backend(
        str(tiny_model_dir), BackendChoice(backend, quantize, "cpu"), cache_dir=cache
    )
    got = encode_unpadded(model, TEXTS)
    assert got.shape == torch_vectors.shape
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosine_to_torch = (got * torch_vectors).sum(axis=1)
    # fp32 exports are the same computation; int8 weights move it a little.
    assert cosine_to_torch.min() > (0.9999 if quantize == "none" else 0.99)
    # The same text gives the same vector, wherever it sits.
    np.testing.assert_array_equal(got[0], got[2])
    # Pair cosines, what mining thresholds, agree with torch's. fp32 exports sum
    # in another order (OpenVINO fuses differently), which moves a cosine by
    # about 1e-5; 1e-4 is still far below any cut's resolution.
    pairs = [(0, 6), (1, 5), (3, 4)]
    for a, b in pairs:
        torch_cos = float(torch_vectors[a] @ torch_vectors[b])
        assert abs(float(got[a] @ got[b]) - torch_cos) < (1e-4 if quantize == "none" else 0.02)


def test_the_unpadded_encoding_gives_the_bits_of_encode(tiny_model_dir: Path) -> None:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(tiny_model_dir), device="cpu")
    model.train()  # encode switches dropout off; so must the cut batches
    texts = [*TEXTS, "query: " + "long " * 400]  # the last one truncated

    def by_encode() -> np.ndarray:
        # Each text beside a copy of itself: its own length, two rows.
        return np.stack([model.encode([t, t], normalize_embeddings=True)[0] for t in texts])

    np.testing.assert_array_equal(encode_unpadded(model, texts), by_encode())
    # A stored default prompt is applied, as encode applies it.
    model.prompts = {**model.prompts, "q": "passage: "}
    model.default_prompt_name = "q"
    with_prompt = encode_unpadded(model, texts)
    np.testing.assert_array_equal(with_prompt, by_encode())
    model.default_prompt_name = None
    assert not np.allclose(with_prompt, encode_unpadded(model, texts))


@pytest.mark.parametrize(
    ("backend", "quantize"),
    [
        pytest.param("torch", "none"),
        pytest.param("onnx", "none", marks=needs_onnx),
        pytest.param(
            "onnx",
            "int8",
            marks=[
                needs_onnx,
                pytest.mark.xfail(
                    strict=True,
                    reason="dynamic int8 quantization takes one activation scale per batch, "
                    "so a text's vector depends on its batch-mates: why auto does not pick it",
                ),
            ],
        ),
        pytest.param("openvino", "none", marks=needs_openvino),
        pytest.param("openvino", "int8", marks=needs_openvino),
    ],
)
def test_a_vector_does_not_depend_on_its_batch(
    tiny_model_dir: Path, cache: str, backend: str, quantize: str
) -> None:
    model = loading.load_for_backend(
        str(tiny_model_dir), BackendChoice(backend, quantize, "cpu"), cache_dir=cache
    )
    # Short texts of few tokens each: encode_unpadded batches equal token
    # lengths together, so most of these share a batch with different texts.
    words = [(a, b) for a in ("red", "cold", "old") for b in ("car", "tea", "sky", "hat")]
    texts = [f"query: {a} {b}" for a, b in words] + TEXTS
    together = encode_unpadded(model, texts)
    alone = np.stack([encode_unpadded(model, [text])[0] for text in texts])
    # Bit for bit: mining's equivalences (grouping before scoring, the same
    # pairs from any bundling of the input) rest on it.
    np.testing.assert_array_equal(together, alone)


@pytest.mark.parametrize("batch_size", [2, 3, 64, 100, 128])
def test_row_batches_cover_every_row_once_in_few_shapes(batch_size: int) -> None:
    for n in range(1, 400):
        rows = list(range(1000, 1000 + n))
        passes = list(row_batches(rows, batch_size))
        assert [row for written, _ in passes for row in written] == rows
        for written, run in passes:
            size = len(run)
            assert 2 <= size <= max(batch_size, 2) and size & (size - 1) == 0, (n, size)
            assert run[: len(written)] == written
            padding = run[len(written) :]
            assert padding == written[:1] * len(padding)
            # Copies are at most a third of the rows they pad, but for a lone row.
            assert len(padding) <= len(written) // 3 or size == 2, (n, written, run)


def test_the_model_meets_a_power_of_two_rows_per_pass(tiny_model_dir: Path) -> None:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(tiny_model_dir), device="cpu")
    shapes: set[tuple[int, int]] = set()
    forward = model.forward

    def spy(features: dict, **kwargs: object) -> dict:
        shapes.add(tuple(features["attention_mask"].shape))
        return forward(features, **kwargs)

    model.forward = spy  # type: ignore[method-assign]
    words = ["red", "cold", "old", "car", "tea", "sky", "hat", "a", "b", "c", "d"]
    # Batches of 2 to 120 short texts: many row counts at each token length.
    texts = [f"query: {a} {b}" for a in words for b in words]
    got = [encode_unpadded(model, texts[:n] * 2)[:n] for n in range(1, 61)]
    rows = {r for r, _ in shapes}
    assert len(rows) > 3 and rows <= {2, 4, 8, 16, 32, 64, 128}, rows
    # The padded passes' vectors are those of the texts encoded alone.
    alone = encode_unpadded(model, texts[:60])
    for vectors in got:
        np.testing.assert_array_equal(vectors, alone[: len(vectors)])


def test_auto_picks_a_batch_independent_backend() -> None:
    assert backends.BEST_CPU != ("onnx", "int8")


@needs_onnx
def test_int8_export_holds_integer_matmuls(tiny_model_dir: Path, cache: str) -> None:
    import onnx

    fp32 = export_model(tiny_model_dir, "onnx", "none", cache_dir=cache)
    int8 = export_model(tiny_model_dir, "onnx", "int8", cache_dir=cache)
    assert int8 != fp32
    ops = {node.op_type for node in onnx.load(str(int8 / export.ONNX_FILE)).graph.node}
    assert "MatMulInteger" in ops and "DynamicQuantizeLinear" in ops
    fp32_ops = {node.op_type for node in onnx.load(str(fp32 / export.ONNX_FILE)).graph.node}
    assert "MatMulInteger" not in fp32_ops


@needs_onnx
def test_handler_encodes_with_the_onnx_backend(
    tiny_model_dir: Path, cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PARAMINE_CACHE", cache)
    texts = ["the cat sat", "kot siedział", "a dog", "pies"]
    vectors = {}
    for backend in ("torch", "onnx"):
        handler = EncoderHandler(str(tiny_model_dir), device="cpu", backend=backend)
        loaded = handler.load_model()
        vectors[backend] = np.stack([v for _, v in handler.run_inference(texts, loaded)])
    np.testing.assert_allclose(vectors["onnx"], vectors["torch"], atol=1e-4)
    assert type(loaded.model[0].model).__name__ == "ExportedTransformer"


# ------------------------------------------------------------ the GPU path


def _torch_on_cpu(model_dir: Path) -> object:
    return loading.load_for_backend(str(model_dir), BackendChoice("torch", "none", "cpu"))


def test_gpu_path_runs_on_cpu_and_matches_the_unpadded_encoding(
    tiny_model_dir: Path, torch_vectors: np.ndarray
) -> None:
    model = _torch_on_cpu(tiny_model_dir)
    # A budget this small splits each length's texts over several batches
    # and chunks, and leaves one text alone in a batch.
    got = bucketed.encode_bucketed(model, TEXTS, token_budget=24, chunk_size=3)
    np.testing.assert_allclose(got, torch_vectors, atol=1e-6)
    assert bucketed.encode_bucketed(model, []).shape == (0, torch_vectors.shape[1])


def test_gpu_path_half_precision_on_cpu_stays_close(
    tiny_model_dir: Path, torch_vectors: np.ndarray
) -> None:
    import torch

    model = _torch_on_cpu(tiny_model_dir)
    model.to(torch.bfloat16)  # what load_for_backend does on CUDA with dtype="bfloat16"
    assert next(model.parameters()).dtype == torch.bfloat16
    got = bucketed.encode_bucketed(model, TEXTS)
    assert got.dtype == np.float32
    assert (got * torch_vectors).sum(axis=1).min() > 0.99


def test_gpu_dtype_is_checked_where_it_is_given() -> None:
    with pytest.raises(UsageError, match="float16, bfloat16, float32"):
        loading.load_for_backend("any-model", BackendChoice("torch", "none", "cuda"), dtype="int8")
    with pytest.raises(UsageError, match="float16, bfloat16, float32"):
        EncoderHandler("any-model", gpu_dtype="half")


def test_gpu_path_tokenizer_errors_reach_the_caller(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _torch_on_cpu(tiny_model_dir)

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("tokenizer exploded")

    monkeypatch.setattr(bucketed, "_tokenize_chunks", broken)
    with pytest.raises(RuntimeError, match="tokenizer exploded"):
        bucketed.encode_bucketed(model, TEXTS)


@pytest.mark.gpu
def test_gpu_path_on_cuda(tiny_model_dir: Path, torch_vectors: np.ndarray) -> None:
    model = loading.load_for_backend(
        str(tiny_model_dir), BackendChoice("torch", "none", "cuda"), dtype="float16"
    )
    got = bucketed.encode_bucketed(model, TEXTS)
    assert (got * torch_vectors).sum(axis=1).min() > 0.99
