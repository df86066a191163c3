"""``paramine mine``: bitext in, a Parquet dataset of paraphrase pairs out.

shards | "MineParaphrases" (pipelines/mine_paraphrases.py) | "WriteDataset"

Everything that can be checked is checked before the pipeline is built and
before anything is written: the options (``MineConfig``), Beam's flags and the
deployment, the inputs (they exist and resolve to shards), the model, and the
output.

What a run makes it removes again when it does not finish: a failure, a full
disk (one line naming where) or SIGTERM / SIGINT (exit 143 / 130, one line)
leaves no staging folder beside ``--output``, no Beam temp folder, progress
file or run log in TMPDIR, and the old dataset as it was.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Sequence
from importlib import resources
from types import FrameType
from typing import TYPE_CHECKING, Any, NamedTuple

from paramine.pipelines.run import deploy as dataflow
from paramine.pipelines.run.config import DEFAULT_RUNNER, MineConfig, parse_command_line
from paramine.schemas.errors import InputError, RunInterrupted, UsageError

if TYPE_CHECKING:  # pyarrow and fsspec load with the run, not with --help
    from paramine.schemas.manifest import Manifest

DEMO_OUTPUT = "paramine-demo"
DEMO_LANGS = ("en", "pl")


def demo_input() -> str:
    """Path of the built-in demo bitext (English-Polish, written for paramine)."""
    return str(resources.files("paramine.pipelines.demo") / "demo.en-pl.tsv")


def code_version() -> str:
    """The installed paramine version."""
    try:
        return "paramine " + importlib.metadata.version("paramine")
    except importlib.metadata.PackageNotFoundError:
        return "paramine (not installed)"


class MineRun(NamedTuple):
    """A finished run: the manifest it wrote and its ``paramine`` Beam counters.

    A ``--deploy-dry-run`` writes nothing: ``manifest`` is None, ``counters``
    empty, and ``dry_run`` holds what it printed.
    """

    manifest: Manifest | None
    counters: dict[str, int]
    dry_run: str = ""


def config_from_command_line(argv: Sequence[str]) -> tuple[MineConfig, list[str]]:
    """Parse ``paramine mine``'s command line into a config and Beam's flags.

    Positional INPUTs are told apart from the values of Beam's flags by Beam's
    own parser (``--runner DirectRunner``); ``--input`` needs no such care.
    With no input at all, the built-in demo is mined.

    Raises:
        UsageError: Any bad option, naming it.
    """
    given, rest = parse_command_line(argv)
    positional, beam_args = _split_positional_inputs(rest)
    inputs = [*positional, *given.pop("inputs", [])]
    if given.get("input_list"):
        inputs += _read_input_list(given["input_list"])
    if not inputs:
        langs = (given.get("src_lang", "en"), given.get("tgt_lang", "pl"))
        if langs != DEMO_LANGS:
            raise UsageError(
                "the built-in demo is English-Polish: give an INPUT for other languages"
            )
        inputs = [demo_input()]
        given.setdefault("output", DEMO_OUTPUT)
        print(f"paramine: no INPUT given, mining the built-in demo {inputs[0]}", file=sys.stderr)
    if not given.get("output"):
        raise UsageError("--output is required when an INPUT is given")
    if not any(a == "--runner" or a.startswith("--runner=") for a in beam_args):
        beam_args.append(f"--runner={DEFAULT_RUNNER}")
    return MineConfig.from_mapping({**given, "inputs": inputs}), beam_args


def _split_positional_inputs(tokens: list[str]) -> tuple[list[str], list[str]]:
    """Separate positional INPUTs from Beam's flags and their values."""
    if not any(not t.startswith("-") for t in tokens):
        return [], tokens
    from apache_beam.options.pipeline_options import PipelineOptions

    beam_values: set[str] = set()
    options = PipelineOptions(tokens).get_all_options(retain_unknown_options=True)
    for value in options.values():
        items = value if isinstance(value, list) else [value]
        beam_values.update(str(v) for v in items if v is not None)
    inputs, flags = [], []
    previous = ""
    for token in tokens:
        # A token that follows a flag without "=" and that Beam took as that
        # flag's value stays with the flag; any other bare token is an INPUT.
        takes_value = previous.startswith("-") and "=" not in previous
        if not token.startswith("-") and not (takes_value and token in beam_values):
            inputs.append(token)
        else:
            flags.append(token)
        previous = token
    return inputs, flags


def _read_input_list(url: str) -> list[str]:
    from paramine.pipelines.formats import read_input_list

    try:
        return read_input_list(url)
    except FileNotFoundError:
        raise InputError(f"--input-list {url}: no such file") from None
    except OSError as error:
        raise InputError(f"--input-list {url}: cannot be read ({error})") from None


