"""Model selection on a suite's dev splits (``--select-on dev``), never on test.

Every ``--select-every`` steps, and at step 0 and the last step,
:class:`DevSelection` scores the model being trained on the dev splits of the
suite's tasks: the same frozen vectors and probes as the suite's table
(:mod:`paramine.encoders.evaluation.probes`), each probe trained on the train
split with ``C`` chosen on dev, and the figure is the dev score at that ``C``
(x100); the signal is their average. The best model so far is saved to
``CHECKPOINTS/selected`` (with ``selection.json``, its history), and at the
end of training its weights are the model's: the test table is then computed
once, for the base and the kept model, by the caller. Step 0 is a candidate:
when no step beats the model training started from (with ``lstm-residual``,
the base itself), that is what is kept, and the history says so.

Only the train and dev files are read here (:func:`read_selection_data`
never asks for a test path), and only when the first score is due, inside
training. The training data is kept apart from every split of the suite
before training begins (:mod:`paramine.encoders.training.data`).

Cost: a full dev evaluation of the pl suite took about 1 h on a 2-core CPU
(research of issue 45: 72,689 more texts encoded than the capped train
splits, 1,069 s of probes). ``--select-max-rows`` (default 1000) caps each
train and dev split at a fixed sample, ``--select-tasks`` scores a subset.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paramine.encoders.evaluation.suite import Split, Suite, SuiteTask, read_split, task_paths
from paramine.schemas.errors import UsageError
from transformers import TrainerCallback

if TYPE_CHECKING:
    from paramine.encoders.evaluation.suite_eval import Encode
    from paramine.encoders.training.config import TrainConfig
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

#: The folder, under the checkpoints, that holds the best model so far.
SELECTED = "selected"
HISTORY = "selection.json"


@dataclass(frozen=True)
class SelectionTask:
    """One task's train and dev rows, as selection scores them."""

    task: SuiteTask
    train: Split
    dev: Split


def selected_tasks(suite: Suite, names: tuple[str, ...]) -> list[SuiteTask]:
    """The suite's tasks that ``--select-tasks`` names (all when none), in the suite's order.

    Raises:
        UsageError: a name is not a task of the suite.
    """
    known = [task.name for task in suite.tasks]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(
            f"--select-tasks {', '.join(unknown)}: not a task of suite {suite.name!r} "
            f"({', '.join(known)})"
        )
    return [task for task in suite.tasks if not names or task.name in names]


def sample_split(split: Split, max_rows: int, seed: str) -> Split:
    """At most ``max_rows`` rows of ``split``, a fixed sample in file order (0 = all)."""
    if not max_rows or len(split.labels) <= max_rows:
        return split
    rows = sorted(random.Random(seed).sample(range(len(split.labels)), max_rows))
    return Split(
        [split.texts[i] for i in rows],
        [split.second[i] for i in rows] if split.second else [],
        [split.labels[i] for i in rows],
    )


def read_selection_data(tasks: list[SuiteTask], root: str, max_rows: int) -> list[SelectionTask]:
    """Read the train and dev splits of ``tasks``; the test split is never opened."""
    data = []
    for task in tasks:
        paths = task_paths(task, root)
        train, dev = (
            sample_split(read_split(task, paths[name]), max_rows, f"{task.name}/{name}")
            for name in ("train", "dev")
        )
        data.append(SelectionTask(task, train, dev))
    return data


def dev_scores(encode: Encode, data: list[SelectionTask]) -> dict[str, Any]:
    """Each task's dev figure (x100, the probe's ``C`` chosen on dev) and their average."""
    from paramine.encoders.evaluation import probes
    from paramine.encoders.evaluation.suite_eval import task_features

    texts = sorted(
        {
            t
            for item in data
            for split in (item.train, item.dev)
            for t in (*split.texts, *split.second)
        }
    )
    vectors = dict(zip(texts, encode(texts), strict=True))
    figures = {}
    for item in data:
        train = (task_features(item.task, item.train, vectors), item.train.labels)
        dev = (task_features(item.task, item.dev, vectors), item.dev.labels)
        # The probes score a third split; dev stands in, and only .dev is read.
        probe = probes.relatedness if item.task.kind == "relatedness" else probes.classify
        figures[item.task.name] = round(probe(train, dev, dev).dev, 2)
    return {"tasks": figures, "average": round(sum(figures.values()) / len(figures), 2)}


