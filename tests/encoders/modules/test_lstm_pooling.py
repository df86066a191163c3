"""Tests of the LSTMPooling sentence-transformers module."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from paramine.encoders.models.module_classes import FORMER_CLASS_REF, trusted_class_ref
from paramine.encoders.modules.lstm_pooling import CLASS_REF, LSTMPooling, load_encoder, right_align
from paramine.schemas.errors import ModelError
from sentence_transformers import SentenceTransformer

from tests.tiny_model import with_code_module

SHORT = "ala ma kota"
LONG = "the quick brown fox jumps over the lazy dog " * 6


def lstm_model(tiny_model_dir: Path, hidden: int = 24, bidirectional: bool = False):
    torch.manual_seed(0)
    base = SentenceTransformer(str(tiny_model_dir), device="cpu")
    pooling = LSTMPooling(base[0].get_embedding_dimension(), hidden, bidirectional)
    return SentenceTransformer(modules=[base[0], pooling], device="cpu")


def test_forward_shapes_and_no_mutation() -> None:
    torch.manual_seed(0)
    module = LSTMPooling(embedding_dimension=8, hidden_size=5)
    tokens = torch.randn(3, 7, 8)  # (batch, seq, emb)
    mask = torch.tensor([[1] * 7, [1] * 4 + [0] * 3, [1] * 2 + [0] * 5])
    features = {"token_embeddings": tokens, "attention_mask": mask}
    before = tokens.clone()
    output = module(features)
    assert output["sentence_embedding"].shape == (3, 5)
    assert "sentence_embedding" not in features  # the caller's dict is untouched
    assert torch.equal(tokens, before)
    assert module.get_embedding_dimension() == 5
    assert module.get_sentence_embedding_dimension() == 5


def test_vector_is_the_state_at_the_last_real_token() -> None:
    torch.manual_seed(0)
    module = LSTMPooling(embedding_dimension=4, hidden_size=3)
    tokens = torch.randn(1, 6, 4)
    mask = torch.tensor([[1, 1, 1, 0, 0, 0]])
    _, (h_n, _) = module.lstm(tokens[:, :3])  # the real tokens only, no packing
    got = module({"token_embeddings": tokens, "attention_mask": mask})["sentence_embedding"]
    torch.testing.assert_close(got, h_n[0], atol=1e-6, rtol=0)


def test_bidirectional_concatenates_forward_last_and_backward_first() -> None:
    torch.manual_seed(0)
    module = LSTMPooling(embedding_dimension=4, hidden_size=3, bidirectional=True)
    tokens = torch.randn(2, 5, 4)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])
    got = module({"token_embeddings": tokens, "attention_mask": mask})["sentence_embedding"]
    assert got.shape == (2, 6)
    assert module.get_embedding_dimension() == 6
    output, _ = module.lstm(tokens[1:, :2])  # (1, 2, 2 * hidden)
    expected = torch.cat([output[0, -1, :3], output[0, 0, 3:]])
    torch.testing.assert_close(got[1], expected, atol=1e-6, rtol=0)


def test_left_padding_gives_the_same_vector() -> None:
    torch.manual_seed(0)
    module = LSTMPooling(embedding_dimension=4, hidden_size=3)
    real = torch.randn(1, 3, 4)
    right = torch.cat([real, torch.randn(1, 2, 4)], dim=1)
    left = torch.cat([torch.randn(1, 2, 4), real], dim=1)
    a = module({"token_embeddings": right, "attention_mask": torch.tensor([[1, 1, 1, 0, 0]])})
    b = module({"token_embeddings": left, "attention_mask": torch.tensor([[0, 0, 1, 1, 1]])})
    torch.testing.assert_close(a["sentence_embedding"], b["sentence_embedding"])
    moved = right_align(left, torch.tensor([[0, 0, 1, 1, 1]]))
    torch.testing.assert_close(moved[:, :3], real)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_padding_never_changes_a_sentence_vector(tiny_model_dir: Path, bidirectional: bool) -> None:
    model = lstm_model(tiny_model_dir, bidirectional=bidirectional)
    alone = model.encode([SHORT], convert_to_tensor=True)
    batched = model.encode([SHORT, LONG], convert_to_tensor=True)
    assert batched.shape == (2, 48 if bidirectional else 24)
    assert (alone[0] - batched[0]).abs().max().item() < 1e-5


def test_save_load_round_trip(tiny_model_dir: Path, tmp_path: Path) -> None:
    model = lstm_model(tiny_model_dir, hidden=16, bidirectional=True)
    model.save(str(tmp_path / "m"))
    saved = (tmp_path / "m" / "modules.json").read_text()
    assert CLASS_REF in saved
    assert (tmp_path / "m" / "1_LSTMPooling" / "model.safetensors").is_file()
    loaded = load_encoder(str(tmp_path / "m"), device="cpu")
    assert isinstance(loaded[1], LSTMPooling)
    assert loaded[1].get_config_dict() == {
        "embedding_dimension": 32,
        "hidden_size": 16,
        "bidirectional": True,
        "residual_dimension": 0,
    }
    texts = [SHORT, LONG]
    torch.testing.assert_close(
        loaded.encode(texts, convert_to_tensor=True),
        model.encode(texts, convert_to_tensor=True),
        atol=0,
        rtol=0,
    )
    # Plain SentenceTransformer(path) loads it too, bit for bit.
    plain = SentenceTransformer(str(tmp_path / "m"), device="cpu")
    assert isinstance(plain[1], LSTMPooling)
    torch.testing.assert_close(
        plain.encode(texts, convert_to_tensor=True),
        model.encode(texts, convert_to_tensor=True),
        atol=0,
        rtol=0,
    )


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="hidden_size"):
        LSTMPooling(embedding_dimension=8, hidden_size=0)
    with pytest.raises(ValueError, match="residual_dimension"):
        LSTMPooling(embedding_dimension=8, hidden_size=4, residual_dimension=-1)


def test_residual_adds_a_zero_projection_to_the_pooled_vector() -> None:
    torch.manual_seed(0)
    module = LSTMPooling(embedding_dimension=8, hidden_size=5, residual_dimension=6)
    tokens = torch.randn(2, 4, 8)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    pooled = torch.randn(2, 6)
    features = {"token_embeddings": tokens, "attention_mask": mask, "sentence_embedding": pooled}
    before = pooled.clone()
    got = module(features)["sentence_embedding"]
    # W starts at zero: the vector is the pooled one, to the bit, in a new tensor.
    assert torch.equal(got, pooled) and got is not pooled
    assert torch.equal(features["sentence_embedding"], before)
    assert module.get_embedding_dimension() == 6
    with torch.no_grad():
        module.projection.weight.fill_(0.1)
    moved = module(features)["sentence_embedding"]
    assert not torch.equal(moved, pooled)
    # Without a pooled vector before it, it says how to build the model.
    with pytest.raises(ModelError, match="Transformer -> Pooling -> LSTMPooling"):
        module({"token_embeddings": tokens, "attention_mask": mask})


def residual_model(tiny_model_dir: Path, hidden: int = 16):
    torch.manual_seed(0)
    base = SentenceTransformer(str(tiny_model_dir), device="cpu")
    width = base.get_embedding_dimension()
    pooling = LSTMPooling(base[0].get_embedding_dimension(), hidden, residual_dimension=width)
    with torch.no_grad():  # as after some training: the LSTM's share is no longer zero
        pooling.projection.weight.normal_(0, 0.1)
    return SentenceTransformer(modules=[base[0], base[1], pooling], device="cpu")


def test_residual_save_load_round_trip(tiny_model_dir: Path, tmp_path: Path) -> None:
    model = residual_model(tiny_model_dir)
    model.save(str(tmp_path / "m"))
    modules = (tmp_path / "m" / "modules.json").read_text()
    assert CLASS_REF in modules and "Pooling" in modules
    for loaded in (
        load_encoder(str(tmp_path / "m"), device="cpu"),
        SentenceTransformer(str(tmp_path / "m"), device="cpu"),
    ):
        assert loaded[2].get_config_dict()["residual_dimension"] == 32
        texts = [SHORT, LONG]
        torch.testing.assert_close(
            loaded.encode(texts, convert_to_tensor=True),
            model.encode(texts, convert_to_tensor=True),
            atol=0,
            rtol=0,
        )


def test_a_config_saved_before_residual_dimension_loads_as_the_papers(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    import json

    model = lstm_model(tiny_model_dir, hidden=16)
    model.save(str(tmp_path / "m"))
    config = tmp_path / "m" / "1_LSTMPooling" / "config.json"
    saved = json.loads(config.read_text())
    del saved["residual_dimension"]
    config.write_text(json.dumps(saved))
    loaded = load_encoder(str(tmp_path / "m"), device="cpu")
    assert loaded[1].residual_dimension == 0 and not hasattr(loaded[1], "projection")
    torch.testing.assert_close(
        loaded.encode([SHORT], convert_to_tensor=True),
        model.encode([SHORT], convert_to_tensor=True),
        atol=0,
        rtol=0,
    )


@pytest.mark.parametrize(
    "former",
    [
        "encoders.lstm_pooling.LSTMPooling",  # before paramine's folders moved under paramine.
        FORMER_CLASS_REF,  # before the pooling moved into encoders/modules/
    ],
)
def test_a_model_saved_under_a_former_class_name_still_loads(
    former: str, tiny_model_dir: Path, tmp_path: Path
) -> None:
    model = lstm_model(tiny_model_dir, hidden=16)
    folder = tmp_path / "old"
    model.save(str(folder))
    modules_json = folder / "modules.json"
    old = modules_json.read_text().replace(CLASS_REF, former)
    assert former in old and CLASS_REF not in old
    modules_json.write_text(old)
    assert trusted_class_ref(former) == CLASS_REF

    loaded = [load_encoder(str(folder), device="cpu")]
    if former == FORMER_CLASS_REF:  # that module still imports the class: plain loading works
        loaded.append(SentenceTransformer(str(folder), device="cpu"))
    texts = [SHORT, LONG]
    for encoder in loaded:
        assert type(encoder) is SentenceTransformer and isinstance(encoder[1], LSTMPooling)
        torch.testing.assert_close(
            encoder.encode(texts, convert_to_tensor=True),
            model.encode(texts, convert_to_tensor=True),
            atol=0,
            rtol=0,
        )
    assert modules_json.read_text() == old  # the user's folder is only read
    # Saved again, it records the class path of today, which plain loading finds.
    loaded[0].save(str(tmp_path / "new"))
    assert CLASS_REF in (tmp_path / "new" / "modules.json").read_text()
    assert isinstance(SentenceTransformer(str(tmp_path / "new"), device="cpu")[1], LSTMPooling)


def test_a_module_class_that_comes_with_the_folder_is_refused_never_run(
    tiny_model_copy: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    class_ref = with_code_module(tiny_model_copy, marker)
    # (sentence-transformers 5 alone would import it from the folder and run it.)
    with pytest.raises(ModelError) as raised:
        load_encoder(str(tiny_model_copy), device="cpu")
    assert str(raised.value) == (
        f"{tiny_model_copy}: its modules.json names the module class {class_ref!r}, which is "
        "neither sentence-transformers' nor paramine's: paramine does not run code that comes "
        "with a model; save the model with sentence-transformers' modules, or choose another model"
    )
    assert not marker.exists()


def test_only_sentence_transformers_and_paramine_classes_are_trusted() -> None:
    assert trusted_class_ref(CLASS_REF) == CLASS_REF
    assert trusted_class_ref("encoders.lstm_pooling.LSTMPooling") == CLASS_REF
    pooling = "sentence_transformers.sentence_transformer.modules.pooling.Pooling"
    assert trusted_class_ref(pooling) == pooling
    for other in ("own_code.OwnModule", "paramine.encoders.training.train.train", "os.system", ""):
        with pytest.raises(ValueError, match="names the module class"):
            trusted_class_ref(other)
