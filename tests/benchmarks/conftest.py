"""What the benchmarks' tests share: a tiny sample of a real bitext."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks.harness import write_tatoeba_sample


@pytest.fixture(scope="session")
def tatoeba_sample(shared_corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 lines of Tatoeba eng-pol, 200 of them of pivots with several translations.

    The pair's directory, ``.../tatoeba_test_v2021-08-07/eng-pol``, with the
    donors of ``--noise language`` where the benchmarks look for them.
    """
    return write_tatoeba_sample(tmp_path_factory.mktemp("tatoeba"), lines=300)

