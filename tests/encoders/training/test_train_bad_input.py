"""``paramine train`` on a damaged dataset: one line naming the file, nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from paramine.encoders.evaluation.holdout import load_split
from paramine.pipelines.cli import main as cli_main
from paramine.schemas.errors import DatasetError

from tests.encoders.datasets import make_rows, write_dataset


def main(argv: list[str]) -> int:
    """``paramine train ARGV`` through the CLI's one error boundary."""
    return cli_main(["train", *argv])


def train(dataset: str, model: Path, output: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Run ``paramine train``; expect exit 2 and return its stderr lines."""
    status = main([dataset, "--base", str(model), "--output", str(output)])
    lines = capsys.readouterr().err.splitlines()
    assert status == 2, lines
    return lines


def test_a_truncated_pairs_file_is_one_line_naming_it(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_dataset(tmp_path / "ds", make_rows(16))
    pairs = tmp_path / "ds" / "pairs-00000.parquet"
    # A copy cut short: the Parquet footer (and its magic bytes) is gone.
    pairs.write_bytes(pairs.read_bytes()[: pairs.stat().st_size // 2])
    output = tmp_path / "model"
    lines = train(dataset, tiny_model_dir, output, capsys)
    assert lines == [
        f"paramine: error: {pairs} cannot be read as Parquet (Parquet magic bytes not found "
        "in footer. Either the file is corrupted or this is not a parquet file.): the dataset "
        "is damaged (a copy cut short?); copy it again or mine it again"
    ]
    assert sorted(os.listdir(tmp_path)) == ["ds"]  # no model, no checkpoints


def test_a_pairs_file_listed_but_missing_is_one_line_naming_it(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = write_dataset(tmp_path / "ds", make_rows(16))
    (tmp_path / "ds" / "pairs-00000.parquet").unlink()
    lines = train(dataset, tiny_model_dir, tmp_path / "model", capsys)
    assert len(lines) == 1
    assert lines[0].startswith(f"paramine: error: {tmp_path / 'ds' / 'pairs-00000.parquet'} ")
    assert "missing" in lines[0]
    assert sorted(os.listdir(tmp_path)) == ["ds"]


def test_evaluate_reads_through_the_same_check(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds", make_rows(16))
    pairs = tmp_path / "ds" / "pairs-00000.parquet"
    pairs.write_bytes(b"PAR1" + b"\0" * 64)
    with pytest.raises(DatasetError, match=r"pairs-00000\.parquet cannot be read as Parquet"):
        load_split(dataset)


@pytest.mark.pipeline
def test_other_libraries_logs_stay_out_unless_debug(tmp_path: Path, tiny_model_dir: Path) -> None:
    """A clear one-line error is the last line, and the only one not paramine's own.

    sentence-transformers announces every model it loads and faiss its CPU
    features at INFO; ``train`` and ``evaluate`` keep them out as ``mine``
    does, and ``--debug`` shows them.
    """
    import subprocess
    import sys

    dataset = write_dataset(tmp_path / "ds", make_rows(45))
    args = [sys.executable, "-m", "paramine.pipelines.cli", "train", dataset]
    args += ["--base", str(tiny_model_dir), "--output", str(tmp_path / "m"), "--eval-share", "0"]
    args += ["--hard-negatives", "500", "--batch-size", "8"]
    quiet = subprocess.run(args, capture_output=True, text=True, check=False)
    assert quiet.returncode == 2
    lines = quiet.stderr.strip().splitlines()
    assert lines[-1].startswith("paramine: error: only 0 training pairs got 500 hard negatives")
    noise = [line for line in lines if "SentenceTransformer" in line or "faiss" in line.lower()]
    assert noise == [], lines
    loud = subprocess.run([*args, "--debug"], capture_output=True, text=True, check=False)
    assert any("SentenceTransformer" in line for line in loud.stderr.splitlines())
