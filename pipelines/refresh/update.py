"""One ``paramine refresh``: bring the Delta table up to date with the inputs, as one new version.

The output is a Delta Lake table of pairs (schemas/table.py), with the state
that makes it independent of how the input arrived beside it: every aligned
pair seen so far, per pivot, with its shard and, once scored, its cosine.
One run:

1. **Recover** (table.py). A run stopped between its two commits (pairs,
   then state) left the state one commit behind; the pairs commit recorded
   the state's actions, and they are committed now.
2. **Plan** (plan.py). The inputs resolve to shards, compared with the
   shards the last commit recorded. Nothing new, changed or removed:
   nothing is committed.
3. **Mine** (job.py): the new shards are read, the rows of changed and
   removed shards leave the state, and every pivot whose pairs can change is
   mined again from the union of the old and the new rows; workers write the
   buckets of those pivots as new files.
4. **Commit** the pairs table once: the new files added, the replaced files
   removed, the run's manifest in the commit's metadata; the commit fails if
   another run committed since this one read the table. Then the state
   table, the same way.
5. **Vacuum** files that commits removed more than ``retention_hours`` ago.

docs/refresh.md has the design and its exact semantics.
"""

from __future__ import annotations

import datetime as dt
import json
import signal
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

import fsspec
from deltalake.exceptions import CommitFailedError
from paramine.pipelines.core.accounting import counts_from_rows, encoding_figures
from paramine.pipelines.refresh.affected_pivots import AFFECTED_PIVOTS
from paramine.pipelines.refresh.config import RefreshConfig
from paramine.pipelines.refresh.job import REFRESH_STAGES, RefreshJob, RefreshParaphrases
from paramine.pipelines.refresh.plan import LINE_CHECK_FIGURES, Plan, plan_refresh, shard_key
from paramine.pipelines.refresh.retract_rows import RETRACT_ROWS
from paramine.pipelines.refresh.table import (
    RefreshConflict,
    commit_files,
    delete_run_files,
    ensure_tables,
    file_actions,
    recover,
    relative_path,
    table_files,
    table_rows,
    vacuum,
)
from paramine.pipelines.run import deploy
from paramine.pipelines.run.encoder import encoder_for
from paramine.pipelines.run.header import run_header
from paramine.pipelines.run.launch import GraphRun
from paramine.pipelines.run.preflight import (
    check_inputs,
    check_model,
    unchecked_languages,
    warnings_before_reading,
)
from paramine.pipelines.run.progress import input_bytes
from paramine.pipelines.stages.filter.prefilter import PREFILTER
from paramine.pipelines.stages.filter.rules.line_check_record import summary_lines
from paramine.pipelines.stages.filter.rules.line_checks import with_earlier
from paramine.pipelines.stages.read.read_bitext import READ_BITEXT
from paramine.schemas.errors import AccountingError, RunInterrupted
from paramine.schemas.manifest import Manifest
from paramine.schemas.run_counts import LINE_CHECKS, RunCounts
from paramine.schemas.run_parts import InputRecord, ModelRecord, RunExtra
from paramine.schemas.stages import accounting_errors as stage_accounting_errors
from paramine.schemas.table import (
    PAIRS_TABLE_SCHEMA,
    REJECTS_DIR,
    RUNS_DIR,
    STATE_SCHEMA,
    is_table,
    latest_record,
    open_table,
    state_url,
)
from paramine.schemas.written import RejectCounts, WrittenFiles, WrittenRows


@dataclass
class RefreshResult:
    """What a refresh did."""

    version: int | None
    plan: Plan
    manifest: Manifest | None

    @property
    def noop(self) -> bool:
        """Nothing was new: nothing was committed."""
        return self.version is None


@dataclass(frozen=True)
class _Run:
    """One run that mines: its id, its Beam job, and the table versions it read."""

    run_id: str
    job: RefreshJob
    pairs_table: Any
    state_table: Any
    started: float

    @property
    def folder(self) -> str:
        """Where its workers leave the run's summary (``_paramine/runs/<run>``)."""
        return f"{self.job.root}/{RUNS_DIR}/{self.run_id}"


@dataclass(frozen=True)
class _Found:
    """What the checks before the run found, for the manifest: model, unchecked, runner."""

    model: ModelRecord
    unchecked: dict[str, list[str]]
    runner: str


@dataclass(frozen=True)
class _Commits:
    """What a run commits: the actions on both tables, and its manifest."""

    pair_actions: dict[str, list[dict[str, Any]]]
    state_actions: dict[str, list[dict[str, Any]]]
    manifest: Manifest
    #: The pairs commit's paramine record: the manifest, the shards, and the
    #: state's actions with the version they apply to (for ``recover``).
    record: dict[str, Any]


