"""Checkpoints marked complete, and ``--resume`` after a kill in the middle of a save."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from paramine.encoders.training.checkpoints import (
    MARKER,
    is_complete,
    mark_complete,
    prune,
    resume_point,
    set_aside,
)
from paramine.pipelines.cli import main as cli_main

from tests.encoders.datasets import make_rows, write_dataset

#: ``paramine train ARGV`` in a process that kills itself (SIGKILL) while the
#: trainer writes checkpoint-KILL_AT: after the model's weights, before the
#: optimizer, the RNG states and trainer_state.json, as a preempted VM would.
KILLED_MID_SAVE = """
import os, signal, sys
from transformers import Trainer

kill_at = os.environ["KILL_AT"]
save_optimizer = Trainer._save_optimizer_and_scheduler


def killed(self, output_dir):
    if os.path.basename(output_dir) == f"checkpoint-{kill_at}":
        os.kill(os.getpid(), signal.SIGKILL)
    return save_optimizer(self, output_dir)


Trainer._save_optimizer_and_scheduler = killed
from paramine.pipelines.cli import main

sys.exit(main(["train", *sys.argv[1:]]))
"""


@pytest.mark.pipeline
def test_a_kill_mid_save_then_resume_continues_from_the_previous_complete_checkpoint(
    tmp_path: Path, tiny_model_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = write_dataset(tmp_path / "ds", make_rows(48))
    out, checkpoints = tmp_path / "model", tmp_path / "model-checkpoints"
    args = [url, "--base", str(tiny_model_dir), "--output", str(out), "--device", "cpu"]
    args += ["--lstm-hidden", "16", "--batch-size", "8", "--lr", "5e-3", "--save-steps", "2"]
    args += ["--eval-share", "0", "--logging-steps", "1", "--max-steps", "6"]
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_MID_SAVE, *args],
        env={**os.environ, "KILL_AT": "4"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    # What the kill left: checkpoint-2 complete; checkpoint-4 with the weights
    # but no trainer_state.json, and no marker.
    assert is_complete(str(checkpoints / "checkpoint-2"))
    half = checkpoints / "checkpoint-4"
    assert (half / "modules.json").is_file()
    assert not (half / "trainer_state.json").exists() and not (half / MARKER).exists()
    assert not out.exists()

    # Without --resume the folder is refused, whatever state its checkpoints are in.
    assert cli_main(["train", *args]) == 2
    with caplog.at_level(logging.INFO):
        assert cli_main(["train", *args, "--resume"]) == 0
    summary = json.loads((out / "paramine_training.json").read_text())
    assert summary["settings"]["resumed_from"] == str(checkpoints / "checkpoint-2")
    assert summary["training"]["global_step"] == 6
    assert f"resuming from {checkpoints / 'checkpoint-2'} (step 2)" in caplog.text
    assert "skipped incomplete checkpoints" in caplog.text and "checkpoint-4" in caplog.text
    # The half-written folder was set aside, not deleted, and step 4 was saved anew.
    assert (checkpoints / "incomplete-checkpoint-4" / "modules.json").is_file()
    assert is_complete(str(checkpoints / "checkpoint-4"))
    state = json.loads((checkpoints / "checkpoint-6" / "trainer_state.json").read_text())
    # Steps 1-2 were logged by the killed run, 3-6 by the resumed one.
    assert [e["step"] for e in state["log_history"] if "loss" in e] == [1, 2, 3, 4, 5, 6]
    # --save-total-limit 2 (the default) keeps the two newest complete ones.
    names = sorted(p.name for p in checkpoints.iterdir())
    assert names == ["checkpoint-4", "checkpoint-6", "incomplete-checkpoint-4"]


def test_a_checkpoint_is_complete_only_with_its_marker_and_every_file(tmp_path: Path) -> None:
    folder = tmp_path / "checkpoint-3"
    (folder / "sub").mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"x" * 10)
    (folder / "sub" / "config.json").write_text("{}")
    assert not is_complete(str(folder))
    mark_complete(str(folder), 3)
    assert is_complete(str(folder))
    listed = json.loads((folder / MARKER).read_text())
    assert listed == {"step": 3, "files": {"model.safetensors": 10, "sub/config.json": 2}}
    # A file cut short or gone after the marker was written: not complete.
    (folder / "model.safetensors").write_bytes(b"x" * 4)
    assert not is_complete(str(folder))
    (folder / "model.safetensors").write_bytes(b"x" * 10)
    (folder / "sub" / "config.json").unlink()
    assert not is_complete(str(folder))
    (folder / MARKER).write_text("{not json")
    assert not is_complete(str(folder))


def test_resume_point_sorts_by_step_and_set_aside_never_overwrites(tmp_path: Path) -> None:
    for step in (2, 10, 4, 12):
        folder = tmp_path / f"checkpoint-{step}"
        folder.mkdir()
        (folder / "weights").write_text(str(step))
        if step in (2, 4, 10):
            mark_complete(str(folder), step)
    (tmp_path / "checkpoint-x").mkdir()  # not the trainer's: ignored
    (tmp_path / "checkpoint-20").write_text("a file")  # not a folder: ignored
    point = resume_point(str(tmp_path))
    assert [Path(p).name for p in point.complete] == [
        "checkpoint-2",
        "checkpoint-4",
        "checkpoint-10",
    ]
    assert [Path(p).name for p in point.incomplete] == ["checkpoint-12"]
    assert point.checkpoint == str(tmp_path / "checkpoint-10")
    assert resume_point(str(tmp_path / "absent")).checkpoint is None
    moved = set_aside(point.incomplete)
    assert moved == [str(tmp_path / "incomplete-checkpoint-12")]
    (tmp_path / "checkpoint-12").mkdir()
    assert set_aside([str(tmp_path / "checkpoint-12")]) == [
        str(tmp_path / "incomplete-checkpoint-12.2")
    ]
    # Pruning deletes only complete checkpoints, the oldest first.
    assert [Path(p).name for p in prune(str(tmp_path), 2)] == ["checkpoint-2"]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [
        "checkpoint-10",
        "checkpoint-20",
        "checkpoint-4",
        "checkpoint-x",
        "incomplete-checkpoint-12",
        "incomplete-checkpoint-12.2",
    ]