def run(argv: Sequence[str] | None = None, test_pipeline: Any = None) -> Manifest | None:
    """Run the mining job from a command line and return the manifest it wrote.

    A ``--deploy-dry-run`` writes nothing and returns None.

    Args:
        argv: Command-line arguments (INPUT... and flags); ``sys.argv`` by default.
        test_pipeline: A pipeline to build into instead of a new one (tests).
    """
    config, beam_args = config_from_command_line(sys.argv[1:] if argv is None else argv)
    return run_config(config, beam_args, test_pipeline).manifest


def run_with_metrics(
    argv: Sequence[str] | None = None, test_pipeline: Any = None
) -> tuple[Manifest | None, dict[str, int]]:
    """Like ``run``, and also return the run's ``paramine`` Beam counters."""
    config, beam_args = config_from_command_line(sys.argv[1:] if argv is None else argv)
    result = run_config(config, beam_args, test_pipeline)
    return result.manifest, result.counters


def run_config(
    config: MineConfig,
    beam_args: Sequence[str] = (f"--runner={DEFAULT_RUNNER}",),
    test_pipeline: Any = None,
) -> MineRun:
    """Run the mining job described by ``config``: the Python API of ``paramine mine``.

    Args:
        config: The run's settings; ``inputs`` and ``output`` are required.
        beam_args: Beam's pipeline options, passed through unchanged.
        test_pipeline: A pipeline to build into instead of a new one (tests).

    Returns:
        The manifest and counters; with ``--deploy-dry-run``, which prints the
        deployment and launches nothing, no manifest (``MineRun.dry_run``).

    Raises:
        ParamineError: A setting, input, model or output that cannot work,
            found before anything is written; or a bad record under an
            ``error`` policy, found while reading.
        OutputError: The disk filled up during the run (the message says where).
        RunInterrupted: SIGTERM or SIGINT stopped the run (in the main thread,
            where the handlers are installed for the length of the run).
    """
    if not config.inputs:
        raise UsageError("give at least one INPUT (or --input URL)")
    if not config.output:
        raise UsageError("--output is required")
    deployment = dataflow.apply(config, list(beam_args))
    config = deployment.config
    if config.deploy_dry_run:
        plan = dataflow.describe(deployment)
        print(plan, file=sys.stderr)
        return MineRun(None, {}, plan)

    from paramine.pipelines.run.preflight import check_run

    checked = check_run(config)

    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    from paramine.pipelines.mine_paraphrases import MINE_STAGES, MineParaphrases
    from paramine.pipelines.stages.write_dataset import WriteDataset

    base = {
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "code_version": code_version(),
        "options": {**config.to_record(), "runner": deployment.runner},
        "model": checked.model_record,
        "inputs": checked.input_records,
        "stages": [stage.to_record() for stage in MINE_STAGES],
        "extra": {"eval_exclusion": {"sentences": len(checked.excluded)}},
    }
    from paramine.pipelines.report.build import build_report
    from paramine.pipelines.report.timing import run_timing
    from paramine.pipelines.run.collector import bulk_run
    from paramine.pipelines.run.output import disk_full_error
    from paramine.pipelines.run.progress import RunProgress, input_bytes
    from paramine.schemas.manifest import read_manifest

    start = time.monotonic()
    staging = checked.output
    pipeline = test_pipeline
    with _StopOnSignals() as stop:
        try:
            if pipeline is None:
                pipeline = beam.Pipeline(options=PipelineOptions(deployment.beam_args))
            mined = pipeline | "MineParaphrases" >> MineParaphrases(
                config, checked.shards, checked.excluded
            )
            tables = {
                "pairs": mined.pairs,
                "rejects": mined.rejects,
                "counts": mined.counts,
                "threshold": mined.threshold,
            }
            if mined.scored is not None:
                tables["scored"] = mined.scored
            # The run writes beside --output, report included; the dataset is
            # swapped in only when complete, and a failed run leaves the old
            # one as it was.
            _ = tables | "WriteDataset" >> WriteDataset(staging.staging, base, config.num_shards)
            if _beam_dry_run(deployment.beam_args):
                # Beam's --dry_run: the runner translates the job and submits
                # nothing, so no dataset will come to wait for.
                pipeline.run()
                staging.abandon()
                plan = (
                    f"paramine: Beam's --dry_run: the job was translated for {deployment.runner} "
                    f"and not submitted; nothing was written to {staging.target}"
                )
                print(plan, file=sys.stderr)
                return MineRun(None, {}, plan)
            with staging.writing():
                with (
                    RunProgress(input_bytes(checked.input_records), quiet=config.quiet),
                    bulk_run(),
                ):
                    result = pipeline.run()
                    result.wait_until_finish()
                seconds = time.monotonic() - start
                build_report(
                    staging.staging,
                    read_manifest(staging.staging),
                    timing=run_timing(seconds, result),
                    published_as=staging.target,
                )
                # The dataset is complete: a signal now waits for the swap
                # (two renames) and the run ends as finished.
                stop.hold()
        except BaseException as error:
            if stop.stopped_by is not None:
                # Again, with signals now ignored: the first cleanup may
                # itself have been cut short by the signal.
                with contextlib.suppress(OSError):
                    staging.abandon()
                name = signal.Signals(stop.stopped_by).name
                raise RunInterrupted(
                    f"stopped by {name}; the unfinished dataset was removed and --output "
                    f"{staging.target} is as it was",
                    stop.stopped_by,
                ) from error
            full = disk_full_error(error)
            if full is not None:
                raise staging.disk_full(full) from error
            raise
        finally:
            # Beam removes the folder it made for the pipeline only if the
            # pipeline ran to its end or failed inside run().
            if test_pipeline is None and pipeline is not None:
                shutil.rmtree(pipeline.local_tempdir, ignore_errors=True)
    counters = _counters(result)
    manifest = read_manifest(staging.target)
    print(_summary(manifest, staging.target, seconds), file=sys.stderr)
    if manifest.threshold.get("warning"):
        print(f"paramine: warning: {manifest.threshold['warning']}", file=sys.stderr)
    return MineRun(manifest, counters)


