"""Recipes: named sets of training settings; ``--recipe`` picks one, explicit flags override it.

``paper`` is Dadas (2022): a Transformer whose pooling is replaced by an LSTM
that starts from random weights, lr 2e-6, batch 64, 3 epochs, the
multiple-negatives ranking loss. It was made for 7 million pairs and a base
that is a language model. With a few thousand mined pairs and a base that is
already a sentence encoder (the case of a small language) it made e5-small
worse: 80.17 against the base's 80.54 on the eight Polish tasks after 39
steps (docs/training.md), because the random LSTM head, at lr 2e-6, hardly
moves in a few hundred steps, and until it does it throws away what the base
knew.

``small`` starts from the base's own embeddings instead: ``lstm-residual``
pooling is the base's pooling plus a zero-initialized projection of an LSTM
state (:mod:`paramine.encoders.modules.lstm_pooling`), so step 0 gives exactly the
base's similarities; the Transformer moves at lr 2e-5 (a new user's 2e-5 with
mean pooling was the first trained row above its base: 80.72 against 80.56,
issue 45), the new head at its own ``--head-lr``; and the cached loss, so a
batch larger than memory allows is one flag away. Measured on 998 Polish
pairs mined from shared/ (docs/training.md, "Measured run"): with
``--select-on dev`` every seed kept step 0, the base, so the recipe did no
harm there and no good; no recipe tried has beaten the base on that little
data. ``adapt`` is for a language the base hardly knows (issue 53): the small
recipe's pooling and rates, batch 32, one epoch, plain MNRL, and the aligned
(pivot, candidate) pairs every written pair carries beside the paraphrases
(``--train-on both``), so the encoder learns the language's meanings across
languages as well as within it (docs/training.md, "A language the base
hardly knows"). The table below is the one place to change the values.

This module imports neither torch nor sentence-transformers.
"""

from __future__ import annotations

from typing import Any, Literal

#: The settings a recipe gives; every other flag has one default for all recipes.
RECIPE_KEYS = (
    "pooling",
    "lr",
    "head_lr",
    "batch_size",
    "epochs",
    "min_steps",
    "drop_hardest",
    "recheck_false_accept",
    "loss",
    "loss_directions",
    "train_on",
    "aligned_rows",
    "embeddings",
)
#: ``--train-on``: what a training row is. paraphrases: (sentence_a,
#: sentence_b); bitext: (pivot_sentence, sentence_a) and (pivot_sentence,
#: sentence_b), the aligned pairs every written pair carries; both.
TRAIN_ON = ("paraphrases", "bitext", "both")
#: ``--aligned-rows``: where the aligned rows of ``bitext`` and ``both`` come
#: from. written: the (pivot, candidate) pairs the written pairs carry; all:
#: every aligned line the pass's Prefilter kept (its ``scored/`` table, from
#: ``paramine mine --write-scored``), but those that score as mismatched pairs do.
ALIGNED_ROWS = ("written", "all")
#: ``--recheck-by``: who judges the rows again, the model in training or two
#: models trained apart, each on half of the pivots (``judged_apart.py``).
RECHECK_BY = ("model", "other-half")
#: ``--embeddings``: the Transformer's word embeddings train, or stay the base's.
EMBEDDINGS = ("train", "freeze")
#: ``--loss-directions``: which in-batch contests the loss scores, as
#: sentence-transformers' ``directions`` of its MNRL. forward: each anchor
#: against the batch's positives (MNRL as Dadas 2022 uses it); both: and each
#: positive against the batch's anchors; all: and each anchor against the
#: other anchors, each positive against the other positives (the "improved
#: contrastive loss" of GTE, Li et al. 2023).
Contest = Literal["query_to_doc", "doc_to_query", "query_to_query", "doc_to_doc"]
LOSS_DIRECTIONS: dict[str, tuple[Contest, ...]] = {
    "forward": ("query_to_doc",),
    "both": ("query_to_doc", "doc_to_query"),
    "all": ("query_to_doc", "doc_to_query", "query_to_query", "doc_to_doc"),
}

#: ``head_lr`` of a recipe that trains the head at the Transformer's rate.
SAME_AS_LR = None

