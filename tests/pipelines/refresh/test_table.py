"""The refresh's Delta tables: races, kills and stops between commits, time travel, compaction.

Every refresh here is a real one: a Beam pipeline on the DirectRunner with
the tiny offline model, real Delta commits through ``deltalake``, read back
with ``deltalake``, DuckDB and ``paramine.schemas.read_pairs``.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml
from paramine.pipelines.refresh import update
from paramine.pipelines.refresh.config import load_config
from paramine.pipelines.refresh.table import (
    RefreshConflict,
    commit_files,
    compact,
    history,
    recover,
    vacuum,
)
from paramine.pipelines.refresh.update import RefreshResult, refresh
from paramine.schemas import read_pairs
from paramine.schemas.errors import DatasetError
from paramine.schemas.table import (
    RUNS_DIR,
    STATE_DIR,
    STATE_SCHEMA,
    commits,
    latest_record,
    open_table,
)

from tests.pipelines.refresh.helpers import (
    FIXED_ALL,
    input_folder,
    make_config,
    mined_ids,
    pair_ids,
    write_shard,
)


@pytest.mark.pipeline
def test_a_concurrent_refresh_is_refused(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two refreshes of one table at once: the first to commit wins, the other fails clean."""
    inputs = input_folder(tmp_path, "a")
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs])
    refresh(config)
    write_shard(inputs / "b.tsv", "b")
    winner: list[RefreshResult] = []
    raced = False

    def commit_after_a_rival(*args: Any) -> int:
        # The other run starts after this one read the table and commits first;
        # its own commits go straight through.
        nonlocal raced
        if not raced:
            raced = True
            winner.append(refresh(config))
        return commit_files(*args)

    monkeypatch.setattr(update, "commit_files", commit_after_a_rival)
    with pytest.raises(RefreshConflict, match="another refresh committed while this one"):
        refresh(config)
    assert winner[0].version == 2
    table = open_table(str(root))
    assert table.version() == 2
    # The loser's files are gone; the table uses only the winner's.
    run_ids = {c["record"]["run_id"] for c in commits(table) if c["record"]}
    on_disk = {
        p.name.split("-")[1] + "-" + p.name.split("-")[2] for p in root.rglob("bucket=*/part-*")
    }
    assert on_disk <= run_ids
    assert refresh(config).noop


