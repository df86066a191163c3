"""``paramine refresh CONFIG``: keep a paraphrase dataset current as bitext arrives, on Delta Lake.

The output is a Delta Lake table of pairs (schemas/table.py), with the state
that makes it independent of how the input arrived beside it: every aligned
pair seen so far, per pivot, with its shard and, once scored, its cosine.
One run:

1. **Recover.** A run killed between its two commits (pairs, then state)
   left the state one commit behind; the pairs commit recorded the state's
   actions, and they are committed now.
2. **Plan.** The inputs resolve to shards; each is fingerprinted and compared
   with the shards the last commit recorded: new, changed, removed or
   unchanged. Nothing new, changed or removed: nothing is committed.
3. **Mine** (pipelines/refresh/job.py): the new shards are read, the rows of
   changed and removed shards leave the state, and every pivot whose pairs
   can change is mined again from the union of the old and the new rows;
   workers write the buckets of those pivots as new files.
4. **Commit** the pairs table once: the new files added, the replaced files
   removed, the run's manifest in the commit's metadata; the commit fails if
   another run committed since this one read the table. Then the state
   table, the same way.
5. **Vacuum** files that commits removed more than ``retention_hours`` ago.

docs/refresh.md has the design and its exact semantics.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import posixpath
import signal
import sys
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from paramine.pipelines.core.accounting import counts_from_rows
from paramine.pipelines.formats import Shard
from paramine.pipelines.run.config import DEFAULT_MODEL, DEFAULT_RUNNER, MineConfig
from paramine.pipelines.run.input_fingerprint import fingerprint
from paramine.schemas.digest import text_digest
from paramine.schemas.errors import (
    AccountingError,
    DatasetError,
    InputError,
    OutputError,
    UsageError,
)
from paramine.schemas.manifest import Manifest
from paramine.schemas.stages import accounting_errors as stage_accounting_errors
from paramine.schemas.table import (
    BUCKET,
    COMMIT_KEY,
    PAIRS_TABLE_SCHEMA,
    REJECTS_DIR,
    RUNS_DIR,
    STATE_SCHEMA,
    TableFile,
    commits,
    is_table,
    latest_record,
    open_table,
    state_url,
)

CONFIG_KEYS = (
    "output",
    "inputs",
    "src_lang",
    "tgt_lang",
    "model",
    "options",
    "beam_args",
    "buckets",
    "retention_hours",
)
#: Settings that refresh owns: a version's inputs and output are not the user's to set.
RESERVED_OPTIONS = ("output", "overwrite", "inputs", "input_list", "src_lang", "tgt_lang", "model")
#: Buckets of a new table: a refresh rewrites the buckets of the pivots it
#: touches, so more buckets make small refreshes of big tables cheaper.
DEFAULT_BUCKETS = 32
#: Files that a commit removed are deleted this long after (Delta's own
#: default): a reader or time travel within it still finds them.
DEFAULT_RETENTION_HOURS = 168
#: Settings that say where or how a job runs, not which pairs it writes: changing them
#: re-mines nothing. (A GPU encodes in fp16, which moves cosines by ~1e-3;
#: each batch records the model and threshold it was mined with.)
RUN_SETTINGS = (
    "gpu_type",
    "gpu_count",
    "gpu_mode",
    "worker_image",
    "disk_size_gb",
    "deploy_dry_run",
    "share_model_across_processes",
    "device",
    "batch_tokens",
    "num_shards",
    "write_scored",
)


@dataclass(frozen=True)
class RefreshConfig:
    """What a scheduled refresh mines, how, and where it commits versions.

    Attributes:
        output: The table's root (a local path, ``gs://``, ``s3://``): the pairs
            table, with the state under ``_paramine/``.
        inputs: Files, globs, directories or Moses prefixes, as for ``mine``.
        src_lang: Pivot language.
        tgt_lang: Candidate language.
        model: The encoder, as ``mine --model``.
        options: Other ``paramine mine`` flags, ``{flag: value}`` without the
            dashes; ``true`` for a switch.
        beam_args: Beam and deployment flags passed through unchanged, e.g.
            ``--runner=DataflowRunner``.
        buckets: Buckets of a new table (fixed once the table exists).
        retention_hours: How long files that a commit removed are kept for
            readers and time travel before the refresh's vacuum deletes them.
    """

    output: str
    inputs: list[str]
    src_lang: str = "en"
    tgt_lang: str = "pl"
    model: str = DEFAULT_MODEL
    options: dict[str, Any] = field(default_factory=dict)
    beam_args: list[str] = field(default_factory=lambda: [f"--runner={DEFAULT_RUNNER}"])
    buckets: int = DEFAULT_BUCKETS
    retention_hours: int = DEFAULT_RETENTION_HOURS
    #: Every mining setting, checked by ``MineConfig`` itself; built from the above.
    mine: MineConfig = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        settings = {str(k).lstrip("-").replace("-", "_"): v for k, v in self.options.items()}
        reserved = sorted(set(settings) & set(RESERVED_OPTIONS))
        if reserved:
            raise UsageError(
                f"options {reserved} are set by refresh itself; use the top-level keys "
                "output, inputs, src_lang, tgt_lang and model"
            )
        mine = MineConfig.from_mapping(
            {
                **settings,
                "inputs": list(self.inputs),
                "src_lang": self.src_lang,
                "tgt_lang": self.tgt_lang,
                "model": self.model,
            },
            source="refresh options",
        )
        object.__setattr__(self, "mine", mine)

    def mine_settings(self) -> dict[str, Any]:
        """The settings that decide what a shard yields (no inputs, no output, no deployment)."""
        record = self.mine.to_record()
        for name in ("inputs", "input_list", "output", "overwrite", *RUN_SETTINGS):
            record.pop(name, None)
        return record

    def fingerprint(self) -> str:
        """A hash of the mining settings: when it changes every shard is re-mined.

        The runner and deployment settings are left out: they change where a
        job runs, not the rows it writes (the pipeline is deterministic).
        """
        return text_digest(json.dumps(self.mine_settings(), sort_keys=True))


def _absolute(url: str) -> str:
    """Make local paths absolute, so shard keys match whatever the working directory."""
    if "://" in url:
        return url
    return os.path.abspath(url)


def load_config(path: str) -> RefreshConfig:
    """Read and check a refresh config (YAML).

    Relative local paths are taken from the current directory, as on the
    ``paramine mine`` command line.

    Raises:
        UsageError: A key is unknown, a required key is missing, or a value
            has the wrong type; the message names the file and the key.
    """
    with fsspec.open(path, "r", encoding="utf-8") as f:
        data = yaml.safe_load(f)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a refresh config is a YAML mapping with keys {CONFIG_KEYS}")
    unknown = sorted(set(data) - set(CONFIG_KEYS))
    if unknown:
        raise UsageError(f"{path}: unknown keys {unknown}; allowed: {', '.join(CONFIG_KEYS)}")
    for key in ("output", "inputs"):
        if not data.get(key):
            raise UsageError(f"{path}: {key!r} is required")
    inputs = data["inputs"]
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
        raise UsageError(f"{path}: 'inputs' must be a list of paths or URLs")
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise UsageError(f"{path}: 'options' must be a mapping of mine flags to values")
    beam_args = data.get("beam_args", [f"--runner={DEFAULT_RUNNER}"])
    if not isinstance(beam_args, list) or not all(isinstance(a, str) for a in beam_args):
        raise UsageError(f"{path}: 'beam_args' must be a list of strings such as --runner=...")
    numbers = {}
    for key, default in (
        ("buckets", DEFAULT_BUCKETS),
        ("retention_hours", DEFAULT_RETENTION_HOURS),
    ):
        value = data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UsageError(f"{path}: {key!r} must be a positive integer, got {value!r}")
        numbers[key] = value
    try:
        return RefreshConfig(
            output=_absolute(str(data["output"])).rstrip("/"),
            inputs=[_absolute(i) for i in inputs],
            src_lang=str(data.get("src_lang", "en")),
            tgt_lang=str(data.get("tgt_lang", "pl")),
            model=_absolute(str(data["model"]))
            if data.get("model") and os.path.isdir(str(data["model"]))
            else str(data.get("model", DEFAULT_MODEL)),
            options=options,
            beam_args=list(beam_args),
            **numbers,
        )
    except UsageError as error:
        raise UsageError(f"{path}: {error}") from None


# Shards and their fingerprints


def shard_key(files: Iterable[str]) -> str:
    """The identity of a shard across runs: its files, in order."""
    return " + ".join(files)


def same_content(old: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> bool:
    """Whether two fingerprint lists describe the same bytes.

    A checksum or etag, where both sides have one, decides; it survives a copy
    that changes the mtime. Otherwise size and mtime must both match (what
    ``make`` trusts for local files).
    """
    if len(old) != len(new):
        return False
    for a, b in zip(old, new, strict=True):
        if a.get("size") != b.get("size"):
            return False
        if a.get("checksum") and b.get("checksum"):
            if a["checksum"] != b["checksum"]:
                return False
        elif a.get("mtime") != b.get("mtime"):
            return False
    return True


# Plans


@dataclass
class Plan:
    """What a refresh does.

    Attributes:
        previous: The pairs table version of the last paramine commit, or
            ``None`` when the table has none yet.
        to_mine: Shards to mine in this run.
        reasons: Why each shard is mined, by shard key: ``new``, ``changed``
            or ``settings changed``.
        retracted: Shard keys whose rows leave the state (changed or removed).
        removed: Keys of shards that are no longer among the inputs.
        shards: The shards the table holds after this run: key -> record
            (``url``, ``format``, ``corpus``, ``files`` fingerprints).
    """

    previous: int | None
    to_mine: list[Shard]
    reasons: dict[str, str]
    retracted: list[str]
    removed: list[str]
    shards: dict[str, dict[str, Any]]
    #: ``AlignedPair.shard`` of the retracted shards' rows.
    retracted_urls: frozenset[str] = frozenset()

    @property
    def nothing_to_do(self) -> bool:
        """Nothing to mine and nothing to retract: the table is current."""
        return self.previous is not None and not self.to_mine and not self.retracted


def shard_record(shard: Shard) -> dict[str, Any]:
    """What a commit records of a shard: enough to spot a change and to retract its rows."""
    return {
        "url": shard.url,
        "format": shard.format,
        "corpus": shard.corpus,
        "files": [fingerprint(f) for f in shard.files],
    }


def plan_refresh(
    config: RefreshConfig, shards: list[Shard], previous: tuple[int, dict[str, Any]] | None
) -> Plan:
    """Compare the shards with the last commit's and decide what to mine and retract.

    Args:
        config: The refresh config.
        shards: The shards the inputs resolve to now.
        previous: The version and paramine record of the last commit, if any.
    """
    now = {shard_key(s.files): (s, shard_record(s)) for s in shards}
    records = {key: record for key, (_, record) in now.items()}
    if previous is None:
        return Plan(None, list(shards), {k: "new" for k in now}, [], [], records)
    version, record = previous
    before: dict[str, dict[str, Any]] = record.get("shards", {})
    if record.get("config_fingerprint") != config.fingerprint():
        urls = frozenset(r["url"] for r in before.values())
        reasons = {k: "settings changed" for k in now}
        return Plan(version, list(shards), reasons, sorted(before), [], records, urls)
    reasons = {}
    for key, (_shard, current) in now.items():
        if key not in before:
            reasons[key] = "new"
        elif not same_content(before[key]["files"], current["files"]):
            reasons[key] = "changed"
    removed = sorted(set(before) - set(now))
    retracted = sorted([k for k, why in reasons.items() if why == "changed"] + removed)
    urls = frozenset(before[k]["url"] for k in retracted)
    to_mine = [shard for key, (shard, _) in now.items() if key in reasons]
    return Plan(version, to_mine, reasons, retracted, removed, records, urls)


# Tables and commits


def _relative(root: str, url: str) -> str:
    return posixpath.relpath(url, root) if "://" not in url else url[len(root.rstrip("/")) + 1 :]


def _checkpoint(name: str) -> None:
    """Where a test may kill the run: ``PARAMINE_REFRESH_KILL_AT=<name>`` (tests/pipelines)."""
    if os.environ.get("PARAMINE_REFRESH_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


class RefreshConflict(OutputError):
    """Another refresh committed to the table while this one ran."""


def ensure_tables(root: str, buckets: int) -> None:
    """Create the pairs and state tables if they do not exist yet (an empty version 0)."""
    from deltalake import DeltaTable

    for url, schema, name in (
        (root, PAIRS_TABLE_SCHEMA, "paramine pairs"),
        (state_url(root), STATE_SCHEMA, "paramine state"),
    ):
        if not is_table(url):
            DeltaTable.create(
                url,
                schema=schema,
                partition_by=[BUCKET],
                name=name,
                configuration={"delta.dataSkippingNumIndexedCols": "0"},
            )


def table_files(table: Any, base: str) -> list[TableFile]:
    """The data files of a table version with their buckets."""
    actions = pa.table(table.get_add_actions(flatten=True)).to_pydict()
    return [
        TableFile(f"{base.rstrip('/')}/{path}", int(bucket))
        for path, bucket in zip(actions["path"], actions[f"partition.{BUCKET}"], strict=True)
    ]


def file_actions(table: Any, base: str, written: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The commit of a rewrite: the written files added, the touched buckets' old files removed.

    Every touched bucket has one written file (empty if the bucket emptied);
    empty files are not added, which removes the bucket's rows.
    """
    touched = set()
    adds = []
    for url in written:
        fs, path = fsspec.core.url_to_fs(url)
        info = fs.info(path)
        with fs.open(path, "rb") as handle:
            rows = pq.ParquetFile(handle).metadata.num_rows
        bucket = int(posixpath.basename(posixpath.dirname(path)).split("=", 1)[1])
        touched.add(bucket)
        if rows:
            adds.append(
                {
                    "path": _relative(base, url),
                    "size": int(info["size"]),
                    "rows": rows,
                    "bucket": bucket,
                }
            )
    old = pa.table(table.get_add_actions(flatten=True)).to_pydict()
    removes = [
        {"path": path, "size": int(size), "bucket": int(bucket), "rows": int(rows or 0)}
        for path, size, bucket, rows in zip(
            old["path"],
            old["size_bytes"],
            old[f"partition.{BUCKET}"],
            old["num_records"],
            strict=True,
        )
        if int(bucket) in touched
    ]
    return {"add": adds, "remove": removes}