def refresh(
    config: RefreshConfig, dry_run: bool = False, log: Any = None, mine_all: bool = False
) -> RefreshResult:
    """Run one refresh: recover, plan, mine, commit the pairs then the state, vacuum.

    Args:
        config: The refresh config.
        dry_run: Print the plan and stop.
        log: Where progress lines go; stderr by default.
        mine_all: Mine every shard again (``plan_refresh``).

    Raises:
        RefreshConflict: Another refresh committed while this one ran; this
            run's files are deleted and nothing of it is committed.
        RunInterrupted: SIGTERM or SIGINT stopped the run before its pairs
            were committed: nothing of it is committed (a signal that arrives
            later waits for the run to end).
    """
    out = log or sys.stderr
    root = config.output
    recover(root, out)
    plan, buckets = _plan(config, mine_all)
    print("\n".join(plan.describe()), file=out)
    if plan.nothing_to_do:
        return RefreshResult(None, plan, None)
    # What paramine mine says before it reads, said of the shards to mine.
    unchecked = unchecked_languages(config.mining, plan.to_mine)
    for warning in warnings_before_reading(config.mining, unchecked):
        print(warning, file=out)
    if dry_run:
        print("paramine refresh: dry run, nothing mined or committed", file=out)
        return RefreshResult(None, plan, None)
    model_record = check_model(config.mining)
    deployment = deploy.apply(config.running, list(config.beam_args))

    run = _start(root, plan, buckets)
    print(f"paramine refresh: run {run.run_id}: mining {len(plan.to_mine)} shard(s)", file=out)
    written: list[str] = []
    total = input_bytes(
        InputRecord.read(plan.shards[key]) for key in plan.reasons if key in plan.shards
    )
    with GraphRun(deployment, total, config.running.quiet, stream=log) as launch:
        try:
            summary = _mine(config, run.job, launch)
            written = [*summary["files"]["pairs"], *summary["files"]["state"]]
            found = _Found(model_record, unchecked, deployment.runner)
            commits = _prepare_commits(config, plan, run, summary, found)
            # From the pairs' commit on, a signal waits for the run to end:
            # files a commit references must not be deleted.
            launch.hold()
            version = commit_files(
                run.pairs_table, PAIRS_TABLE_SCHEMA, commits.pair_actions, commits.record
            )
        except CommitFailedError:
            delete_run_files([*written, run.folder, run.job.rejects_dir])
            raise RefreshConflict(
                f"{root}: another refresh committed while this one (run {run.run_id}) ran, so "
                "its result is out of date; nothing of it was committed and its files were "
                "deleted. Run paramine refresh again"
            ) from None
        except BaseException as error:
            # Uncommitted files are invisible to readers; vacuum removes them
            # if this process cannot.
            delete_run_files([*written, run.folder])
            if launch.stopped_by is not None:
                name = signal.Signals(launch.stopped_by).name
                raise RunInterrupted(
                    f"stopped by {name}; nothing of run {run.run_id} was committed and the "
                    f"table at {root} is as it was (files the run wrote are in no commit; "
                    "vacuum removes them)",
                    launch.stopped_by,
                ) from error
            raise
        # The run is committed. If it stops before the state commit, the next
        # run's recover() makes that commit from the record just written.
        commit_files(run.state_table, STATE_SCHEMA, commits.state_actions, {"run_id": run.run_id})
    delete_run_files([run.folder])
    vacuumed = vacuum(root, config.retention_hours)
    print("\n".join(_committed_lines(version, commits, vacuumed)), file=out)
    return RefreshResult(version, plan, commits.manifest)


def _plan(config: RefreshConfig, mine_all: bool) -> tuple[Plan, int]:
    """The plan against the table's last commit, and the table's buckets."""
    shards, _ = check_inputs(config.mining, config.running)
    root = config.output
    found = latest_record(open_table(root)) if is_table(root) else None
    # A table keeps the buckets it was created with.
    buckets = found[1]["buckets"] if found is not None else config.buckets
    return plan_refresh(config, shards, found, mine_all), buckets


def _start(root: str, plan: Plan, buckets: int) -> _Run:
    """Create the tables if needed, read their current versions, and describe the Beam job."""
    ensure_tables(root, buckets)
    pairs_table = open_table(root)
    state_table = open_table(state_url(root))
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    run_id = f"{stamp}-{uuid.uuid4().hex[:8]}"
    job = RefreshJob(
        root=root,
        run_id=run_id,
        buckets=buckets,
        shards=tuple(plan.to_mine),
        retracted=plan.retracted_urls,
        state_files=tuple(table_files(state_table, state_url(root))),
        pair_files=tuple(table_files(pairs_table, root)),
        state_dir=state_url(root),
        rejects_dir=f"{root}/{REJECTS_DIR}/{run_id}",
        summary_url=f"{root}/{RUNS_DIR}/{run_id}/summary.json",
        earlier_figures=tuple(sorted(plan.earlier_figures.items())),
    )
    return _Run(run_id, job, pairs_table, state_table, time.monotonic())