def _write_config(path: Path, root: Path, inputs: Path, model: Path) -> Path:
    """A refresh config file of en-pl shards in ``inputs``, every pair kept, four buckets."""
    config = {
        "output": str(root),
        "inputs": [str(inputs)],
        "src_lang": "en",
        "tgt_lang": "pl",
        "model": str(model),
        "options": FIXED_ALL,
        "buckets": 4,
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _refresh_killed_when(
    config_path: Path, reached: Callable[[list[str]], bool]
) -> tuple[int, str]:
    """Run `paramine refresh CONFIG` as a child process; SIGKILL it once it reaches a phase.

    ``reached`` sees the child's stderr lines so far and may look at the table's
    folders; it is polled every few milliseconds, from outside the child.

    Returns:
        The child's exit status (-9 when killed) and its stderr.
    """
    child = subprocess.Popen(
        [sys.executable, "-m", "paramine.pipelines.cli", "refresh", str(config_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []

    def read() -> None:
        assert child.stderr is not None
        for line in child.stderr:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 600
    while child.poll() is None:
        if time.monotonic() > deadline:
            child.kill()
            pytest.fail("paramine refresh ran for 10 minutes")
        if reached(lines):
            child.kill()
            break
        time.sleep(0.002)
    child.wait()
    reader.join(timeout=60)
    return child.returncode, "".join(lines)


def _phase(name: str, root: Path) -> Callable[[list[str]], bool]:
    """Whether a refresh started from now on has reached a phase, told from outside it.

    ``mining``: the launcher printed its run id (the Beam job runs);
    ``writing``: a bucket file that was not there before appeared in the
    table's folders; ``committed``: the state table has a new version.
    """
    if name == "mining":
        return lambda lines: any(re.search(r": run \S+: mining", line) for line in lines)
    if name == "writing":
        files = _bucket_files(root)
        return lambda _: bool(_bucket_files(root) - files)
    if name == "committed":
        version = _versions(root / STATE_DIR)
        return lambda _: _versions(root / STATE_DIR) > version
    raise ValueError(f"unknown phase {name!r}; mining, writing or committed")


def _bucket_files(root: Path) -> set[Path]:
    """The ``part-*.parquet`` files under ``root``, read while a refresh writes and removes folders.

    ``os.walk`` passes over a folder that goes as it is read (Beam's
    ``beam-temp-*`` ones); ``Path.rglob`` raises FileNotFoundError there.
    """
    return {
        Path(folder, name)
        for folder, _, names in os.walk(root)
        for name in names
        if name.startswith("part-") and name.endswith(".parquet")
    }


def _versions(table: Path) -> int:
    """The newest version in a Delta table's log, read from its file names."""
    return max(int(p.stem) for p in (table / "_delta_log").glob("*.json") if p.stem.isdigit())


@pytest.mark.slow
def test_killed_in_each_phase_the_next_run_completes(
    tmp_path: Path, tiny_model_dir: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """SIGKILL in each phase a run shows from outside: the table stays at a commit; the next run
    finishes the job.

    The phases: mining (the launcher has printed its run id, the Beam job
    runs), writing (the run's first bucket file has appeared in the table's
    folders, nothing is committed) and committed (the state table has the
    run's commit; the run is vacuuming). The gap between the two commits is
    too short to hit from outside:
    ``test_a_run_stopped_between_its_two_commits_is_finished`` covers it.
    """
    inputs = input_folder(tmp_path, "a")
    root = tmp_path / "t"
    state_root = root / STATE_DIR
    config_path = _write_config(tmp_path / "refresh.yaml", root, inputs, tiny_model_dir)
    config = load_config(str(config_path))
    refresh(config)  # the first run, whole (in this process: the kills below need a child)
    stderr = capfd.readouterr().err
    # A refresh shows the progress of its Beam job as paramine mine does (run/launch.py).
    assert re.search(r"^paramine: .*read 100\.0% \(", stderr, re.MULTILINE), stderr[-2000:]
    for n, phase in enumerate(("mining", "writing", "committed")):
        before = open_table(str(root)).version()
        expected_before = pair_ids(root)
        files_before = set(root.rglob("part-*.parquet"))
        write_shard(inputs / f"s{n}.tsv", f"s{n}")
        status, stderr = _refresh_killed_when(config_path, _phase(phase, root))
        assert status == -9, f"{phase}: not killed (exit {status})\n{stderr[-2000:]}"
        after = open_table(str(root)).version()
        state = latest_record(open_table(str(state_root)))
        pairs = latest_record(open_table(str(root)))
        assert state is not None and pairs is not None
        if phase == "committed":
            assert after == before + 1
            assert state[1]["run_id"] == pairs[1]["run_id"]
        else:
            assert after == before and pair_ids(root) == expected_before
            if phase == "writing":  # its files lie in the folders, referenced by no commit
                assert set(root.rglob("part-*.parquet")) - files_before
        # The next run completes: it mines again, or finds nothing to do.
        result = refresh(config)
        assert result.noop == (phase == "committed")
        state = latest_record(open_table(str(state_root)))
        pairs = latest_record(open_table(str(root)))
        assert state is not None and pairs is not None
        assert state[1]["run_id"] == pairs[1]["run_id"]
        assert refresh(config).noop
    assert pair_ids(root) == mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "pl"), threshold=-1.0, pair_mode="all"
    )
    # Files the killed runs left behind are vacuumed; the table still reads.
    vacuum(str(root), 0)
    assert pair_ids(root)
    assert not list((root / RUNS_DIR).glob("*/summary.json"))


@pytest.mark.slow
def test_a_signal_stops_a_refresh_and_commits_nothing(tmp_path: Path, tiny_model_dir: Path) -> None:
    """SIGTERM while the Beam job runs: exit 143, one line, the table as it was, no temp files.

    The refresh shares the launcher of ``paramine mine`` (``run/launch.py``):
    the same signal handling, progress file and Beam temp folder.
    """
    inputs = input_folder(tmp_path, "a")
    root = tmp_path / "t"
    config_path = _write_config(tmp_path / "refresh.yaml", root, inputs, tiny_model_dir)
    config = load_config(str(config_path))
    refresh(config)
    before, ids_before = open_table(str(root)).version(), pair_ids(root)
    write_shard(inputs / "b.tsv", "b")
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-m", "paramine.pipelines.cli", "refresh", str(config_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmpdir)},
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )
    try:
        # Under way: the progress file of the Beam job is in TMPDIR.
        deadline = time.monotonic() + 120
        while not list(tmpdir.glob("paramine-progress-*")):
            assert child.poll() is None, child.communicate()[1]
            assert time.monotonic() < deadline, "the refresh never got under way"
            time.sleep(0.05)
        child.send_signal(signal.SIGTERM)
        _, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 143, stderr
    last = stderr.splitlines()[-1]
    assert re.fullmatch(
        rf"paramine: stopped by SIGTERM; nothing of run \S+ was committed and the table at "
        rf"{re.escape(str(root))} is as it was \(files the run wrote are in no commit; "
        r"vacuum removes them\)",
        last,
    ), last
    assert "Traceback" not in stderr
    assert open_table(str(root)).version() == before and pair_ids(root) == ids_before
    assert not list((root / RUNS_DIR).glob("*/summary.json"))
    assert os.listdir(tmpdir) == []  # no Beam temp folder, progress file or run log
    # The next run mines the new shard.
    assert refresh(config).version == before + 1


@pytest.mark.pipeline
def test_a_run_stopped_between_its_two_commits_is_finished(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state commit fails right after the pairs commit (a kill, a lost connection).

    The table is left as a kill between the two commits leaves it: readers
    see the new version, the state is one commit behind, the run's summary
    folder is still there. The next run commits the state from the record
    of the pairs commit, then has nothing to do.
    """
    inputs = input_folder(tmp_path, "a")
    root = tmp_path / "t"
    state_root = root / STATE_DIR
    config = make_config(root, tiny_model_dir, [inputs], **{"pair-mode": "all"})
    refresh(config)
    write_shard(inputs / "b.tsv", "b")

    def pairs_only(table: Any, schema: pa.Schema, *args: Any) -> int:
        if schema is STATE_SCHEMA:
            raise OSError("connection reset by the object store")
        return commit_files(table, schema, *args)

    with monkeypatch.context() as patched:
        patched.setattr(update, "commit_files", pairs_only)
        with pytest.raises(OSError, match="connection reset"):
            refresh(config)
    pairs = latest_record(open_table(str(root)))
    state = latest_record(open_table(str(state_root)))
    assert pairs is not None and state is not None
    assert pairs[0] == 2 and open_table(str(state_root)).version() == 1
    assert state[1]["run_id"] != pairs[1]["run_id"]
    run_id = pairs[1]["run_id"]
    assert (root / RUNS_DIR / run_id / "summary.json").is_file()
    expected = mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "pl"), threshold=-1.0, pair_mode="all"
    )
    assert pair_ids(root) == expected  # readers see the run's version

    # A state that moved outside paramine is not rolled forward over.
    moved = Path(shutil.copytree(root, tmp_path / "moved"))
    commit_files(
        open_table(str(moved / STATE_DIR)),
        STATE_SCHEMA,
        {"add": [], "remove": []},
        {"run_id": "not paramine"},
    )
    with pytest.raises(DatasetError, match="changed outside paramine refresh"):
        recover(str(moved))

    log = io.StringIO()
    assert refresh(config, log=log).noop
    assert f"finished the state commit of run {run_id}" in log.getvalue()
    state = latest_record(open_table(str(state_root)))
    assert state is not None and state[1]["run_id"] == run_id
    assert not recover(str(root))
    assert pair_ids(root) == expected
    # The summary folder the stopped run left goes with the vacuum.
    vacuum(str(root), 0)
    assert not (root / RUNS_DIR / run_id).exists()
    assert pair_ids(root) == expected


@pytest.mark.pipeline
def test_time_travel_history_and_other_readers(tmp_path: Path, tiny_model_dir: Path) -> None:
    import duckdb
    from deltalake import DeltaTable

    inputs = input_folder(tmp_path, "a")
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs])
    refresh(config)
    first = pair_ids(root)
    write_shard(inputs / "b.tsv", "b")
    refresh(config)
    assert pair_ids(root, version=1) == first
    # Each version comes with its own commit's manifest.
    assert read_pairs(str(root), version=1)[1].rows.pairs == len(first)
    assert read_pairs(str(root), version=1)[1].counts["RetractRows"]["in"] == 0
    assert pair_ids(root, version=2) > first
    with pytest.raises(DatasetError, match="version 9"):
        read_pairs(str(root), version=9)

    table = DeltaTable(str(root))
    rows = pa.table(table.to_pyarrow_table())
    assert set(rows.column("pair_id").to_pylist()) == pair_ids(root)
    dataset = table.to_pyarrow_dataset()  # noqa: F841 (DuckDB finds it by name)
    count = duckdb.sql("SELECT count(DISTINCT pair_id) FROM dataset").fetchall()
    assert count == [(len(pair_ids(root)),)]

    lines = history(str(root))
    assert lines[1].split()[0] == "2" and lines[2].split()[0] == "1"
    assert "CREATE" in lines[-1]
    _, manifest = read_pairs(str(root), version=2)
    assert manifest.accounting_errors() == []
    assert manifest.rows.pairs == len(pair_ids(root))


@pytest.mark.pipeline
def test_a_bucket_stays_one_file_and_compaction_keeps_the_pairs(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    inputs = input_folder(tmp_path)
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs], **{"pair-mode": "all"})
    for tag in ("a", "b"):
        write_shard(inputs / f"{tag}.tsv", tag)
        refresh(config)
    # A refresh rewrites each bucket it touches into one file: no small files pile up.
    for url in (root, root / STATE_DIR):
        actions = pa.table(open_table(str(url)).get_add_actions(flatten=True))
        buckets = actions.column("partition.bucket").to_pylist()
        assert len(buckets) == len(set(buckets)) > 1
    before = pair_ids(root)
    version = open_table(str(root)).version()
    results = compact(str(root))
    assert set(results) == {str(root), str(root / STATE_DIR)}
    assert pair_ids(root) == before
    assert open_table(str(root)).version() == version  # nothing to merge, nothing committed
    write_shard(inputs / "c.tsv", "c")
    assert refresh(config).version == version + 1
    assert pair_ids(root) == mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "pl"), threshold=-1.0, pair_mode="all"
    )


def test_not_a_table(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not a Delta table"):
        history(str(tmp_path))