def commit_files(
    table: Any, schema: pa.Schema, actions: dict[str, list[dict[str, Any]]], record: dict[str, Any]
) -> int:
    """Commit adds and removes as one transaction on top of the version ``table`` was read at.

    Raises:
        deltalake.exceptions.CommitFailedError: The table moved on since.
    """
    from deltalake.transaction import AddAction, CommitProperties, RemoveAction

    now = int(time.time() * 1000)
    entries: list[Any] = [
        RemoveAction(
            path=r["path"],
            data_change=True,
            deletion_timestamp=now,
            size=r["size"],
            partition_values={BUCKET: str(r["bucket"])},
        )
        for r in actions["remove"]
    ]
    entries += [
        AddAction(
            path=a["path"],
            size=a["size"],
            partition_values={BUCKET: str(a["bucket"])},
            modification_time=now,
            data_change=True,
            stats=json.dumps({"numRecords": a["rows"]}),
        )
        for a in actions["add"]
    ]
    table.create_write_transaction(
        entries,
        mode="append",
        schema=schema,
        partition_by=[BUCKET],
        # No retry on top of a newer version: this run's rows were computed
        # from the version it read (docs/refresh.md, "Concurrent runs").
        commit_properties=CommitProperties(
            custom_metadata={COMMIT_KEY: json.dumps(record, sort_keys=True)},
            max_commit_retries=0,
        ),
    )
    table.update_incremental()
    return int(table.version())


