"""The Delta tables of a refresh: create, commit, recover, vacuum, compact, history.

A refresh keeps two Delta tables at one root (layout in schemas/table.py):
the pairs, and under ``_paramine/state`` the state. Beam workers write the
Parquet files into the tables' folders; the launcher commits them here, the
pairs first, then the state. The pairs commit is the run's commit: it records
the state's actions, so a run stopped between the two commits is finished by
``recover`` at the start of the next one. A commit never retries on top of a
newer version: the rows were computed from the version the run read.
"""

from __future__ import annotations

import datetime as dt
import json
import posixpath
import sys
import time
from collections.abc import Iterable
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from paramine.schemas.errors import DatasetError, OutputError
from paramine.schemas.manifest import Manifest
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


class RefreshConflict(OutputError):
    """Another refresh committed to the table while this one ran."""


def relative_path(root: str, url: str) -> str:
    """The path of ``url`` inside the table at ``root``, as a Delta log records it."""
    return posixpath.relpath(url, root) if "://" not in url else url[len(root.rstrip("/")) + 1 :]


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


def table_rows(table: Any) -> int:
    """The rows of a table version, from its add actions (no data file is read)."""
    counts = pa.table(table.get_add_actions(flatten=True)).column("num_records").to_pylist()
    return sum(int(n or 0) for n in counts)


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
                    "path": relative_path(base, url),
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
    """Finish a run stopped between its pairs commit and its state commit.

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


def _modified(fs: Any, path: str) -> float:
    """The newest modification time (epoch seconds) of a file or anything in a folder."""
    times = [fs.modified(p).timestamp() for p in fs.find(path)] or [fs.modified(path).timestamp()]
    return max(times)


def delete_run_files(urls: Iterable[str]) -> None:
    """Remove files and folders of a run that will not be committed."""
    for url in urls:
        fs, path = fsspec.core.url_to_fs(url)
        if fs.exists(path):
            fs.rm(path, recursive=True)


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
        manifest = Manifest.from_record(record["manifest"], f"version {commit['version']}")
        rows = manifest.rows
        refresh_info = manifest.extra.refresh or {}
        cut = manifest.cut.value
        lines.append(
            f"{commit['version']:>7}  {stamp:<20} {'refresh':<10} {rows.pairs:>10,} "
            f"{rows.pair_rows_added or 0:>8,} {rows.pair_rows_removed or 0:>8,} "
            f"{cut if cut is None else round(cut, 6)!s:>9}  "
            f"{len(refresh_info.get('mined', ()))} / {len(refresh_info.get('retracted', ()))}"
        )
    return lines
