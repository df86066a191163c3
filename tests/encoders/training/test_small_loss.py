"""small_loss.py: MNRL over a batch's rows but its hardest share, after a ramp."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from paramine.encoders.training.config import TrainConfig
from paramine.encoders.training.modeling import make_loss
from paramine.encoders.training.small_loss import (
    FollowSteps,
    SmallLossMNRL,
    below_null,
    row_losses,
)
from paramine.schemas.errors import UsageError
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss


def batch(rows: int = 8, mismatched: int = 5) -> list[torch.Tensor]:
    """Anchors and positives that agree row by row, but one row whose positive is another's."""
    generator = torch.Generator().manual_seed(0)
    anchors = torch.randn(rows, 16, generator=generator)
    positives = anchors + 0.1 * torch.randn(rows, 16, generator=generator)
    positives[mismatched] = torch.randn(16, generator=generator)
    return [anchors, positives]


@pytest.fixture(scope="module")
def model(tiny_model_dir: Path) -> SentenceTransformer:
    return SentenceTransformer(str(tiny_model_dir), device="cpu")


def test_the_mismatched_row_has_the_highest_loss() -> None:
    losses = row_losses(batch(), scale=20.0)
    assert int(losses.argmax()) == 5
    assert losses.shape == (8,)


def test_the_share_grows_over_the_ramp_then_drops_the_hardest_rows(
    model: SentenceTransformer,
) -> None:
    embeddings, plain = batch(), MultipleNegativesRankingLoss(model)
    loss = SmallLossMNRL(model, drop=0.25, ramp_steps=10)
    model.train()
    full = plain.compute_loss_from_embeddings(embeddings, None)
    # Step 0: every row teaches; the loss is MNRL's.
    assert torch.allclose(loss.compute_loss_from_embeddings(embeddings, None), full)
    # Half-way (share 0.125, one row of 8): the mismatched row is left out.
    loss.step = 5
    kept = [e[[0, 1, 2, 3, 4, 6, 7]] for e in embeddings]
    expected = plain.compute_loss_from_embeddings(kept, None)
    assert torch.allclose(loss.compute_loss_from_embeddings(embeddings, None), expected)
    assert expected < full
    # After the ramp: two rows of 8, the mismatched and the next hardest.
    loss.step = 40
    assert loss.share_now() == 0.25
    hardest_two = set(row_losses(embeddings, loss.scale).argsort()[-2:].tolist())
    assert 5 in hardest_two
    kept = [e[[i for i in range(8) if i not in hardest_two]] for e in embeddings]
    assert torch.allclose(
        loss.compute_loss_from_embeddings(embeddings, None),
        plain.compute_loss_from_embeddings(kept, None),
    )
    # Evaluation (the trainer puts the model in eval mode) scores every row.
    model.eval()
    assert torch.allclose(loss.compute_loss_from_embeddings(embeddings, None), full)


def test_the_trainer_tells_the_loss_its_step(model: SentenceTransformer) -> None:
    loss = SmallLossMNRL(model, drop=0.1, ramp_steps=4)
    FollowSteps(loss).on_step_begin(None, SimpleNamespace(global_step=7), None)
    assert loss.step == 7 and loss.share_now() == pytest.approx(0.1)


def test_the_adapt_recipe_drops_the_hardest_tenth_and_the_others_none(
    model: SentenceTransformer,
) -> None:
    def drop(**given: object) -> float:
        return TrainConfig(dataset="d", base="b", output="o", **given).drop_hardest  # type: ignore[arg-type]

    assert drop(recipe="adapt") == 0.1
    assert drop(recipe="paper") == drop(recipe="small") == 0.0
    assert drop(recipe="adapt", drop_hardest=0) == 0.0
    with pytest.raises(UsageError, match=r"--drop-hardest 0.5 is not a share in \[0, 0.5\)"):
        drop(drop_hardest=0.5)
    assert isinstance(make_loss(model, "mnrl", 8, "both", 0.1, 20), SmallLossMNRL)
    assert type(make_loss(model, "mnrl", 8, "both", 0.0, 20)) is MultipleNegativesRankingLoss
    with pytest.raises(UsageError, match="--drop-hardest needs --loss mnrl"):
        make_loss(model, "cached", 8, "both", 0.1, 20)


