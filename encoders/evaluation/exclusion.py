"""Evaluation sentences kept out of training: ``--exclude-sentences`` and ``--exclude-suite``.

``paramine mine`` keeps them out of its pairs (PostFilter's ``eval_overlap``)
and ``paramine train`` out of its rows, the aligned lines of ``--aligned-rows
all`` included, so a loop that trains on every line of its input
(``paramine adapt``) never trains on them either. The sentences are read and
normalized as the overlap filter compares them (``comparison_key``: case,
spacing and punctuation ignored), before anything is written or trained: a
missing file stops the run first.

A file that is not UTF-8 is refused, whatever ``--invalid-utf8`` says: read
with replacement characters, its sentences would match nothing, and the run
would keep the very sentences it was asked to keep out.
"""

from __future__ import annotations

from collections.abc import Iterable

import fsspec
from paramine.encoders.evaluation.overlap import eval_keys
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


def excluded_keys(
    sentence_files: Iterable[str], suite: str | None, suite_data: str | None
) -> frozenset[str]:
    """The normalized sentences to keep out; empty when no file and no suite is given.

    Args:
        sentence_files: ``--exclude-sentences``: files of sentences, one a line.
        suite: ``--exclude-suite``: a suite name or file; every split of its tasks.
        suite_data: ``--suite-data``: the folder the suite's files are under.

    Raises:
        InputError: a file cannot be read, or a suite's file is missing.
        UsageError: a suite is unknown or its data folder is not given.
    """
    keys: set[str] = set()
    for url in sentence_files:
        keys |= _file_keys(url)
    if suite:
        from paramine.encoders.evaluation.suite import (
            check_files,
            load_suite,
            read_task,
            resolve_data_root,
        )

        loaded = load_suite(suite, "--exclude-suite")
        root = resolve_data_root(loaded, suite_data)
        check_files(loaded, root)
        splits = [split for task in loaded.tasks for split in read_task(task, root).values()]
        keys |= eval_keys(suite_splits=splits)
    return frozenset(keys)