def _mine(config: RefreshConfig, job: RefreshJob, launch: GraphRun) -> dict[str, Any]:
    """Run the Beam job; return the summary its workers wrote (files, counts, threshold)."""
    running = launch.deployment.running
    _ = launch.pipeline | "RefreshParaphrases" >> RefreshParaphrases(
        config.mining,
        job,
        encoder=encoder_for(config.mining, running),
        split_bytes=running.split_bytes,
    )
    launch.run()
    with fsspec.open(job.summary_url, "r", encoding="utf-8") as handle:
        summary: dict[str, Any] = json.load(handle)
    return summary


def _checked_counts(summary: dict[str, Any]) -> RunCounts:
    """The run's counts, once their accounting identities hold.

    Raises:
        AccountingError: Rows were lost or counted twice; nothing is committed.
    """
    counts = counts_from_rows([tuple(row) for row in summary["counts"]])
    errors = stage_accounting_errors(counts, REFRESH_STAGES)
    affected, prefilter, state = AFFECTED_PIVOTS.name, PREFILTER.name, RETRACT_ROWS.name
    taken = counts.stage(affected).taken_in
    came = counts.stage(prefilter).kept + counts.stage(state).kept
    if taken != came:
        errors.append(
            f"{affected} took in {taken} rows but {prefilter} and {state} kept {came} together"
        )
    if errors:
        raise AccountingError(
            "the counts of this refresh do not add up; nothing was "
            "committed:\n  " + "\n  ".join(errors)
        )
    return counts


def _prepare_commits(
    config: RefreshConfig,
    plan: Plan,
    run: _Run,
    summary: dict[str, Any],
    found: _Found,
) -> _Commits:
    """The actions of both commits and the manifest of the new version."""
    counts = _checked_counts(summary)
    root = config.output
    pair_actions = file_actions(run.pairs_table, root, summary["files"]["pairs"])
    state_actions = file_actions(run.state_table, state_url(root), summary["files"]["state"])
    manifest = _manifest(config, plan, run, summary, counts, pair_actions, found)
    record = {
        "run_id": run.run_id,
        "manifest": manifest.to_record(),
        "shards": plan.shards,
        "config_fingerprint": config.fingerprint(),
        # What the next run's decisions about each side count (Plan.earlier_figures).
        LINE_CHECK_FIGURES: with_earlier(counts.note(LINE_CHECKS), plan.earlier_figures),
        "buckets": run.job.buckets,
        "state": {"base_version": run.state_table.version(), "actions": state_actions},
    }
    return _Commits(pair_actions, state_actions, manifest, record)


def _manifest(
    config: RefreshConfig,
    plan: Plan,
    run: _Run,
    summary: dict[str, Any],
    counts: RunCounts,
    pair_actions: dict[str, list[dict[str, Any]]],
    found: _Found,
) -> Manifest:
    """The manifest of the version this run commits: its counts, rows and what it mined."""
    added = sum(a["rows"] for a in pair_actions["add"])
    removed = sum(r["rows"] for r in pair_actions["remove"])
    refresh = {
        "beam_args": config.beam_args,
        "buckets": run.job.buckets,
        "retention_hours": config.retention_hours,
    }
    header = run_header(
        config.mining,
        config.running,
        model=found.model,
        inputs=[InputRecord.read(plan.shards[k]) for k in sorted(plan.shards)],
        stages=REFRESH_STAGES,
        unchecked=found.unchecked,
        runner=found.runner,
        options_extra={"refresh": refresh},
        extra=RunExtra(line_checks=summary.get("line_checks") or None),
    )
    return header.manifest(
        threshold=summary["threshold"],
        counts=counts,
        files=WrittenFiles(
            rejects=tuple(relative_path(config.output, f) for f in summary["rejects"]["files"])
        ),
        rows=WrittenRows(
            pairs=table_rows(run.pairs_table) - removed + added,
            pair_rows_removed=removed,
            pair_rows_added=added,
            rejects=sum(summary["rejects"]["written"].values()),
        ),
        rejects=RejectCounts(
            counted=dict(counts.stage(READ_BITEXT.name).dropped),
            written=dict(summary["rejects"]["written"]),
        ),
        extra=RunExtra(
            encoding=encoding_figures(counts, [stage.name for stage in REFRESH_STAGES]),
            refresh={
                "run_id": run.run_id,
                "previous": plan.previous,
                "mined": sorted(shard_key(s.files) for s in plan.to_mine),
                "reasons": plan.reasons,
                "retracted": plan.retracted,
                "removed": plan.removed,
                "seconds": round(time.monotonic() - run.started, 1),
            },
        ),
    )


def _committed_lines(version: int, commits: _Commits, vacuumed: int) -> list[str]:
    """What a refresh ends with: the new version and what it changed, then its per-line checks."""
    rows = commits.manifest.rows
    return [
        f"paramine refresh: committed version {version}: {rows.pairs:,} pairs "
        f"({rows.pair_rows_added or 0:,} rows written in {len(commits.pair_actions['add'])} "
        f"bucket file(s), {rows.pair_rows_removed or 0:,} replaced); cut "
        f"{commits.manifest.cut.value}"
        + (f"; vacuumed {vacuumed} old file(s)" if vacuumed else ""),
        *summary_lines(commits.manifest.line_checks),
    ]
