"""``paramine adapt``'s loop: mine, train on every aligned line, mine again, until it stops paying.

Round 0 mines the input with the base (``paramine mine --write-scored``, so
every aligned line the Prefilter kept is kept with its score). Round r >= 1
trains an encoder from the base with the ``adapt`` recipe on the pass before
it: every aligned line of the training split but those that score as
mismatched pairs do, and the paraphrase pairs it wrote; then mines again with
that encoder. Every round starts from the base, so a round does not build on
the one before's mistakes; it learns from a cleaner choice of lines (scored by
a better encoder) and more pairs.

Whether a round is better is read on pivots held out by hash, whose lines no
round trains on, never on the pairs the rounds write:

- a round's encoder must beat the one before on held-out bitext retrieval by
  ``min_gain`` points, less ``min_gain_se`` standard errors of that gain
  (the two encoders scored line by line on the same lines: on a hundred
  lines a one-line gain is noise), else the loop stops and the one before
  is final; with ``tied_round`` "later", a trained round short of that yet
  no worse than a trained one before it beyond the noise is kept instead,
  its pass mined, and the loop stops there (``stop_rule``);
- a pass must write new pairs, at least ``min_new`` of the pass before's,
  else the loop stops with it: another round would change little (the count
  says nothing of the pairs' worth, so it can end the loop, never extend it);
- ``rounds`` rounds at most.

Layout of ``--output OUT``::

    OUT/adapt.json                 the loop's record, written after every step
    OUT/rounds/round-0/dataset     the first pass, with the base
    OUT/rounds/round-R/encoder     round R's encoder (and its checkpoints while it trains)
    OUT/rounds/round-R/dataset     round R's pass, with that encoder
    OUT/dataset, OUT/encoder       the final round's, copied when the loop stops

A killed loop run again with the same command resumes: finished steps are
read from ``adapt.json``, a training resumes from its newest complete
checkpoint, a pass is mined again.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import time
from typing import TYPE_CHECKING, Any

from paramine.pipelines.adapt.pair_changes import new_share, pair_changes
from paramine.pipelines.adapt.progress import gain_line, pass_line, say, training_line
from paramine.pipelines.adapt.settings import AdaptSettings
from paramine.pipelines.adapt.stop_rule import Judged, judge, needs_error
from paramine.schemas.adapt_record import (
    AdaptRecord,
    MiningPass,
    Round,
    TrainingStep,
    held_out_score,
)
from paramine.schemas.errors import OutputError, UsageError

if TYPE_CHECKING:
    from paramine.encoders.training.config import TrainConfig
    from paramine.pipelines.run.mine import MineJob

RECORD_NAME = "adapt.json"
#: What a loop folder holds: nothing else is touched, and a folder with anything else is refused.
LOOP_ENTRIES = frozenset({RECORD_NAME, RECORD_NAME + ".tmp", "rounds", "dataset", "encoder"})


def loop_settings(job: MineJob, settings: AdaptSettings) -> dict[str, Any]:
    """What a resumed loop must share with the one it resumes: every setting but where it writes."""
    running = job.running.to_record()
    for key in ("output", "overwrite", "quiet"):
        running.pop(key, None)
    return {"mining": job.mining.to_record(), "running": running, "loop": settings.to_record()}


class AdaptLoop:
    """One loop in its folder: the record, the steps, the stop rule."""

    def __init__(self, job: MineJob, settings: AdaptSettings) -> None:
        output = job.running.output
        if not output or "://" in output:
            raise UsageError(
                f"--output {output}: paramine adapt trains in a local folder; give a local path "
                "(copy the final dataset to object storage after)"
            )
        self.job = job
        self.settings = settings
        self.out = os.path.abspath(output)
        self.base = job.mining.model
        self.record = self._open(loop_settings(job, settings), job.running.overwrite)
        self._train_config(0, "")  # --train-flags checked before anything runs

    # -- the record --------------------------------------------------------

    def _open(self, wanted: dict[str, Any], overwrite: bool) -> AdaptRecord:
        """The loop's record: a new one, or the one a same loop left to resume."""
        path = os.path.join(self.out, RECORD_NAME)
        if not os.path.exists(self.out) or not os.listdir(self.out):
            return AdaptRecord(wanted)
        if not os.path.isfile(path):
            raise OutputError(
                f"--output {self.out} is not empty and holds no {RECORD_NAME}: paramine adapt "
                "writes only into a new or empty folder, or one an adapt loop wrote"
            )
        foreign = sorted(set(os.listdir(self.out)) - LOOP_ENTRIES)
        if foreign:
            raise OutputError(
                f"--output {self.out} holds {', '.join(foreign)} besides a loop: paramine adapt "
                "does not write into a folder it shares"
            )
        with open(path, encoding="utf-8") as f:
            found = AdaptRecord.from_record(json.load(f))
        if found.settings == wanted and not overwrite:
            return found
        if not overwrite:
            raise OutputError(
                f"--output {self.out} holds a loop with other settings; give a new --output, "
                "or --overwrite to start it anew"
            )
        for entry in LOOP_ENTRIES & set(os.listdir(self.out)):
            target = os.path.join(self.out, entry)
            shutil.rmtree(target) if os.path.isdir(target) else os.remove(target)
        return AdaptRecord(wanted)

    def _save(self) -> None:
        from paramine.schemas.storage import atomic_write

        os.makedirs(self.out, exist_ok=True)
        text = json.dumps(self.record.to_record(), indent=2, ensure_ascii=False) + "\n"
        atomic_write(os.path.join(self.out, RECORD_NAME), text)

    def _folder(self, round_: int, name: str) -> str:
        return os.path.join(self.out, "rounds", f"round-{round_}", name)

    # -- the loop ----------------------------------------------------------

    def run(self) -> AdaptRecord:
        """Run the loop to its stop (or resume it); return its record."""
        record = self.record
        if record.stopped is not None:
            say(f"the loop in {self.out} stopped already: {record.stopped}")
            return record
        first = record.round(0)
        if first.mining is None:
            say(f"round 0: mining with the base {self.base}")
            first.mining = self._mine(0, self.base, None)
            self._save()
        say(pass_line(first))
        best, best_score = first, None
        known = self.settings.known_above
        if known < 100:
            assert first.mining is not None
            if record.held_out_base is None:
                say("round 1: scoring the base on the held-out lines")
                record.held_out_base = self._score_base(first.mining.dataset)
                self._save()
            best_score = held_out_score(record.held_out_base)
            if best_score is not None and best_score >= known:
                return self._stop(
                    best,
                    f"the base finds {best_score:.2f} points of held-out lines (>= "
                    f"--known-above {known:g}): a language it knows; round 0 is final",
                )
        for number in range(1, self.settings.rounds + 1):
            current = record.round(number)
            previous = record.rounds[number - 1]
            assert previous.mining is not None
            if current.training is None:
                say(f"round {number}: training on {previous.mining.dataset}")
                current.training = self._train(number, previous.mining.dataset)
                self._save()
            if best_score is None:
                best_score = held_out_score(current.training.held_out_base)
            score = held_out_score(current.training.held_out)
            say(training_line(number, current.training, best_score))
            judged = self._judge(number, current.training, best, best_score)
            if not judged.keep:
                return self._stop(
                    best, f"round {number}'s encoder {judged.why}; round {best.round} is final"
                )
            best, best_score = current, score
            if current.mining is None:
                say(f"round {number}: mining with {current.training.encoder}")
                current.mining = self._mine(number, current.training.encoder, previous.mining)
                self._save()
            say(pass_line(current))
            if not judged.go_on:
                return self._stop(
                    current, f"round {number}'s encoder {judged.why}; round {number} is final"
                )
            grown = new_share(current.mining, previous.mining)
            if grown < self.settings.min_new:
                return self._stop(
                    current,
                    f"round {number}'s pass wrote {grown:.1%} new pairs "
                    f"(< {self.settings.min_new:.0%}): another round would change little",
                )
        return self._stop(best, f"{self.settings.rounds} rounds, the most --rounds allows")

    def _judge(
        self, number: int, step: TrainingStep, best: Round, best_score: float | None
    ) -> Judged:
        """Round ``number``'s encoder against ``best``'s (``stop_rule.judge``).

        The gain's standard error is read line by line against ``best``'s
        encoder on the same held-out lines where it can change the answer,
        and recorded.
        """
        score = held_out_score(step.held_out)
        if score is None or best_score is None:
            return Judged(False, False, "gained nothing (no held-out lines to score)")
        tie_allowed = best.training is not None and self.settings.tied_round == "later"
        gain = score - best_score
        if step.gain is None and needs_error(gain, self.settings, tie_allowed):
            say(f"round {number}: comparing its encoder with round {best.round}'s line by line")
            step.gain = self._compare(number, step, best)
            self._save()
            if step.gain:
                say(gain_line(number, step.gain))
        error, lines = 0.0, 0
        if step.gain:
            gain, error, lines = step.gain["gain"], step.gain["standard_error"], step.gain["lines"]
        return judge(gain, error, lines, self.settings, tie_allowed=tie_allowed, against=best.round)

    def _compare(self, number: int, step: TrainingStep, best: Round) -> dict[str, Any] | None:
        """Round ``number``'s encoder against ``best``'s on the held-out lines, line by line."""
        from paramine.encoders.training.held_out import compare_encoders

        config = self._train_config(number, step.dataset)
        before = best.training.encoder if best.training else None
        found = compare_encoders(config, before, step.encoder)
        return None if found is None else {**found.to_record(), "against": best.round}

    def _mine(self, number: int, model: str, previous: MiningPass | None) -> MiningPass:
        """Mine the input with ``model`` into round ``number``'s dataset (every line scored)."""
        from paramine.pipelines.run.mine import MineJob, run_job

        dataset = self._folder(number, "dataset")
        job = MineJob(
            self.job.mining.replace(model=model),
            self.job.running.replace(output=dataset, write_scored=True, overwrite=True),
            self.job.beam_args,
        )
        started = time.monotonic()
        manifest = run_job(job).manifest
        assert manifest is not None  # a loop never runs a deployment's dry run
        held, new, new_held = pair_changes(dataset, previous, self.settings.held_out)
        return MiningPass(
            dataset=dataset,
            model=model,
            pairs=manifest.rows.pairs,
            held_out_pairs=held,
            new_held_out_pairs=new_held,
            new_pairs=new,
            cut=manifest.cut.value,
            score=manifest.cut.score,
            seconds=round(time.monotonic() - started, 1),
        )

    def _train_config(self, number: int, dataset: str) -> TrainConfig:
        """Round ``number``'s ``paramine train`` settings: the adapt recipe, the loop's split."""
        from paramine.encoders.training.config import TrainConfig
        from paramine.schemas.options import parse_config

        encoder = self._folder(number, "encoder")
        device = self.job.running.device
        argv = [
            dataset or "DATASET",
            "--base",
            self.base,
            "--output",
            encoder,
            "--checkpoint-dir",
            encoder + "-checkpoints",
            "--recipe",
            "adapt",
            "--eval-share",
            str(self.settings.held_out),
            "--seed",
            str(self.settings.seed),
            "--save-steps",
            str(self.settings.save_steps),
            # A round killed while it trained resumes from its newest complete checkpoint.
            *(["--resume"] if os.path.isdir(encoder + "-checkpoints") else []),
            *(["--device", device] if device != "auto" else []),
            *(["--quiet"] if self.job.running.quiet else []),
            *self._exclusions(),
            *shlex.split(self.settings.train_flags),
        ]
        try:
            return parse_config(TrainConfig, "paramine train", "", argv)
        except UsageError as error:
            raise UsageError(f"--train-flags {self.settings.train_flags!r}: {error}") from None

    def _exclusions(self) -> list[str]:
        """Mine's ``--exclude-sentences`` and ``--exclude-suite``, for training too.

        A pass keeps them out of its pairs, but its ``scored/`` table holds
        every line it read, and a round trains on those lines.
        """
        mining = self.job.mining
        flags = [arg for url in mining.exclude_sentences for arg in ("--exclude-sentences", url)]
        if mining.exclude_suite:
            flags += ["--exclude-suite", mining.exclude_suite]
            if mining.suite_data:
                flags += ["--suite-data", mining.suite_data]
        return flags

    def _score_base(self, dataset: str) -> dict[str, float]:
        """The base's figures on ``dataset``'s held-out lines, as round 1's training scores them.

        Read before round 1 trains, so a language the base knows costs no
        training (on Tatoeba eng-pol one round's training took 10-14 minutes here).
        """
        from paramine.encoders.training.base_model import score_base

        return score_base(self._train_config(1, dataset))

    def _train(self, number: int, dataset: str) -> TrainingStep:
        """Train round ``number``'s encoder from the base on ``dataset``; its figures."""
        from paramine.encoders.training.model_card import SUMMARY_FILE
        from paramine.encoders.training.train import run_training

        config = self._train_config(number, dataset)
        started = time.monotonic()
        run_training(config)
        seconds = round(time.monotonic() - started, 1)
        # The checkpoints served a resume inside the round; the model is saved whole.
        shutil.rmtree(config.checkpoints, ignore_errors=True)
        with open(os.path.join(config.output, SUMMARY_FILE), encoding="utf-8") as f:
            summary = json.load(f)
        aligned = summary["counts"].get("aligned", {})
        results = summary.get("results") or {}
        return TrainingStep(
            encoder=config.output,
            dataset=dataset,
            rows=summary["training"]["train_pairs"],
            aligned_lines=aligned.get("train_lines", 0),
            dropped_mismatched=aligned.get("dropped_mismatched", 0),
            steps=summary["training"]["global_step"],
            seconds=seconds,
            held_out=results.get("trained", {}),
            held_out_base=results.get("base", {}),
        )

    def _stop(self, final: Round, why: str) -> AdaptRecord:
        """End the loop at ``final``: the record says why, and the final round is put in place."""
        record = self.record
        record.stopped, record.final_round = why, final.round
        record.dataset = os.path.join(self.out, "dataset")
        record.encoder = os.path.join(self.out, "encoder") if final.training else None
        self._publish(final)
        self._save()
        say(f"stopped: {why}")
        return record

    def _publish(self, final: Round) -> None:
        """Copy the final round's dataset and encoder into place; its manifest holds the rounds."""
        from paramine.pipelines.report.build import build_report
        from paramine.schemas.manifest import read_manifest, write_manifest

        record = self.record
        assert final.mining is not None and record.dataset is not None
        _replace(final.mining.dataset, record.dataset)
        if final.training is not None and record.encoder is not None:
            _replace(final.training.encoder, record.encoder)
        manifest = read_manifest(record.dataset)
        manifest.extra = manifest.extra.with_facts(adapt=record.to_record())
        write_manifest(record.dataset, manifest)
        build_report(record.dataset, manifest)


def _replace(source: str, target: str) -> None:
    """``target`` becomes a copy of ``source`` (a folder the loop wrote, or nothing)."""
    if os.path.isdir(target):
        shutil.rmtree(target)
    shutil.copytree(source, target)