def _beam_dry_run(beam_args: list[str]) -> bool:
    """Whether Beam's own ``--dry_run`` is set (DataflowRunner translates, submits nothing)."""
    from apache_beam.options.pipeline_options import PipelineOptions, TestOptions

    return bool(PipelineOptions(beam_args).view_as(TestOptions).dry_run)


class _Stopped(BaseException):
    """Raised by the signal handler; not an ``Exception``, so no ``except Exception`` holds it."""


class _StopOnSignals:
    """SIGTERM and SIGINT stop the run, for the length of a ``with`` block.

    The handler raises ``_Stopped`` in the main thread, wherever it is (inside
    Beam's in-process runner, most likely); the ``with`` blocks it unwinds
    through remove what the run made, and the launcher turns it into a
    ``RunInterrupted``. Further signals are ignored while that cleanup runs,
    and so is one that arrives after ``hold()``. The handlers that were there
    before are restored on exit. Outside the main thread (where Python cannot
    install handlers) nothing changes.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.stopped_by: int | None = None
        self._holding = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _StopOnSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                # A signal this process was started ignoring (SIGINT in a
                # background job, under nohup) stays ignored, as Python does.
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._previous.items():
            # None: a handler not set from Python; the default is what it did.
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)

    def hold(self) -> None:
        """From now on a signal is ignored: the run is past the point of undoing."""
        self._holding = True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._holding or self.stopped_by is not None:
            return
        self.stopped_by = signum
        raise _Stopped(signal.Signals(signum).name)


def _counters(result: Any) -> dict[str, int]:
    """The ``paramine`` counters of a finished run, summed over steps."""
    from apache_beam.metrics.metric import MetricsFilter

    totals: dict[str, int] = {}
    try:
        query = result.metrics().query(MetricsFilter().with_namespace("paramine"))
    except (NotImplementedError, AttributeError):  # some runners report no metrics
        return totals
    for counter in query["counters"]:
        name = counter.key.metric.name
        totals[name] = totals.get(name, 0) + int(counter.committed or counter.attempted or 0)
    return totals


def _summary(manifest: Manifest, output: str, seconds: float) -> str:
    c = manifest.counts
    read = c["read"]["in"]
    lines = [
        f"paramine: mined {output if '://' in output else os.path.abspath(output)}",
        f"  records read        {read:>10,}",
        f"  rejected at read    {sum(c['read']['dropped'].values()):>10,}",
        f"  kept by prefilter   {c['prefilter']['kept']:>10,}",
        f"  in multi-candidate groups {c['group']['kept']:>4,}",
        f"  kept by threshold   {c['threshold']['kept']:>10,}   "
        f"(cut {manifest.threshold.get('value')}, {manifest.threshold.get('mode')})",
        f"  candidates grouped  {c['regroup']['kept']:>10,}",
        f"  pairs made          {c['postfilter']['in']:>10,}",
        f"  pairs written       {manifest.rows['pairs']:>10,}",
        f"  time {seconds:,.1f} s, {read / max(seconds, 1e-9):,.0f} records/s",
    ]
    encoding = manifest.extra.get("encoding", {})
    if encoding:
        lines.append(
            f"  texts encoded       {encoding['texts_encoded']:>10,}   "
            f"({encoding['texts_per_input_pair']:.3f} per input pair, the calibration "
            f"sample's included; {encoding['single_candidate_share']:.1%} of input pairs "
            "had a single-candidate pivot and were never encoded)"
        )
    for stage in manifest.stages or [{"name": name} for name in c if name != "repairs"]:
        name = stage["name"]
        for reason, n in c.get(name, {}).get("dropped", {}).items():
            lines.append(f"    dropped at {name:<10} {reason:<26} {n:>8,}")
    for reason, n in c.get("repairs", {}).items():
        lines.append(f"    repaired and kept     {reason:<26} {n:>8,}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``paramine mine``."""
    run(argv)
    return 0
