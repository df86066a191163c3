"""What ``paramine train`` trains: the model built from the base, its loss, its learning rates.

Poolings (``--pooling``):

- ``lstm``: Transformer -> LSTMPooling, the paper's; the LSTM replaces the
  base's pooling and starts from random weights.
- ``mean``: Transformer -> mean pooling, the paper's baseline.
- ``lstm-residual``: Transformer -> the base's own pooling modules ->
  LSTMPooling with ``residual_dimension``; the LSTM's share starts at zero,
  so step 0 gives exactly the base's embeddings.

The pooling head's parameters (everything after the Transformer) may learn
at their own rate (``--head-lr``), through sentence-transformers' own
``learning_rate_mapping`` (one more AdamW parameter group, under the same
warmup and decay as the Transformer's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paramine.encoders.training.config import POOLINGS, PRECISIONS
from paramine.schemas.errors import ModelError, UsageError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: The poolings whose untrained model gives the base's vectors (tested to 1e-5):
#: with them, a model selection kept at step 0 is the base, and its test
#: figures are the base's (``paramine train`` does not score it twice).
STARTS_AS_BASE = frozenset({"lstm-residual"})

#: The parameters of every module after the Transformer (module 0), as the
#: loss names them (``model.2.lstm.weight_ih_l0``): the pooling head's.
HEAD_PARAMETERS = r"^model\.(?!0\.)\d+\."


def build_model(
    base: SentenceTransformer,
    pooling: str,
    lstm_hidden: int,
    bidirectional: bool,
    normalize: bool,
    max_seq_length: int | None,
    device: str | None = None,
) -> SentenceTransformer:
    """Return the base's Transformer + the chosen pooling (+ Normalize).

    The Transformer is the base's own module, not a copy: training changes
    ``base`` too. ``lstm-residual`` keeps the base's pooling modules and
    its trailing Normalize, so the model starts as the base, vector for vector.
    """
    from paramine.encoders.modules.lstm_pooling import LSTMPooling
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    transformer = base[0]
    if not isinstance(transformer, Transformer):
        raise ModelError(
            f"the base model's first module is {type(transformer).__name__}, not a Transformer; "
            "give a Transformer-based sentence-transformers folder"
        )
    if max_seq_length:
        transformer.max_seq_length = max_seq_length
    width = transformer.get_embedding_dimension()
    heads: list[Any]
    if pooling == "lstm":
        heads = [LSTMPooling(width, hidden_size=lstm_hidden, bidirectional=bidirectional)]
    elif pooling == "mean":
        heads = [Pooling(width, pooling_mode="mean")]
    elif pooling == "lstm-residual":
        own = list(base)[1:]
        normalize = normalize or bool(own and isinstance(own[-1], Normalize))
        own = [module for module in own if not isinstance(module, Normalize)]
        if not own:
            raise ModelError(
                "--pooling lstm-residual adds to the base's own pooling, and the base has none "
                "after its Transformer; use --pooling lstm or mean"
            )
        pooled = base.get_embedding_dimension()
        if not pooled:
            raise ModelError("the base model does not say the width of its sentence vectors")
        lstm = LSTMPooling(width, lstm_hidden, bidirectional, residual_dimension=pooled)
        heads = [*own, lstm]
    else:
        raise UsageError(f"--pooling must be one of {', '.join(POOLINGS)}; got {pooling!r}")
    modules = [transformer, *heads] + ([Normalize()] if normalize else [])
    return SentenceTransformer(modules=modules, device=device)


def freeze_word_embeddings(model: SentenceTransformer) -> int:
    """Keep the Transformer's word embeddings as the base has them; return how many weights.

    They are most of a multilingual model (e5-small: 96 of its 118 million
    weights, a 250,002-piece vocabulary): AdamW updating them all, for the
    few pieces a batch holds, took half of each step's time on a 2-core CPU
    (2.76 s a step against 1.46 frozen, 32 Kabyle pairs). The layers above
    still learn what the pieces mean in the language.
    """
    from sentence_transformers.sentence_transformer.modules import Transformer

    transformer = model[0]
    if not isinstance(transformer, Transformer):
        return 0
    weights = transformer.auto_model.get_input_embeddings().weight
    weights.requires_grad_(False)
    return int(weights.numel())


def head_parameter_count(model: SentenceTransformer) -> int:
    """Trainable parameters after the Transformer: what ``--head-lr`` applies to."""
    return sum(p.numel() for module in list(model)[1:] for p in module.parameters())


def learning_rate_mapping(
    model: SentenceTransformer, lr: float, head_lr: float
) -> dict[str, float]:
    """sentence-transformers' ``learning_rate_mapping`` for a head rate apart from ``lr``.

    Empty when the two rates are equal or the head has no parameters (mean
    pooling): the trainer refuses a pattern that matches nothing.
    """
    if head_lr == lr or not head_parameter_count(model):
        return {}
    return {HEAD_PARAMETERS: head_lr}


def make_loss(
    model: SentenceTransformer,
    loss: str,
    mini_batch_size: int,
    directions: str = "forward",
    drop_hardest: float = 0.0,
    ramp_steps: int = 0,
    recheck: float = 1.0,
) -> Any:
    """MNRL, or its cached form (the same loss and gradient, in mini-batches of texts).

    The cached loss (GradCache) first embeds the batch without gradients in
    mini-batches, then recomputes each mini-batch with gradients: one more
    forward pass per step for memory that no longer grows with the batch.
    ``directions`` (``recipes.LOSS_DIRECTIONS``) are the in-batch contests
    either scores, in one softmax per anchor (sentence-transformers'
    ``partition_mode="joint"``). ``drop_hardest`` > 0: MNRL over the rows of
    each batch but that share of highest losses, reached after ``ramp_steps``;
    ``recheck`` < 1: every row judged again after them, against the null at
    that share (``small_loss.py``; the trainer needs its ``FollowSteps``
    callback for both).
    """
    from paramine.encoders.training.recipes import LOSS_DIRECTIONS
    from sentence_transformers.sentence_transformer.losses import (
        CachedMultipleNegativesRankingLoss,
        MultipleNegativesRankingLoss,
    )

    contests = LOSS_DIRECTIONS[directions]
    if drop_hardest or recheck < 1.0:
        from paramine.encoders.training.small_loss import SmallLossMNRL

        if loss == "cached":
            flag = "--drop-hardest" if drop_hardest else "--recheck-false-accept"
            raise UsageError(f"{flag} needs --loss mnrl (the cached loss sees no rows)")
        return SmallLossMNRL(model, drop_hardest, ramp_steps, recheck, directions=contests)
    if loss == "cached":
        return CachedMultipleNegativesRankingLoss(
            model, mini_batch_size=mini_batch_size, directions=contests
        )
    return MultipleNegativesRankingLoss(model, directions=contests)


def native_bf16_cpu() -> bool:
    """Whether this CPU computes bf16 itself (AVX512-BF16 or AMX), not by emulation.

    There, autocast to bf16 trains e5-small's adapt steps at 0.63x the CPU
    of fp32 (Kabyle's rows, side by side; docs/results.md, "Training in bf16
    on the CPU"); without them oneDNN emulates bf16, slower than fp32. torch answers it
    with ``torch.cpu``'s checks, private names: a torch without them says no.
    """
    import torch

    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)


def choose_precision(precision: str, device: str | None = None) -> str:
    """Resolve ``auto`` to what the device computes natively; check the rest.

    auto: bf16 on a GPU that has it, else fp16; bf16 on a CPU that computes it
    natively (:func:`native_bf16_cpu`), else fp32. ``device``: ``--device``
    (None: automatic, the GPU where there is one). The weights and the
    optimizer stay fp32 either way (autocast), so the saved model is fp32.
    """
    import torch

    if precision not in PRECISIONS:
        raise UsageError(f"--precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    if torch.cuda.is_available() and device != "cpu":
        if precision == "auto":
            return "bf16" if torch.cuda.is_bf16_supported() else "fp16"
        return precision
    if precision == "auto":
        return "bf16" if native_bf16_cpu() else "fp32"
    if precision == "fp16":
        raise UsageError("--precision fp16 needs a CUDA GPU; use bf16, fp32 or auto on CPU")
    if precision == "bf16" and not native_bf16_cpu():
        raise UsageError(
            "--precision bf16 on this CPU would be emulated (it has neither AVX512-BF16 nor "
            "AMX), slower than fp32; use fp32 or auto"
        )
    return precision


def default_prefix(base: SentenceTransformer, resolved_prefix: str) -> str:
    """Return the prefix the base model expects: the resolver's, else its default prompt."""
    if resolved_prefix:
        return resolved_prefix
    name = getattr(base, "default_prompt_name", None)
    return str(base.prompts.get(name, "")) if name else ""
