"""``paramine mine``: bitext in, a Parquet dataset of paraphrase pairs out.

shards | "MineDataset" (pipelines/mining/: "MineParaphrases", then "WriteDataset")

The launcher is the one place that holds both kinds of settings: what
decides the pairs (``MiningSettings``, all the graph takes) and where and how
the job runs (``RunSettings``: inputs, output, device, deployment), from the
command line, a job file (``--config``) or Python (``mine``).

Everything that can be checked is checked before the pipeline is built and
before anything is written: the settings, Beam's flags and the deployment,
the inputs (they exist and resolve to shards), the output, and the model.

What a run makes it removes again when it does not finish: a failure, a full
disk (one line naming where) or SIGTERM / SIGINT (exit 143 / 130, one line)
leaves no staging folder beside ``--output``, no Beam temp folder, progress
file or run log in TMPDIR, and the old dataset as it was.

The run of the graph itself (the pipeline, SIGTERM and SIGINT, the progress,
Beam's temp folder) is ``run/launch.py``'s ``GraphRun``, which ``paramine
refresh`` runs its job through too; this module keeps what is mine's alone:
the command line, the checks' order, the graph, the staging and the summary.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any, NamedTuple

from paramine.pipelines.run import deploy as dataflow
from paramine.pipelines.settings.job import (
    JobFile,
    parse_command_line,
    read_job_file,
    split_positional_inputs,
)
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import DEFAULT_RUNNER, RunSettings
from paramine.schemas.errors import InputError, RunInterrupted, UnmatchedInput, UsageError
from paramine.schemas.run_parts import RunExtra

if TYPE_CHECKING:  # pyarrow and fsspec load with the run, not with --help
    from paramine.pipelines.run.deploy import Deployment
    from paramine.pipelines.run.output import DatasetOutput
    from paramine.pipelines.run.preflight import CheckedRun
    from paramine.schemas.manifest import Manifest, RunHeader

DEMO_OUTPUT = "paramine-demo"
DEMO_LANGS = ("en", "pl")


def demo_input() -> str:
    """Path of the built-in demo bitext (English-Polish, written for paramine)."""
    return str(resources.files("paramine.pipelines.demo") / "demo.en-pl.tsv")


class MineJob(NamedTuple):
    """One mining job, as the launcher holds it: both kinds of settings and Beam's flags.

    ``job_file``: the job file it was read from, so that an input of the
    file's that matches nothing is named by the file's line; ``overridden``:
    the settings the command line gave over the file's.
    """

    mining: MiningSettings
    running: RunSettings
    beam_args: list[str]
    job_file: JobFile | None = None
    overridden: tuple[str, ...] = ()


class MineRun(NamedTuple):
    """A finished run: the manifest it wrote and its ``paramine`` Beam counters.

    A ``--deploy-dry-run`` writes nothing: ``manifest`` is None, ``counters``
    empty, and ``dry_run`` holds what it printed.
    """

    manifest: Manifest | None
    counters: dict[str, int]
    dry_run: str = ""


def job_from_command_line(argv: Sequence[str]) -> MineJob:
    """Parse ``paramine mine``'s command line (and its ``--config`` file) into a job.

    Positional INPUTs are told apart from the values of Beam's flags by Beam's
    own parser (``--runner DirectRunner``); ``--input`` needs no such care.
    Flags override the job file's values; INPUTs on the command line replace
    its ``inputs``. With no input at all, the built-in demo is mined.

    Raises:
        UsageError: Any bad setting, naming its flag, or the job file's line and key.
        InputError: The job file cannot be read or is not YAML.
    """
    line = parse_command_line(argv)
    positional, beam_args = split_positional_inputs(line.rest)
    job = read_job_file(line.config) if line.config else None
    mining = {**(job.mining if job else {}), **line.mining}
    running = {**(job.running if job else {}), **line.running}
    given_inputs = [*positional, *line.running.get("inputs", ())]
    if given_inputs:
        running["inputs"] = given_inputs
    inputs = list(running.get("inputs", ()))
    if running.get("input_list"):
        inputs += _read_input_list(running["input_list"])
    if not inputs:
        langs = (mining.get("src_lang", "en"), mining.get("tgt_lang", "pl"))
        if langs != DEMO_LANGS:
            raise UsageError(
                "the built-in demo is English-Polish: give an INPUT for other languages"
            )
        inputs = [demo_input()]
        running.setdefault("output", DEMO_OUTPUT)
        print(f"paramine: no INPUT given, mining the built-in demo {inputs[0]}", file=sys.stderr)
    if not running.get("output"):
        raise UsageError("--output is required when an INPUT is given")
    running["inputs"] = inputs
    beam_args = [*(job.beam_args if job else []), *beam_args]
    if not any(a == "--runner" or a.startswith("--runner=") for a in beam_args):
        beam_args.append(f"--runner={DEFAULT_RUNNER}")
    overridden = [*line.mining, *line.running]
    if given_inputs:
        overridden.append("inputs")
    return MineJob(
        _settings(MiningSettings, mining, job, overridden),
        _settings(RunSettings, running, job, overridden),
        beam_args,
        job,
        tuple(overridden),
    )


def _settings(kind: Any, values: dict[str, Any], job: JobFile | None, overridden: list[str]) -> Any:
    """``kind(**values)``; a bad value of the job file's is named by its line and key."""
    try:
        return kind(**values)
    except UsageError as error:
        if job is None:
            raise
        raise job.explain(error, overridden) from None


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
    job = job_from_command_line(sys.argv[1:] if argv is None else argv)
    return run_job(job, test_pipeline).manifest


