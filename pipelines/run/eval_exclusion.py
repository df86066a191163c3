"""Evaluation sentences kept out of a mined dataset (``--exclude-sentences``, ``--exclude-suite``).

A dataset mined to train an encoder should not hold the sentences the
encoder will be judged on: on Tatoeba eng-pol, 156 of the 1,000 Polish
sentences of the LASER pol-eng test set occur word for word in the input
(docs/training.md). ``paramine train`` drops such pairs itself
(encoders/evaluation/overlap.py); this is the same rule at mining time, for datasets
that other trainers will use. The sentences are read, and normalized as the
trainer does (``comparison_key``), before the pipeline is built: a missing
file stops the run before anything is written. PostFilter drops a pair one
of whose sentences is among them as ``eval_overlap``.

A file that is not UTF-8 is refused, whatever ``--invalid-utf8`` says: read
with replacement characters, its sentences would match no pair, and the run
would keep the very sentences it was asked to keep out.
"""

from __future__ import annotations

import fsspec
from paramine.encoders.evaluation.overlap import eval_keys
from paramine.pipelines.settings.mining import MiningSettings
from paramine.schemas.errors import InputError
from paramine.schemas.text_keys import comparison_key


def _file_keys(url: str) -> set[str]:
    try:
        with fsspec.open(url, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise InputError(f"--exclude-sentences {url}: cannot be read ({error})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise InputError(
            f"--exclude-sentences {url}: line {line} is not UTF-8 text (byte "
            f"0x{raw[error.start]:02x}); its sentences would match nothing: convert the file "
            "to UTF-8 (e.g. iconv -f cp1250 -t utf-8)"
        ) from None
    keys = {comparison_key(line) for line in text.splitlines()}
    keys.discard("")
    return keys


def exclusion_keys(config: MiningSettings) -> frozenset[str]:
    """The normalized sentences a run keeps out of its pairs; empty when none are given.

    Raises:
        InputError: a file cannot be read, or a suite's file is missing.
        UsageError: a suite is unknown or its data folder is not given.
    """
    keys: set[str] = set()
    for url in config.exclude_sentences:
        keys |= _file_keys(url)
    if config.exclude_suite:
        from paramine.encoders.evaluation.suite import (
            check_files,
            load_suite,
            read_task,
            resolve_data_root,
        )

        suite = load_suite(config.exclude_suite, "--exclude-suite")
        root = resolve_data_root(suite, config.suite_data)
        check_files(suite, root)
        splits = [split for task in suite.tasks for split in read_task(task, root).values()]
        keys |= eval_keys(suite_splits=splits)
    return frozenset(keys)