def recover(root: str, log: Any = None) -> bool:
    """Finish a run killed between its pairs commit and its state commit.

    The pairs commit is the run's commit: it records the state table's
    actions and the version they apply to. If the state table's last
    paramine commit is not that run's, those actions are committed now.

    Returns:
        Whether the state had to be rolled forward.

    Raises:
        DatasetError: The state table moved in a way paramine did not make.
    """
    if not is_table(root):
        return False
    found = latest_record(open_table(root))
    if found is None:
        return False
    _, record = found
    state = open_table(state_url(root))
    done = latest_record(state)
    if done is not None and done[1].get("run_id") == record["run_id"]:
        return False
    pending = record["state"]
    if state.version() != pending["base_version"]:
        raise DatasetError(
            f"{state_url(root)} is at version {state.version()}, but the last pairs commit "
            f"(run {record['run_id']}) expects state version {pending['base_version']}; "
            "the state was changed outside paramine refresh"
        )
    commit_files(state, STATE_SCHEMA, pending["actions"], {"run_id": record["run_id"]})
    print(
        f"paramine refresh: finished the state commit of run {record['run_id']}, "
        "which was stopped after its pairs commit",
        file=log or sys.stderr,
    )
    return True


def _delete(urls: Iterable[str]) -> None:
    for url in urls:
        fs, path = fsspec.core.url_to_fs(url)
        if fs.exists(path):
            fs.rm(path, recursive=True)