class DevSelection(TrainerCallback):
    """Score the model on dev at step 0, every ``every`` steps and at the end; keep the best.

    Args:
        model: The model being trained (its weights are read, and at the end
            replaced by the best ones).
        encode_for: Builds the encoder of ``model`` (prefix, batch size).
        load_data: Reads the selection data; called at the first score.
        every: Steps between scores; 0 scores only the first and last step.
        folder: Where the best model and ``selection.json`` are kept.
        known: Dev results already computed for the weights of these steps
            (``{0: result}``: step 0 of a pooling that starts as the base is
            the base in every seed); such a step is recorded, not scored.
    """

    def __init__(
        self,
        model: SentenceTransformer,
        encode_for: Any,
        load_data: Any,
        every: int,
        folder: str,
        known: dict[int, dict[str, Any]] | None = None,
    ) -> None:
        self.model = model
        self.encode_for = encode_for
        self.load_data = load_data
        self.every = every
        self.folder = folder
        self.data: list[SelectionTask] | None = None
        self.history: list[dict[str, Any]] = []
        self.known = dict(known or {})
        #: CPU seconds this process spent scoring (restored entries not counted).
        self.cpu_s = 0.0

    @property
    def best(self) -> dict[str, Any] | None:
        """The history entry with the best average (the earliest of ties)."""
        best = None
        for entry in self.history:
            if best is None or entry["average"] > best["average"]:
                best = entry
        return best

    def restore(self, resumed_step: int) -> None:
        """Take up the history of a run resumed at ``resumed_step``.

        Entries after that step are dropped (training replays them); if the
        saved model is of one of them, the history starts again, since the
        replayed run may not reach those weights.
        """
        path = os.path.join(self.folder, HISTORY)
        if not os.path.isfile(path):
            return
        with open(path, encoding="utf-8") as f:
            history = json.load(f)["history"]
        kept = [entry["step"] for entry in history if entry.get("kept")]
        if not kept or kept[-1] > resumed_step:
            return  # the saved weights are of a step this run replays: start afresh
        self.history = [entry for entry in history if entry["step"] <= resumed_step]

    def score(self, step: int) -> None:
        """Score the model at ``step``; save it when it is the best so far."""
        if any(entry["step"] == step for entry in self.history):
            return
        started, cpu_started = time.perf_counter(), time.process_time()
        if step in self.known:
            result = {**self.known[step], "reused": True}
        else:
            if self.data is None:
                self.data = self.load_data()
            was_training = self.model.training
            result = dev_scores(self.encode_for(self.model), self.data or [])
            self.model.train(was_training)
        cpu = time.process_time() - cpu_started
        self.cpu_s += cpu
        entry = {
            "step": step,
            **result,
            "seconds": round(time.perf_counter() - started, 1),
            "cpu_s": round(cpu, 1),
        }
        previous = self.best
        self.history.append(entry)
        if previous is None or entry["average"] > previous["average"]:
            entry["kept"] = True
            self._save()
        self._write_history()
        log.info(
            "selection, step %d: dev average %.2f (%s)%s%s",
            step,
            entry["average"],
            ", ".join(f"{k} {v:.2f}" for k, v in result["tasks"].items()),
            "; scored for an earlier seed" if entry.get("reused") else "",
            "; best so far, saved" if entry.get("kept") else "",
        )

    def _save(self) -> None:
        """Write the model to ``folder`` whole: built aside, then swapped in."""
        building, old = self.folder + ".building", self.folder + ".old"
        shutil.rmtree(building, ignore_errors=True)
        self.model.save(building, create_model_card=False)
        if os.path.isfile(os.path.join(self.folder, HISTORY)):
            shutil.copy(os.path.join(self.folder, HISTORY), building)
        if os.path.isdir(self.folder):
            os.rename(self.folder, old)
        os.rename(building, self.folder)
        shutil.rmtree(old, ignore_errors=True)

    def _write_history(self) -> None:
        from paramine.schemas.storage import atomic_write

        best = self.best
        record = {"best_step": best["step"] if best else None, "history": self.history}
        atomic_write(os.path.join(self.folder, HISTORY), json.dumps(record, indent=1) + "\n")

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Score the weights training starts from: step 0, or the resumed checkpoint's."""
        self.score(state.global_step)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Score every ``every`` steps."""
        if self.every and state.global_step % self.every == 0:
            self.score(state.global_step)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Score the last step, then load the best weights into the model."""
        self.score(state.global_step)
        self.keep_best()

    def keep_best(self) -> None:
        """Load the best model's weights into the model, unless it is the last step's."""
        from paramine.encoders.modules.lstm_pooling import load_encoder

        best = self.best
        if best is None or best["step"] == self.history[-1]["step"]:
            return
        kept = load_encoder(self.folder, device=str(self.model.device))
        self.model.load_state_dict(kept.state_dict())
        log.info("kept the model of step %d (dev average %.2f)", best["step"], best["average"])

    def summary(self) -> dict[str, Any]:
        """What ``paramine_training.json`` records of the selection."""
        best = self.best
        return {
            "kept_step": best["step"] if best else None,
            "kept_dev_average": best["average"] if best else None,
            "tasks": [item.task.name for item in self.data or []],
            "history": self.history,
        }


def dev_selection(
    config: TrainConfig,
    model: SentenceTransformer,
    prefix: str,
    checkpoints: str,
    checkpoint: str | None,
    known: dict[int, dict[str, Any]] | None = None,
) -> DevSelection | None:
    """The callback of ``--select-on dev`` (None without it), its history taken up on resume.

    ``known``: dev results of steps whose weights were scored already (see
    :class:`DevSelection`).
    """
    if config.select_on != "dev":
        return None
    from paramine.encoders.evaluation.suite import load_suite, resolve_data_root
    from paramine.encoders.evaluation.suite_eval import model_encoder
    from paramine.encoders.training.checkpoints import checkpoint_step

    if config.suite is None:
        raise UsageError("--select-on dev scores a suite's dev splits: give --suite")
    suite = load_suite(config.suite)
    root = resolve_data_root(suite, config.suite_data)
    tasks = selected_tasks(suite, config.select_tasks)
    selection = DevSelection(
        model,
        lambda m: model_encoder(m, prefix, config.eval_batch_size),
        lambda: read_selection_data(tasks, root, config.select_max_rows),
        config.select_every,
        os.path.join(checkpoints, SELECTED),
        known,
    )
    if checkpoint:
        selection.restore(checkpoint_step(checkpoint) or 0)
    return selection
