"""Evaluation sentences kept out of a mined dataset (``--exclude-sentences``, ``--exclude-suite``).

A dataset mined to train an encoder should not hold the sentences the
encoder will be judged on: on Tatoeba eng-pol, 156 of the 1,000 Polish
sentences of the LASER pol-eng test set occur word for word in the input
(docs/training.md). ``paramine train`` drops such pairs itself
(encoders/evaluation/overlap.py); this is the same rule at mining time, for datasets
that other trainers will use. The sentences are read, and normalized as the
trainer does, by :mod:`paramine.encoders.evaluation.exclusion` before the
pipeline is built: a missing file stops the run before anything is written.
PostFilter drops a pair one of whose sentences is among them as
``eval_overlap``.
"""

from __future__ import annotations

from paramine.encoders.evaluation.exclusion import excluded_keys
from paramine.pipelines.settings.mining import MiningSettings


def exclusion_keys(config: MiningSettings) -> frozenset[str]:
    """The normalized sentences a run keeps out of its pairs; empty when none are given.

    Raises:
        InputError: a file cannot be read, or a suite's file is missing.
        UsageError: a suite is unknown or its data folder is not given.
    """
    return excluded_keys(config.exclude_sentences, config.exclude_suite, config.suite_data)