# One refresh


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


def _describe(plan: Plan) -> list[str]:
    previous = "none (first run)" if plan.previous is None else f"version {plan.previous}"
    lines = [f"paramine refresh: last commit {previous}"]
    tally: dict[str, int] = {}
    for reason in plan.reasons.values():
        tally[reason] = tally.get(reason, 0) + 1
    summary = ", ".join(f"{n} {reason}" for reason, n in sorted(tally.items()))
    lines.append(f"  shards to mine: {len(plan.to_mine)}" + (f" ({summary})" if summary else ""))
    if plan.retracted:
        lines.append(
            f"  shards retracted: {len(plan.retracted)} ({len(plan.removed)} no longer among "
            "the inputs)"
        )
    for shard in plan.to_mine:
        lines.append(
            f"    mine     {shard_key(shard.files)}  ({plan.reasons[shard_key(shard.files)]})"
        )
    for key in plan.removed:
        lines.append(f"    retract  {key}  (removed)")
    return lines


def _counts(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    from paramine.pipelines.refresh.launch.job import REFRESH_STAGES

    counts = counts_from_rows([tuple(row) for row in summary["counts"]])
    errors = stage_accounting_errors(counts, REFRESH_STAGES)
    taken = counts["affected"]["in"]
    came = counts["prefilter"]["kept"] + counts["state"]["kept"]
    if taken != came:
        errors.append(f"affected took in {taken} rows but prefilter and state kept {came} together")
    if errors:
        raise AccountingError(
            "the counts of this refresh do not add up; nothing was "
            "committed:\n  " + "\n  ".join(errors)
        )
    return counts


def refresh(
    config: RefreshConfig,
    dry_run: bool = False,
    log: Any = None,
    before_commit: Any = None,
) -> RefreshResult:
    """Run one refresh: recover, plan, mine, commit the pairs then the state, vacuum.

    Args:
        config: The refresh config.
        dry_run: Print the plan and stop.
        log: Where progress lines go; stderr by default.
        before_commit: Called right before the pairs commit (tests: a second
            refresh that wins the race).

    Raises:
        RefreshConflict: Another refresh committed while this one ran; this
            run's files are deleted and nothing of it is committed.
    """
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    from deltalake.exceptions import CommitFailedError
    from paramine.pipelines.refresh.launch.job import REFRESH_STAGES, RefreshJob, RefreshParaphrases
    from paramine.pipelines.run import deploy as dataflow
    from paramine.pipelines.run import mine
    from paramine.pipelines.run.preflight import check_inputs, check_model
    from paramine.pipelines.stages.write_dataset import encoding_figures

    out = log or sys.stderr
    root = config.output
    recover(root, out)
    shards, _ = check_inputs(config.mine)
    pairs_table = open_table(root) if is_table(root) else None
    found = latest_record(pairs_table) if pairs_table is not None else None
    plan = plan_refresh(config, shards, found)
    for line in _describe(plan):
        print(line, file=out)
    if plan.nothing_to_do:
        print(
            f"paramine refresh: nothing new since version {plan.previous}; nothing committed",
            file=out,
        )
        return RefreshResult(None, plan, None)
    if dry_run:
        print("paramine refresh: dry run, nothing mined or committed", file=out)
        return RefreshResult(None, plan, None)
    buckets = found[1]["buckets"] if found is not None else config.buckets
    model_record = check_model(config.mine)
    deployment = dataflow.apply(config.mine.replace(output=root), list(config.beam_args))

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
    )
    print(f"paramine refresh: run {run_id}: mining {len(plan.to_mine)} shard(s)", file=out)
    _checkpoint("planned")
    start = time.monotonic()
    written: list[str] = []
    try:
        pipeline = beam.Pipeline(options=PipelineOptions(deployment.beam_args))
        _ = pipeline | "RefreshParaphrases" >> RefreshParaphrases(deployment.config, job)
        pipeline.run().wait_until_finish()
        with fsspec.open(job.summary_url, "r", encoding="utf-8") as handle:
            summary = json.load(handle)
        written = [*summary["files"]["pairs"], *summary["files"]["state"]]
        _checkpoint("written")
        counts = _counts(summary)
        pair_actions = file_actions(pairs_table, root, summary["files"]["pairs"])
        state_actions = file_actions(state_table, state_url(root), summary["files"]["state"])
        rows_before = sum(
            int(n or 0)
            for n in pa.table(pairs_table.get_add_actions(flatten=True))
            .column("num_records")
            .to_pylist()
        )
        added = sum(a["rows"] for a in pair_actions["add"])
        removed = sum(r["rows"] for r in pair_actions["remove"])
        manifest = Manifest(
            created_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            code_version=mine.code_version(),
            options={
                **config.mine.to_record(),
                "refresh": {
                    "beam_args": config.beam_args,
                    "buckets": buckets,
                    "retention_hours": config.retention_hours,
                },
                "runner": deployment.runner,
            },
            model=model_record,
            threshold=summary["threshold"],
            inputs=[plan.shards[k] for k in sorted(plan.shards)],
            counts=counts,
            files={"rejects": [_relative(root, f) for f in summary["rejects"]["files"]]},
            rows={
                "pairs": rows_before - removed + added,
                "pair_rows_removed": removed,
                "pair_rows_added": added,
                "rejects": sum(summary["rejects"]["written"].values()),
            },
            rejects={
                "counted": dict(counts["read"]["dropped"]),
                "written": summary["rejects"]["written"],
            },
            stages=[stage.to_record() for stage in REFRESH_STAGES],
            extra={
                "encoding": encoding_figures(counts),
                "refresh": {
                    "run_id": run_id,
                    "previous": plan.previous,
                    "mined": sorted(shard_key(s.files) for s in plan.to_mine),
                    "reasons": plan.reasons,
                    "retracted": plan.retracted,
                    "removed": plan.removed,
                    "seconds": round(time.monotonic() - start, 1),
                },
            },
        )
        record = {
            "run_id": run_id,
            "manifest": dataclasses.asdict(manifest),
            "shards": plan.shards,
            "config_fingerprint": config.fingerprint(),
            "buckets": buckets,
            "state": {"base_version": state_table.version(), "actions": state_actions},
        }
        if before_commit is not None:
            before_commit()
        version = commit_files(pairs_table, PAIRS_TABLE_SCHEMA, pair_actions, record)
    except CommitFailedError:
        _delete([*written, f"{root}/{RUNS_DIR}/{run_id}", job.rejects_dir])
        raise RefreshConflict(
            f"{root}: another refresh committed while this one (run {run_id}) ran, so its "
            "result is out of date; nothing of it was committed and its files were deleted. "
            "Run paramine refresh again"
        ) from None
    except BaseException:
        # Uncommitted files are invisible to readers; vacuum removes them
        # if this process cannot.
        _delete([*written, f"{root}/{RUNS_DIR}/{run_id}"])
        raise
    _checkpoint("pairs-committed")
    commit_files(state_table, STATE_SCHEMA, state_actions, {"run_id": run_id})
    _checkpoint("committed")
    _delete([f"{root}/{RUNS_DIR}/{run_id}"])
    vacuumed = vacuum(root, config.retention_hours)
    print(
        f"paramine refresh: committed version {version}: {manifest.rows['pairs']:,} pairs "
        f"({added:,} rows written in {len(pair_actions['add'])} bucket file(s), {removed:,} "
        f"replaced); cut {manifest.threshold.get('value')}"
        + (f"; vacuumed {vacuumed} old file(s)" if vacuumed else ""),
        file=out,
    )
    return RefreshResult(version, plan, manifest)