def mine(
    settings: MiningSettings,
    running: RunSettings,
    beam_args: Sequence[str] = (f"--runner={DEFAULT_RUNNER}",),
) -> MineRun:
    """Mine a dataset: the Python API of ``paramine mine``.

    Args:
        settings: What decides the pairs.
        running: Where and how the job runs; ``inputs`` and ``output`` are required.
        beam_args: Beam's pipeline options, passed through unchanged.
    """
    return run_job(MineJob(settings, running, list(beam_args)))


def run_job(job: MineJob, test_pipeline: Any = None) -> MineRun:
    """Run a mining job.

    Args:
        job: Both kinds of settings and Beam's flags.
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
    if not job.running.inputs:
        raise UsageError("give at least one INPUT (or --input URL)")
    if not job.running.output:
        raise UsageError("--output is required")
    deployment = dataflow.apply(job.running, list(job.beam_args))
    if deployment.running.deploy_dry_run:
        plan = dataflow.describe(deployment)
        print(plan, file=sys.stderr)
        return MineRun(None, {}, plan)

    from paramine.pipelines.run.preflight import check_run, warnings_before_reading

    try:
        checked = check_run(job.mining, deployment.running)
    except UnmatchedInput as error:
        if job.job_file is None:
            raise
        raise job.job_file.explain_input(error, job.overridden) from None
    for warning in warnings_before_reading(job.mining, checked.unchecked):
        print(warning, file=sys.stderr)
    return _launch(job.mining, deployment, checked, test_pipeline)


def _manifest_base(
    settings: MiningSettings, deployment: Deployment, checked: CheckedRun
) -> RunHeader:
    """The manifest's fields that are known before the run: settings, model, inputs, stages."""
    from paramine.pipelines.mining.mine_paraphrases import MINE_STAGES
    from paramine.pipelines.run.header import run_header

    return run_header(
        settings,
        deployment.running,
        model=checked.model_record,
        inputs=checked.input_records,
        stages=MINE_STAGES,
        unchecked=checked.unchecked,
        runner=deployment.runner,
        extra=RunExtra(eval_exclusion={"sentences": len(checked.excluded)}),
    )


