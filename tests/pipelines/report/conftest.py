"""The report's fixture: a dataset mined, with its report, once per test module."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.report.helpers import mine_and_report


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path) -> Path:
    output, _ = mine_and_report(
        tmp_path_factory.mktemp("report"), tiny_model_dir, "--threshold", "0.0"
    )
    return output