# Maintenance and history


def _modified(fs: Any, path: str) -> float:
    """The newest modification time (epoch seconds) of a file or anything in a folder."""
    times = [fs.modified(p).timestamp() for p in fs.find(path)] or [fs.modified(path).timestamp()]
    return max(times)


def vacuum(root: str, retention_hours: int) -> int:
    """Delete files no commit of the last ``retention_hours`` uses, in both tables.

    Files that commits removed and files that killed runs left behind go;
    the library's vacuum never touches ``_paramine/`` from the pairs table.

    Returns:
        The number of files deleted.
    """
    deleted = 0
    # paramine's own leftovers under _paramine/, which the library's vacuum
    # leaves alone: the summaries and rejects of runs that never committed.
    committed = {c["record"].get("run_id") for c in commits(open_table(root)) if c["record"]}
    cutoff = time.time() - retention_hours * 3600
    for folder in (RUNS_DIR, REJECTS_DIR):
        fs, path = fsspec.core.url_to_fs(f"{root}/{folder}")
        if not fs.exists(path):
            continue
        for entry in fs.ls(path, detail=True):
            run_id = posixpath.basename(entry["name"].rstrip("/"))
            if folder == REJECTS_DIR and run_id in committed:
                continue
            if _modified(fs, entry["name"]) < cutoff:
                fs.rm(entry["name"], recursive=True)
                deleted += 1
    for url in (root, state_url(root)):
        deleted += len(
            open_table(url).vacuum(
                retention_hours=retention_hours,
                dry_run=False,
                enforce_retention_duration=False,
                full=True,
            )
        )
    return deleted


