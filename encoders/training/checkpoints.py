"""Checkpoints a reader can tell complete, and the one ``--resume`` continues from.

transformers' Trainer writes a checkpoint file by file into ``checkpoint-N``
(weights, optimizer, scheduler, RNG states, ``trainer_state.json`` last), and
its ``get_last_checkpoint`` takes the newest folder whether it is complete or
not. A run killed (SIGKILL) while it wrote ``checkpoint-4`` left a folder
without ``trainer_state.json``, and ``--resume`` died on it with a 37-line
traceback. So paramine marks a checkpoint complete: once the trainer's save
has returned, :class:`MarkComplete` (a ``TrainerCallback.on_save``) writes
:data:`MARKER` into the folder, by write-aside-and-rename, listing every file
with its size. ``--resume`` takes the newest checkpoint whose marker is there
and whose files are all there at those sizes (:func:`resume_point`).

A ``checkpoint-N`` folder without a valid marker is what a kill mid-save
leaves. ``--resume`` sets it aside, renamed ``incomplete-checkpoint-N``
(:func:`set_aside`): never deleted, since paramine cannot tell what else may
be in it, and renamed so that neither the trainer (which would save step N
into it again, over stale files) nor the pruning below touches it.

Pruning (``--save-total-limit``) is done here, after the marker, instead of
by the trainer: the trainer prunes inside its save, before ``on_save``, so
with a limit of 1 it deleted the last complete checkpoint while the new one
was not yet marked. This pruning deletes only folders paramine marked.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from dataclasses import dataclass, field
from typing import Any

from paramine.schemas.errors import OutputError
from paramine.schemas.storage import atomic_write
from transformers import TrainerCallback

log = logging.getLogger(__name__)

#: Written last into a checkpoint folder: the checkpoint is complete.
MARKER = "paramine-complete.json"
#: The prefix an incomplete checkpoint is renamed with when ``--resume`` sets it aside.
SET_ASIDE_PREFIX = "incomplete-"
#: The trainer's checkpoint folders (transformers' ``PREFIX_CHECKPOINT_DIR``).
_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def checkpoint_step(path: str) -> int | None:
    """The step of a ``checkpoint-N`` folder; None for any other name."""
    match = _CHECKPOINT.match(os.path.basename(path.rstrip("/")))
    return int(match.group(1)) if match else None


def _files(folder: str) -> dict[str, int]:
    """Every file under ``folder`` (relative path -> size), the marker excepted."""
    found = {}
    for parent, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(parent, name)
            relative = os.path.relpath(path, folder)
            if relative != MARKER:
                found[relative] = os.path.getsize(path)
    return found


def mark_complete(folder: str, step: int) -> None:
    """Write the marker into a checkpoint folder whose files are all written."""
    marker = {"step": step, "files": _files(folder)}
    atomic_write(os.path.join(folder, MARKER), json.dumps(marker, indent=1) + "\n")


def is_complete(folder: str) -> bool:
    """True when ``folder`` has a marker and every file it lists, at the listed size."""
    try:
        with open(os.path.join(folder, MARKER), encoding="utf-8") as f:
            listed = json.load(f)["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    for relative, size in listed.items():
        path = os.path.join(folder, relative)
        if not os.path.isfile(path) or os.path.getsize(path) != size:
            return False
    return True


@dataclass
class ResumePoint:
    """What a checkpoint folder holds: its complete checkpoints and the rest.

    Attributes:
        complete: ``checkpoint-N`` folders with a valid marker, oldest first.
        incomplete: ``checkpoint-N`` folders without one, oldest first.
    """

    complete: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)

    @property
    def checkpoint(self) -> str | None:
        """The newest complete checkpoint: the one ``--resume`` continues from."""
        return self.complete[-1] if self.complete else None

    @property
    def any(self) -> bool:
        """Whether the folder holds any checkpoint folder, complete or not."""
        return bool(self.complete or self.incomplete)


def resume_point(folder: str) -> ResumePoint:
    """Sort the ``checkpoint-N`` folders of ``folder`` into complete and incomplete.

    A newer incomplete folder does not hide an older complete one: that is
    what ``--resume`` needs after a kill mid-save.
    """
    point = ResumePoint()
    if not os.path.isdir(folder):
        return point
    steps = {}
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        step = checkpoint_step(name)
        if step is not None and os.path.isdir(path):
            steps[path] = step
    for path in sorted(steps, key=steps.__getitem__):
        (point.complete if is_complete(path) else point.incomplete).append(path)
    return point


def set_aside(folders: list[str]) -> list[str]:
    """Rename incomplete checkpoints to ``incomplete-checkpoint-N``; return the new paths.

    An earlier set-aside of the same step is kept too: the new name gets a
    number (``incomplete-checkpoint-4.2``).
    """
    moved = []
    for folder in folders:
        parent, name = os.path.split(folder.rstrip("/"))
        target = os.path.join(parent, SET_ASIDE_PREFIX + name)
        number = 1
        while os.path.exists(target):
            number += 1
            target = os.path.join(parent, f"{SET_ASIDE_PREFIX}{name}.{number}")
        os.rename(folder, target)
        moved.append(target)
    return moved


def prune(folder: str, keep: int) -> list[str]:
    """Delete the oldest complete checkpoints beyond the newest ``keep``; return them."""
    complete = resume_point(folder).complete
    doomed = complete[: max(0, len(complete) - keep)]
    for path in doomed:
        shutil.rmtree(path)
    return doomed


class MarkComplete(TrainerCallback):
    """Mark each checkpoint complete once the trainer has saved it, then prune.

    Args:
        keep: Complete checkpoints kept (``--save-total-limit``); older ones
            are deleted after the newest is marked.
    """

    def __init__(self, keep: int) -> None:
        self.keep = keep

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Called by the trainer after ``_save_checkpoint`` has written every file."""
        if not state.is_world_process_zero:
            return
        folder = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
        if not os.path.isdir(folder):
            return
        mark_complete(folder, state.global_step)
        for path in prune(args.output_dir, self.keep):
            log.info("deleted %s (--save-total-limit %d)", path, self.keep)


def resume_from(folder: str, resume: bool) -> str | None:
    """The checkpoint a run continues from: with ``resume``, the newest complete one.

    Says in the log which one it took and which incomplete ones it skipped;
    those are set aside (renamed, never deleted). Without ``resume``, any
    checkpoint in ``folder`` is refused rather than mixed with a new run.

    Raises:
        OutputError: ``folder`` holds checkpoints and ``resume`` is False.
    """
    point = resume_point(folder)
    if point.any and not resume:
        names = ", ".join(os.path.basename(p) for p in point.complete + point.incomplete)
        raise OutputError(
            f"{folder} already has checkpoints ({names}); pass --resume to continue from the "
            "newest complete one, or choose another --output / --checkpoint-dir"
        )
    if not resume:
        return None
    if point.incomplete:
        moved = set_aside(point.incomplete)
        log.warning(
            "%s: skipped incomplete checkpoints (no %s: the run was stopped while saving "
            "them): %s; set aside, not deleted, as %s",
            folder,
            MARKER,
            ", ".join(os.path.basename(p) for p in point.incomplete),
            ", ".join(os.path.basename(p) for p in moved),
        )
    if point.checkpoint is None:
        log.warning("%s: no complete checkpoint to resume from; starting at step 0", folder)
        return None
    log.info(
        "resuming from %s (step %s), the newest complete checkpoint",
        point.checkpoint,
        checkpoint_step(point.checkpoint),
    )
    return point.checkpoint