RECIPES: dict[str, dict[str, Any]] = {
    "paper": {
        "pooling": "lstm",
        "lr": 2e-6,
        "head_lr": SAME_AS_LR,
        "batch_size": 64,
        "epochs": 3.0,
        "min_steps": 0,
        "drop_hardest": 0.0,
        "recheck_false_accept": 1.0,
        "loss": "mnrl",
        "loss_directions": "forward",
        "train_on": "paraphrases",
        "aligned_rows": "written",
        "embeddings": "train",
    },
    "small": {
        "pooling": "lstm-residual",
        "lr": 2e-5,
        # The projection grows from zero by about the rate per step and
        # element (AdamW), summed over 1024 LSTM units: at 1e-3 a few dozen
        # steps would outweigh e5-small's pooled vectors (norm 4.7, measured
        # on 40 LASER pol sentences); 1e-4 lets it reach a share of them.
        "head_lr": 1e-4,
        "batch_size": 64,
        "epochs": 3.0,
        "min_steps": 0,
        "drop_hardest": 0.0,
        "recheck_false_accept": 1.0,
        "loss": "cached",
        "loss_directions": "forward",
        "train_on": "paraphrases",
        "aligned_rows": "written",
        "embeddings": "train",
    },
    # A language the base hardly knows (issues 53, 74): the base's own pooling with
    # the zero-initialized head, the Transformer at 5e-5, and the aligned
    # pairs beside the paraphrases, so the encoder learns what the language's
    # sentences mean across languages as well as within it. A sentence-
    # transformers fit of this kind on gold Kabyle pairs (1 epoch of 32) moved
    # held-out bitext retrieval from 25.7 to 50.9. Both ways: an adapt batch's
    # positives are all in the language, so forward alone never trains finding
    # the pivot from the language's line; the contests among anchors and among
    # positives that ``all`` adds cost paraphrase retrieval and the Polish
    # tasks more than they give (docs/training.md).
    "adapt": {
        "pooling": "lstm-residual",
        # Every aligned line of a pass is 10x the rows of its written pairs: at
        # 5e-5 the one epoch moved Kabyle's held-out bitext retrieval to 49.2
        # where 2e-5 reached 44.9, and the next pass's recall to 0.928 (0.907).
        "lr": 5e-5,
        "head_lr": 1e-4,
        "batch_size": 32,
        "epochs": 1.0,
        # A small language's pass has a few thousand lines: one epoch of them
        # was 90-120 steps, and Klingon's held-out bitext retrieval reached
        # 15.6 after two rounds; 3 epochs (270 steps) reached 29.1 in one
        # round and the next pass's recall 0.85 (0.58). Kabyle's 677 steps
        # an epoch are above the floor: one epoch, as measured there.
        "min_steps": 270,
        # Several epochs of a small language's lines teach its mismatched
        # ones too: Khasi's next pass wrote 30% of the planted lines at 270
        # steps (precision 0.957). The hardest 10% of each batch (about the
        # share of mismatched rows the null's cut keeps) leave the gradient
        # once the first epoch has taught the rest (small_loss.py).
        "drop_hardest": 0.1,
        # The batch's hardest share still lets a batch with more mismatched
        # rows than its share teach them, epoch after epoch: after the first,
        # every row is judged again by the model it made, against the null of
        # its rows paired with other rows (small_loss.py).
        "recheck_false_accept": 0.1,
        "loss": "mnrl",
        "loss_directions": "both",
        "train_on": "both",
        "aligned_rows": "all",
        "embeddings": "freeze",
    },
}


def parse_drop_share(value: Any) -> float:
    """``--drop-hardest``: a share in [0, 0.5); leaving out half a batch or more is not training."""
    number = float(value)
    if not 0.0 <= number < 0.5:
        raise ValueError(f"{number} is not a share in [0, 0.5)")
    return number


def resolve_recipe(name: str, given: dict[str, Any]) -> dict[str, Any]:
    """The recipe's settings with the explicitly given ones (not None) in their place.

    A recipe whose head learns at the Transformer's rate gives the resolved
    ``lr`` as ``head_lr``, so ``--recipe paper --lr 1e-5`` trains both at 1e-5.

    Raises:
        ValueError: ``name`` is not a recipe.
    """
    if name not in RECIPES:
        raise ValueError(f"{name!r}; allowed: {', '.join(RECIPES)}")
    values = {
        key: given[key] if given.get(key) is not None else RECIPES[name][key] for key in RECIPE_KEYS
    }
    if values["head_lr"] is SAME_AS_LR:
        values["head_lr"] = values["lr"]
    return values


def overrides(name: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The settings that differ from the recipe's own: what the summary records as changed."""
    recipe = dict(RECIPES[name])
    if recipe["head_lr"] is SAME_AS_LR:
        recipe["head_lr"] = settings.get("lr")  # following --lr is the recipe's own rule
    return {
        key: settings[key]
        for key in RECIPE_KEYS
        if key in settings and settings[key] != recipe[key]
    }
