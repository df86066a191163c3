"""Small-loss training: each batch's rows that the model fits worst stay out of its gradient.

A dump's aligned lines include misaligned ones (bench_quality plants 20%);
the adapt recipe trains on every line the null's cut keeps, and about one
row in ten is still a mismatched pair. One epoch of them barely teaches, but
a small language trains several epochs (``--min-steps``) and the encoder
then learns the mismatched pairs by heart: the next pass writes them. A
network fits the pairs that agree with the rest before it memorizes the ones
that do not (Arpit et al. 2017), so rows whose loss stays highest once the
rest are learned are mostly the misaligned ones; leaving the hardest share
of each batch out of the gradient is the small-loss trick of co-teaching (Han
et al. 2018). The share grows from zero over the first epoch (``ramp_steps``),
while every row still teaches, to ``--drop-hardest`` after it.

A batch's hardest share is a guess made among 32 rows: a batch that holds
more mismatched rows than its share teaches the rest of them, and over seven
epochs (Tatar's 1,231 rows at the 270-step floor) each is taught several
times. So a run of more than one epoch also judges every row once more when
the first epoch is over (``--recheck-false-accept``), as the Prefilter's
calibration judges a pass: each row's score by the model as trained so far,
against a null of the same rows' anchors beside other rows' positives; a row
below the score that the recheck's share of that null reaches stays out of
every later step. The first epoch has taught the language without yet
learning the mismatched rows by heart, so the model that rejudges them
separates them better than the base that first let them through.

The loss is sentence-transformers' MNRL itself, computed on the batch's kept
rows; only the choice of rows is ours: each row's loss in the first contest
(its anchor against the batch's positives), with no gradient. The rows'
numbers reach the loss as the dataset's ``label`` column (:data:`ROW_COLUMN`),
which MNRL itself does not read.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
from transformers import TrainerCallback

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

log = logging.getLogger(__name__)

#: The dataset column that carries each row's number to the loss (the
#: trainer hands a column of this name to the loss as its labels).
ROW_COLUMN = "label"
#: Shuffles of the rows' positives that make the recheck's null.
NULL_SHUFFLES = 4


class SmallLossMNRL(MultipleNegativesRankingLoss):
    """MNRL over the rows of a batch but its ``drop`` share of highest losses.

    Attributes:
        drop: the share of a batch's rows left out once the ramp is over.
        ramp_steps: the steps over which the share grows from 0 to ``drop``.
        recheck: the share of the null that a row must reach when the rows
            are judged again after the first epoch; 1: not judged again.
        step: the trainer's step, set before each one (``FollowSteps``).
        set_aside: the numbers of the rows that the recheck left out; None
            until it has run.
    """

    def __init__(
        self, model: Any, drop: float, ramp_steps: int, recheck: float = 1.0, **kwargs: Any
    ) -> None:
        super().__init__(model, **kwargs)
        self.drop, self.ramp_steps, self.step = drop, max(ramp_steps, 1), 0
        self.recheck = recheck
        self.set_aside: frozenset[int] | None = None

    def share_now(self) -> float:
        """The share of rows left out at this step."""
        return self.drop * min(1.0, self.step / self.ramp_steps)

    def compute_loss_from_embeddings(self, embeddings: list[torch.Tensor], labels: Any) -> Any:
        # The trainer switches the model, not the loss, between training and evaluation.
        if self.set_aside and labels is not None and self.model.training:
            kept_rows = [i for i, row in enumerate(labels.tolist()) if row not in self.set_aside]
            if not kept_rows:  # every row of the batch set aside: a step that teaches nothing
                return embeddings[0].sum() * 0.0
            embeddings = [e[kept_rows] for e in embeddings]
        rows = embeddings[0].size(0)
        left_out = int(self.share_now() * rows) if self.model.training else 0
        if left_out == 0:
            return super().compute_loss_from_embeddings(embeddings, labels)
        kept = row_losses(embeddings, self.scale).argsort()[: rows - left_out]
        return super().compute_loss_from_embeddings([e[kept] for e in embeddings], labels)

    def get_config_dict(self) -> dict[str, Any]:
        return {
            **super().get_config_dict(),
            "drop": self.drop,
            "ramp_steps": self.ramp_steps,
            "recheck": self.recheck,
        }

    def rechecks_at(self, step: int, max_steps: int) -> bool:
        """Whether the rows are judged again before ``step``: the first epoch over, more to come."""
        return self.recheck < 1.0 and self.set_aside is None and self.ramp_steps <= step < max_steps


def row_losses(embeddings: Iterable[torch.Tensor], scale: float) -> torch.Tensor:
    """Each row's MNRL loss of its anchor against the batch's positives (and negatives), no grad."""
    anchors, *candidates = (e.detach() for e in embeddings)
    anchors = torch.nn.functional.normalize(anchors, dim=-1)
    docs = torch.nn.functional.normalize(torch.cat(candidates), dim=-1)
    logits = anchors @ docs.T * scale
    rows = torch.arange(anchors.size(0), device=anchors.device)
    return torch.logsumexp(logits, dim=1) - logits[rows, rows]


def below_null(anchors: torch.Tensor, positives: torch.Tensor, share: float) -> np.ndarray:
    """The rows whose score is below what ``share`` of the null reaches (row numbers).

    ``anchors`` and ``positives``: the rows' unit vectors. The null: each
    anchor beside the positive of another row, over :data:`NULL_SHUFFLES`
    seeded shuffles (a row beside itself left out).
    """
    rows = anchors.size(0)
    scores = (anchors * positives).sum(dim=1)
    generator = torch.Generator().manual_seed(rows)
    null = []
    for _ in range(NULL_SHUFFLES):
        other = torch.randperm(rows, generator=generator).to(anchors.device)
        mismatched = other != torch.arange(rows, device=anchors.device)
        null.append((anchors[mismatched] * positives[other[mismatched]]).sum(dim=1))
    cut = torch.quantile(torch.cat(null).float(), 1.0 - share)
    return torch.nonzero(scores < cut).flatten().cpu().numpy()


def row_vectors(
    model: Any, anchors: Sequence[str], positives: Sequence[str]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The rows' anchors and positives as ``model`` encodes them (unit vectors); its mode kept."""
    was_training = model.training
    try:
        anchor_vectors, positive_vectors = (
            model.encode(
                list(texts),
                convert_to_tensor=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            for texts in (anchors, positives)
        )
    finally:
        model.train(was_training)
    return anchor_vectors, positive_vectors


def recheck_rows(loss: SmallLossMNRL, anchors: Sequence[str], positives: Sequence[str]) -> None:
    """Judge every row again with the model as trained so far; set aside those below the null."""
    anchor_vectors, positive_vectors = row_vectors(loss.model, anchors, positives)
    below = below_null(anchor_vectors, positive_vectors, loss.recheck)
    loss.set_aside = frozenset(int(row) for row in below)
    log.info(
        "rows judged again after the first epoch: %d of %d below the null's %.2f share, "
        "left out of the rest of training",
        len(below),
        len(anchors),
        loss.recheck,
    )


class FollowSteps(TrainerCallback):
    """Tell the loss the trainer's step before each one (a resumed run ramps from where it was).

    With the rows' texts (``anchors``, ``positives``, in the dataset's
    order), it also judges them again once the first epoch is over
    (``SmallLossMNRL.recheck``); a run resumed after that point judges them
    with the model it resumes.
    """

    def __init__(
        self, loss: SmallLossMNRL, anchors: Sequence[str] = (), positives: Sequence[str] = ()
    ) -> None:
        self.loss, self.anchors, self.positives = loss, anchors, positives

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.loss.step = state.global_step
        if self.anchors and self.loss.rechecks_at(state.global_step, state.max_steps):
            recheck_rows(self.loss, self.anchors, self.positives)
