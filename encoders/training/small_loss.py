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

The loss is sentence-transformers' MNRL itself, computed on the batch's kept
rows; only the choice of rows is ours: each row's loss in the first contest
(its anchor against the batch's positives), with no gradient.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
from transformers import TrainerCallback

if TYPE_CHECKING:
    from collections.abc import Iterable


class SmallLossMNRL(MultipleNegativesRankingLoss):
    """MNRL over the rows of a batch but its ``drop`` share of highest losses.

    Attributes:
        drop: the share of a batch's rows left out once the ramp is over.
        ramp_steps: the steps over which the share grows from 0 to ``drop``.
        step: the trainer's step, set before each one (``FollowSteps``).
    """

    def __init__(self, model: Any, drop: float, ramp_steps: int, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.drop, self.ramp_steps, self.step = drop, max(ramp_steps, 1), 0

    def share_now(self) -> float:
        """The share of rows left out at this step."""
        return self.drop * min(1.0, self.step / self.ramp_steps)

    def compute_loss_from_embeddings(self, embeddings: list[torch.Tensor], labels: Any) -> Any:
        rows = embeddings[0].size(0)
        # The trainer switches the model, not the loss, between training and evaluation.
        left_out = int(self.share_now() * rows) if self.model.training else 0
        if left_out == 0:
            return super().compute_loss_from_embeddings(embeddings, labels)
        kept = row_losses(embeddings, self.scale).argsort()[: rows - left_out]
        return super().compute_loss_from_embeddings([e[kept] for e in embeddings], labels)

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "drop": self.drop, "ramp_steps": self.ramp_steps}


def row_losses(embeddings: Iterable[torch.Tensor], scale: float) -> torch.Tensor:
    """Each row's MNRL loss of its anchor against the batch's positives (and negatives), no grad."""
    anchors, *candidates = (e.detach() for e in embeddings)
    anchors = torch.nn.functional.normalize(anchors, dim=-1)
    docs = torch.nn.functional.normalize(torch.cat(candidates), dim=-1)
    logits = anchors @ docs.T * scale
    rows = torch.arange(anchors.size(0), device=anchors.device)
    return torch.logsumexp(logits, dim=1) - logits[rows, rows]


class FollowSteps(TrainerCallback):
    """Tell the loss the trainer's step before each one (a resumed run ramps from where it was)."""

    def __init__(self, loss: SmallLossMNRL) -> None:
        self.loss = loss

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.loss.step = state.global_step
