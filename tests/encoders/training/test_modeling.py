"""The model ``paramine train`` builds: poolings, the residual head's start, the head's rate."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from paramine.encoders.modules.lstm_pooling import LSTMPooling, load_encoder
from paramine.encoders.training import modeling
from paramine.encoders.training.modeling import (
    HEAD_PARAMETERS,
    build_model,
    choose_precision,
    learning_rate_mapping,
    make_loss,
)
from paramine.schemas.errors import UsageError
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Normalize, Pooling

TEXTS = [
    "ala ma kota",
    "kota ma ala",
    "the quick brown fox jumps over the lazy dog",
    "to jest zdanie po polsku",
    "how are you today my friend",
    "dobry wieczór jak się masz",
]


def cosines(model: SentenceTransformer) -> torch.Tensor:
    vectors = model.encode(TEXTS, convert_to_tensor=True)  # (texts, dim)
    vectors = torch.nn.functional.normalize(vectors, dim=1)
    return vectors @ vectors.T  # (texts, texts)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_the_residual_head_gives_the_bases_similarities_at_step_0(
    tiny_model_dir: Path, bidirectional: bool
) -> None:
    base = load_encoder(str(tiny_model_dir), device="cpu")
    expected = cosines(base)
    model = build_model(base, "lstm-residual", 24, bidirectional, False, 128, "cpu")
    assert [type(m) for m in model][1:] == [Pooling, LSTMPooling]
    assert model.get_embedding_dimension() == base.get_embedding_dimension()
    torch.testing.assert_close(cosines(model), expected, atol=1e-5, rtol=0)
    # The paper's head, from random weights, does not: what the recipe is for.
    torch.manual_seed(0)
    paper = build_model(
        load_encoder(str(tiny_model_dir), device="cpu"), "lstm", 24, False, False, 128
    )
    assert (cosines(paper) - expected).abs().max().item() > 1e-2


def test_the_residual_head_keeps_a_bases_normalize(tiny_model_dir: Path, tmp_path: Path) -> None:
    base = load_encoder(str(tiny_model_dir), device="cpu")
    normalized = SentenceTransformer(modules=[base[0], base[1], Normalize()], device="cpu")
    model = build_model(normalized, "lstm-residual", 16, False, False, 128, "cpu")
    assert [type(m) for m in model][1:] == [Pooling, LSTMPooling, Normalize]
    torch.testing.assert_close(
        model.encode(TEXTS, convert_to_tensor=True),
        normalized.encode(TEXTS, convert_to_tensor=True),
        atol=1e-6,
        rtol=0,
    )


def test_the_head_learns_at_its_own_rate(tiny_model_dir: Path) -> None:
    base = load_encoder(str(tiny_model_dir), device="cpu")
    model = build_model(base, "lstm-residual", 16, False, False, 128, "cpu")
    assert learning_rate_mapping(model, 2e-5, 2e-5) == {}
    assert learning_rate_mapping(model, 2e-5, 1e-3) == {HEAD_PARAMETERS: 1e-3}
    for loss_name in ("mnrl", "cached"):
        loss = make_loss(model, loss_name, 4)
        names = [name for name, _ in loss.named_parameters()]
        head = [name for name in names if re.search(HEAD_PARAMETERS, name)]
        # Exactly the LSTM's and the projection's parameters, none of the Transformer's.
        assert head and all(".lstm." in n or ".projection." in n for n in head), head
        assert not [n for n in names if n.startswith("model.0.") and n in head]
    mean = build_model(load_encoder(str(tiny_model_dir)), "mean", 16, False, False, 128, "cpu")
    assert learning_rate_mapping(mean, 2e-5, 1e-3) == {}  # no head parameters to give it to


@pytest.mark.parametrize("loss_name", ["mnrl", "cached"])
def test_the_trainers_optimizer_gives_the_head_its_rate(
    tiny_model_dir: Path, tmp_path: Path, loss_name: str
) -> None:
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )

    model = build_model(load_encoder(str(tiny_model_dir)), "lstm-residual", 16, False, False, 128)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path),
        learning_rate=2e-5,
        learning_rate_mapping=learning_rate_mapping(model, 2e-5, 1e-3),
        report_to="none",
        use_cpu=True,
    )
    data = Dataset.from_dict({"anchor": ["ala ma", "kota"], "positive": ["ma ala", "kot"]})
    trainer = SentenceTransformerTrainer(
        model=model, args=args, train_dataset=data, loss=make_loss(model, loss_name, 4)
    )
    names = {id(p): name for name, p in model.named_parameters()}
    rates: dict[str, float] = {}
    for group in trainer.create_optimizer().param_groups:
        rates.update((names[id(p)], group["lr"]) for p in group["params"])
    assert set(rates) == set(names.values())  # every parameter trains, once
    for name, rate in rates.items():
        assert rate == (2e-5 if name.startswith("0.") else 1e-3), name


@pytest.mark.parametrize("loss_name", ["mnrl", "cached"])
def test_loss_directions_score_the_contests_they_name(tiny_model_dir: Path, loss_name: str) -> None:
    """forward is InfoNCE of anchors over the positives; both and all add the other contests."""
    model = build_model(load_encoder(str(tiny_model_dir)), "lstm-residual", 16, False, False, 128)
    model.eval()
    anchors, positives = TEXTS[:3], TEXTS[3:]
    features = [model.tokenize(anchors), model.tokenize(positives)]
    with torch.no_grad():
        a, p = (model.encode(texts, convert_to_tensor=True) for texts in (anchors, positives))
        values = {
            directions: make_loss(model, loss_name, 4, directions)(features, None).item()
            for directions in ("forward", "both", "all")
        }
    scale = 20.0  # MNRL's, 1 / temperature
    cos = torch.nn.functional.normalize(a, dim=1) @ torch.nn.functional.normalize(p, dim=1).T
    target = torch.arange(len(anchors))

    def info_nce(logits: torch.Tensor) -> float:
        return torch.nn.functional.cross_entropy(scale * logits, target).item()

    assert values["forward"] == pytest.approx(info_nce(cos), abs=1e-4)
    assert values["forward"] == pytest.approx(make_loss(model, loss_name, 4)(features, None).item())
    # Each anchor's softmax also holds what the added directions contest it
    # against (one partition per anchor), so the loss can only grow.
    assert values["forward"] < values["both"] < values["all"]


def test_auto_precision_on_a_cpu_is_bf16_where_the_cpu_computes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(modeling, "native_bf16_cpu", lambda: True)
    assert choose_precision("auto") == "bf16"
    assert choose_precision("fp32") == "fp32"
    assert choose_precision("bf16") == "bf16"
    monkeypatch.setattr(modeling, "native_bf16_cpu", lambda: False)
    assert choose_precision("auto") == "fp32"
    with pytest.raises(UsageError, match="emulated"):
        choose_precision("bf16")
    with pytest.raises(UsageError, match="fp16 needs a CUDA GPU"):
        choose_precision("fp16")
    with pytest.raises(UsageError, match="must be one of"):
        choose_precision("int8")


def test_device_cpu_beside_a_gpu_chooses_for_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    monkeypatch.setattr(modeling, "native_bf16_cpu", lambda: False)
    assert choose_precision("auto") == "fp16"
    assert choose_precision("auto", "cuda:0") == "fp16"
    assert choose_precision("auto", "cpu") == "fp32"
    with pytest.raises(UsageError, match="fp16 needs a CUDA GPU"):
        choose_precision("fp16", "cpu")


def test_this_cpus_bf16_answer_is_torchs() -> None:
    answer = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
    assert modeling.native_bf16_cpu() is answer