def test_the_rows_below_the_null_are_the_mismatched_ones() -> None:
    generator = torch.Generator().manual_seed(1)
    anchors = torch.nn.functional.normalize(torch.randn(60, 16, generator=generator), dim=-1)
    positives = torch.nn.functional.normalize(
        anchors + 0.2 * torch.randn(60, 16, generator=generator), dim=-1
    )
    planted = [3, 17, 29, 44]
    positives[planted] = torch.nn.functional.normalize(
        torch.randn(4, 16, generator=generator), dim=-1
    )
    assert set(below_null(anchors, positives, 0.2).tolist()) == set(planted)
    # A share of 1 of the null is its lowest score: no row is below it.
    assert below_null(anchors, positives, 1.0).size == 0


def test_the_recheck_sets_aside_rows_for_every_later_step(model: SentenceTransformer) -> None:
    words = [
        "river",
        "stone",
        "cloud",
        "bread",
        "window",
        "garden",
        "letter",
        "candle",
        "mountain",
        "violin",
    ]
    anchors = [f"the {a} and the {b}" for a in words for b in words[:4]]
    positives = list(anchors)
    planted = [5, 12, 33]
    for row in planted:
        positives[row] = "zebra quantum saxophone " * 3
    loss = SmallLossMNRL(model, drop=0.0, ramp_steps=10, recheck=0.05)
    model.train()
    follow = FollowSteps(loss, anchors, positives)
    follow.on_step_begin(None, SimpleNamespace(global_step=9, max_steps=30), None)
    assert loss.set_aside is None  # the first epoch is not over
    follow.on_step_begin(None, SimpleNamespace(global_step=10, max_steps=30), None)
    assert loss.set_aside is not None and set(planted) <= loss.set_aside
    assert len(loss.set_aside) <= 6
    assert model.training  # encoding the rows left the model training
    set_aside = loss.set_aside
    follow.on_step_begin(None, SimpleNamespace(global_step=11, max_steps=30), None)
    assert loss.set_aside is set_aside  # judged once
    # A batch's set-aside rows leave its loss; a batch of them only teaches nothing.
    embeddings, plain = batch(), MultipleNegativesRankingLoss(model)
    labels = torch.tensor([0, 1, 2, 3, 4, 5, 6, 12])
    kept = [e[[0, 1, 2, 3, 4, 6]] for e in embeddings]
    assert torch.allclose(
        loss.compute_loss_from_embeddings(embeddings, labels),
        plain.compute_loss_from_embeddings(kept, None),
    )
    only_set_aside = loss.compute_loss_from_embeddings(
        [e[:2] for e in embeddings], torch.tensor([5, 12])
    )
    assert float(only_set_aside) == 0.0
    # A one-epoch run is never judged again; nor is a run that asks for a share of 1.
    assert not SmallLossMNRL(model, 0.1, 10, 0.1).rechecks_at(10, 10)
    assert not SmallLossMNRL(model, 0.1, 10, 1.0).rechecks_at(12, 30)


def test_the_adapt_recipe_judges_the_rows_again_and_the_others_do_not() -> None:
    def recheck(**given: object) -> float:
        config = TrainConfig(dataset="d", base="b", output="o", **given)  # type: ignore[arg-type]
        return config.recheck_false_accept

    assert recheck(recipe="adapt") == 0.1
    assert recheck(recipe="paper") == recheck(recipe="small") == 1.0
    with pytest.raises(UsageError, match="--recheck-false-accept"):
        recheck(recheck_false_accept=1.5)