def compact(root: str) -> dict[str, Any]:
    """Merge each bucket's small files into larger ones, in both tables (a commit each)."""
    recover(root)
    return {url: open_table(url).optimize.compact() for url in (root, state_url(root))}


def history(root: str) -> list[str]:
    """The commits of a table, newest first, with their counts: ``--history``."""
    lines = [
        f"{'version':>7}  {'committed (UTC)':<20} {'operation':<10} {'pairs':>10} "
        f"{'+rows':>8} {'-rows':>8} {'cut':>9}  shards mined / retracted"
    ]
    for commit in commits(open_table(root)):
        when = dt.datetime.fromtimestamp(commit["timestamp"] / 1000, dt.timezone.utc)
        stamp = when.strftime("%Y-%m-%d %H:%M:%S")
        record = commit["record"]
        if not record or "manifest" not in record:
            lines.append(f"{commit['version']:>7}  {stamp:<20} {commit['operation']:<10}")
            continue
        manifest = record["manifest"]
        rows = manifest["rows"]
        refresh_info = manifest["extra"]["refresh"]
        cut = manifest["threshold"].get("value")
        lines.append(
            f"{commit['version']:>7}  {stamp:<20} {'refresh':<10} {rows['pairs']:>10,} "
            f"{rows['pair_rows_added']:>8,} {rows['pair_rows_removed']:>8,} "
            f"{cut if cut is None else round(cut, 6)!s:>9}  "
            f"{len(refresh_info['mined'])} / {len(refresh_info['retracted'])}"
        )
    return lines


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``paramine refresh``."""
    parser = argparse.ArgumentParser(
        prog="paramine refresh",
        description=(
            "Mine the shards that are new or changed since the last commit of the config's "
            "output table, retract the rows of changed and removed shards, re-mine every pivot "
            "they touch with its old candidates, and commit the result to the Delta Lake table "
            "atomically. With nothing new it commits nothing and says so."
        ),
        epilog="Other arguments are passed to Beam after the config's beam_args.",
    )
    parser.add_argument(
        "config", metavar="CONFIG", nargs="?", help="refresh config (YAML), any fsspec URL"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be mined and retracted; mine and commit nothing",
    )
    parser.add_argument(
        "--history",
        metavar="ROOT",
        help="list the commits of the table at ROOT with their counts, and exit",
    )
    parser.add_argument(
        "--compact",
        metavar="ROOT",
        help="merge the small files of each bucket of the table at ROOT (one commit per "
        "table), and exit",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``paramine refresh``."""
    parser = build_parser()
    args, extra = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if args.history or args.compact:
        if args.config or extra:
            raise UsageError("--history and --compact take a table ROOT and nothing else")
        root = _absolute(args.history or args.compact).rstrip("/")
        if args.history:
            print("\n".join(history(root)))
        else:
            for url, metrics in compact(root).items():
                print(
                    f"{url}: {metrics.get('numFilesRemoved', 0)} files merged into "
                    f"{metrics.get('numFilesAdded', 0)}"
                )
        return 0
    if not args.config:
        raise UsageError("give a refresh CONFIG (or --history ROOT)")
    try:
        config = load_config(args.config)
    except OSError as error:
        raise InputError(f"{args.config}: cannot read the refresh config ({error})") from None
    if extra:
        config = dataclasses.replace(config, beam_args=[*config.beam_args, *extra])
    refresh(config, dry_run=args.dry_run)
    return 0