def _build(
    pipeline: Any,
    settings: MiningSettings,
    running: RunSettings,
    checked: CheckedRun,
    base: RunHeader,
) -> None:
    """The job's graph, ``MineDataset``: the pairs mined and written into the staging folder."""
    from paramine.pipelines.mining.mine_dataset import MineDataset
    from paramine.pipelines.run.encoder import encoder_for

    # The run writes beside --output, report included; the dataset is
    # swapped in only when complete, and a failed run leaves the old one as it was.
    _ = pipeline | "MineDataset" >> MineDataset(
        settings,
        checked.shards,
        checked.output.staging,
        base,
        encoder=encoder_for(settings, running),
        split_bytes=running.split_bytes,
        write_scored=running.write_scored,
        excluded=checked.excluded,
        num_shards=running.num_shards,
    )


def _launch(
    settings: MiningSettings, deployment: Deployment, checked: CheckedRun, test_pipeline: Any
) -> MineRun:
    """Build, run and publish: the dataset is swapped in whole, or nothing is left behind."""
    from paramine.pipelines.mining.mine_dataset import COMPOSITES
    from paramine.pipelines.report.build import build_report
    from paramine.pipelines.report.timing import run_timing
    from paramine.pipelines.run.launch import GraphRun
    from paramine.pipelines.run.progress import input_bytes
    from paramine.pipelines.run.runner_errors import disk_full_error
    from paramine.schemas.manifest import read_manifest

    running = deployment.running
    base = _manifest_base(settings, deployment, checked)
    start = time.monotonic()
    staging = checked.output
    total = input_bytes(checked.input_records)
    with GraphRun(deployment, total, running.quiet, test_pipeline) as launch:
        try:
            _build(launch.pipeline, settings, running, checked, base)
            if _beam_dry_run(deployment.beam_args):
                return _translate_only(launch.pipeline, staging, deployment.runner)
            with staging.writing():
                result = launch.run()
                seconds = time.monotonic() - start
                build_report(
                    staging.staging,
                    read_manifest(staging.staging),
                    timing=run_timing(seconds, result, COMPOSITES),
                    published_as=staging.target,
                )
                # The dataset is complete: a signal now waits for the swap
                # (two renames) and the run ends as finished.
                launch.hold()
        except BaseException as error:
            if launch.stopped_by is not None:
                # Again, with signals now ignored: the first cleanup may
                # itself have been cut short by the signal.
                with contextlib.suppress(OSError):
                    staging.abandon()
                name = signal.Signals(launch.stopped_by).name
                raise RunInterrupted(
                    f"stopped by {name}; the unfinished dataset was removed and --output "
                    f"{staging.target} is as it was",
                    launch.stopped_by,
                ) from error
            full = disk_full_error(error)
            if full is not None:
                raise staging.disk_full(full) from error
            raise
    manifest = read_manifest(staging.target)
    _print_summary(manifest, staging.target, seconds)
    return MineRun(manifest, _counters(result))


def _translate_only(pipeline: Any, staging: DatasetOutput, runner: str) -> MineRun:
    """Beam's --dry_run: the runner translates the job and submits nothing.

    No dataset will come to wait for, so the staging folder goes at once.
    """
    pipeline.run()
    staging.abandon()
    plan = (
        f"paramine: Beam's --dry_run: the job was translated for {runner} "
        f"and not submitted; nothing was written to {staging.target}"
    )
    print(plan, file=sys.stderr)
    return MineRun(None, {}, plan)


def _print_summary(manifest: Manifest, target: str, seconds: float) -> None:
    """The run's summary on stderr: counts, the second pass's line, the cut's warning."""
    from paramine.pipelines.run.summary import run_summary, second_pass_line

    print(run_summary(manifest, target, seconds), file=sys.stderr)
    second = second_pass_line(target)
    if second:
        print(second, file=sys.stderr)
    if manifest.cut.warning:
        print(f"paramine: warning: {manifest.cut.warning}", file=sys.stderr)


def _beam_dry_run(beam_args: list[str]) -> bool:
    """Whether Beam's own ``--dry_run`` is set (DataflowRunner translates, submits nothing)."""
    from apache_beam.options.pipeline_options import PipelineOptions, TestOptions

    return bool(PipelineOptions(beam_args).view_as(TestOptions).dry_run)


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


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``paramine mine``."""
    run(argv)
    return 0
