"""No evaluation sentence in training: pairs that share a sentence with the evaluation data leave.

An encoder trained on a pair whose sentence is also an evaluation sentence
has seen the answer: on the documented run, 156 of the 1,000 Polish
sentences of the LASER Tatoeba pol-eng set also occurred, word for word, in
the Tatoeba eng-pol input mined from. ``paramine train`` gathers every
sentence it evaluates on (its held-out pairs, ``--eval-bitext`` and
``--eval-sts`` files, the ``--suite``'s files, all splits) and drops each
training pair one of whose sentences, after normalization (case, spacing
and punctuation ignored: ``comparison_key``), is one of them. The count goes
into the model card and ``paramine_training.json``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from paramine.schemas.text_keys import comparison_key

if TYPE_CHECKING:
    import pandas as pd
    from paramine.encoders.evaluation.eval_files import Bitext, StsData
    from paramine.encoders.evaluation.suite import Split

#: The drop reason in the training counts.
EVAL_OVERLAP = "eval_overlap"


def eval_keys(
    held_out: pd.DataFrame | None = None,
    bitexts: Iterable[Bitext] = (),
    sts: Iterable[StsData] = (),
    suite_splits: Iterable[Split] = (),
) -> set[str]:
    """The normalized form of every sentence an evaluation will see."""
    texts: list[str] = []
    if held_out is not None and len(held_out):
        texts += held_out["sentence_a"].tolist() + held_out["sentence_b"].tolist()
    for bitext in bitexts:
        texts += bitext.source + bitext.target
    for data in sts:
        texts += data.sentence1 + data.sentence2
    for split in suite_splits:
        texts += split.texts + split.second
    keys = {comparison_key(text) for text in texts}
    keys.discard("")
    return keys


def overlap_mask(
    df: pd.DataFrame, keys: set[str], columns: tuple[str, str] = ("sentence_a", "sentence_b")
) -> pd.Series:
    """True for the rows one of whose sentences (``columns``: the pair's two) is in ``keys``."""
    import pandas as pd

    def seen(column: str) -> list[bool]:
        return [comparison_key(text) in keys for text in df[column].tolist()]

    if not keys or not len(df):
        return pd.Series(False, index=df.index)
    a, b = (seen(column) for column in columns)
    return pd.Series([x or y for x, y in zip(a, b, strict=True)], index=df.index)
