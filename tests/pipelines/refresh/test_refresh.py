"""paramine refresh on a Delta Lake table: the same pairs as one run, retraction, races, kills.

Every refresh here is a real one: a Beam pipeline on the DirectRunner with
the tiny offline model, real Delta commits through ``deltalake``, read back
with ``deltalake``, DuckDB and ``paramine.schemas.read_pairs``.
"""

from __future__ import annotations

import io
import os
import re
import shutil
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
from paramine.pipelines.refresh.config import RefreshConfig, load_config
from paramine.pipelines.refresh.table import (
    RefreshConflict,
    commit_files,
    compact,
    history,
    recover,
    vacuum,
)
from paramine.pipelines.refresh.update import RefreshResult, refresh
from paramine.pipelines.run import mine
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import RunSettings
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

PIVOTS = ["Good morning.", "Where is the station?", "I like cats.", "It is raining today."]
# Far apart by edit distance, so that PostFilter's near-equal check keeps every pair.
VARIANTS = ["kot śpi na dachu", "pada deszcz od rana", "lubię pić gorącą herbatę", "idę do domu"]

# Every pair passes a threshold of -1: the tiny model's cosines carry no
# meaning, but they are deterministic, so equalities between runs hold.
FIXED_ALL = {"threshold": -1.0, "pair-mode": "all"}
CES_ENG = "tatoeba_test_v2021-08-07/ces-eng/tatoeba-test-v2021-08-07"


def write_shard(path: Path, tag: str, variants: range = range(3)) -> Path:
    """A 2-column TSV in which each pivot has one candidate per variant."""
    lines = [
        f"{pivot}\t{VARIANTS[v]} {i} {tag}" for i, pivot in enumerate(PIVOTS) for v in variants
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def make_config(root: Path, model: Path, inputs: list[Path], **options: Any) -> RefreshConfig:
    return RefreshConfig(
        output=str(root),
        inputs=[str(i) for i in inputs],
        src_lang="en",
        tgt_lang="pl",
        model=str(model),
        options={"threshold": -1.0, **options},
        buckets=4,
    )


def names(keys: Any) -> list[str]:
    """Shard keys or URLs by file name (directory listings give ``file://`` URLs)."""
    return sorted(Path(str(k).split("://")[-1]).name for k in keys)


def pair_ids(root: Path | str, version: int | None = None) -> set[str]:
    table, _ = read_pairs(str(root), version=version)
    ids = table.column("pair_id").to_pylist()
    assert len(ids) == len(set(ids)), "an unordered pair is written twice"
    return set(ids)


def mined_ids(tmp_path: Path, model: Path, inputs: list[Path], langs: tuple[str, str], **opts: Any):
    settings = MiningSettings.from_mapping(
        {"src_lang": langs[0], "tgt_lang": langs[1], "model": str(model), **opts}
    )
    running = RunSettings(
        inputs=tuple(str(i) for i in inputs),
        output=str(tmp_path / "one-run"),
        quiet=True,
        overwrite=True,
    )
    mine.mine(settings, running)
    return pair_ids(tmp_path / "one-run")


def test_two_refreshes_equal_one_run_on_real_bitext(
    tmp_path: Path, tiny_model_dir: Path, shared_corpora: Path
) -> None:
    """Refresh shard A, then A and B: the pair_ids of one `paramine mine` over A and B."""
    source = shared_corpora / CES_ENG
    english = (source.parent / (source.name + ".eng")).read_text(encoding="utf-8").splitlines()
    czech = (source.parent / (source.name + ".ces")).read_text(encoding="utf-8").splitlines()
    inputs = tmp_path / "in"
    inputs.mkdir()
    # Tatoeba is sorted by the Czech sentence: the halves share many pivots.
    for name, rows in (("a", slice(0, 1500)), ("b", slice(1500, 3000))):
        (tmp_path / f"{name}.en").write_text("\n".join(english[rows]) + "\n", encoding="utf-8")
        (tmp_path / f"{name}.cs").write_text("\n".join(czech[rows]) + "\n", encoding="utf-8")
    root = tmp_path / "table"
    config = RefreshConfig(
        output=str(root),
        inputs=[str(inputs)],
        src_lang="en",
        tgt_lang="cs",
        model=str(tiny_model_dir),
        options=FIXED_ALL,
        buckets=8,
    )
    for name in ("a", "b"):
        for lang in ("en", "cs"):
            os.replace(tmp_path / f"{name}.{lang}", inputs / f"{name}.{lang}")
        if name == "a":
            first = refresh(config)
            assert first.version == 1
    second = refresh(config)
    assert second.version == 2
    expected = mined_ids(tmp_path, tiny_model_dir, [inputs], ("en", "cs"), **FIXED_ALL)
    assert len(expected) > 100
    assert pair_ids(root) == expected
    # The second commit paired new candidates with old ones across the shards.
    assert second.manifest is not None
    assert second.manifest.counts["AffectedPivots"]["dropped"]["unchanged"] > 0
    assert second.manifest.accounting_errors() == []
    # Nothing new: nothing committed.
    again = refresh(config)
    assert again.noop and open_table(str(root)).version() == 2


@pytest.mark.parametrize(
    ("rival_margin", "encoded"),
    [
        # The contest's relative rule compares the group's candidates by their
        # vectors: the changed group is encoded, its pivot and three candidates.
        (0.02, 4),
        # Without it, a stored cosine stands: the new candidate and its pivot.
        ("off", 2),
    ],
)
def test_a_new_candidate_encodes_at_most_its_group(
    tmp_path: Path, tiny_model_dir: Path, rival_margin: Any, encoded: int
) -> None:
    """A new candidate of an old pivot is encoded, never the untouched groups, and paired."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a", range(2))
    options = {"pair-mode": "all", "rival-margin": rival_margin}
    config = make_config(tmp_path / "t", tiny_model_dir, [inputs], **options)
    refresh(config)
    (inputs / "b.tsv").write_text(f"{PIVOTS[0]}\tzupełnie nowe zdanie\n", encoding="utf-8")
    result = refresh(config)
    assert result.manifest is not None
    assert result.manifest.counts["encoding"]["texts_encoded"] == encoded
    table, _ = read_pairs(str(tmp_path / "t"))
    new = [
        r for r in table.to_pylist() if "zupełnie nowe zdanie" in (r["sentence_a"], r["sentence_b"])
    ]
    assert len(new) == 2  # with each old candidate of "Good morning."
    assert pair_ids(tmp_path / "t") == mined_ids(
        tmp_path,
        tiny_model_dir,
        [inputs],
        ("en", "pl"),
        threshold=-1.0,
        pair_mode="all",
        rival_margin=rival_margin,
    )


def test_cover_mode_keeps_old_pairs_and_covers_every_candidate(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a", range(3))
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs])
    refresh(config)
    old = pair_ids(root)
    (inputs / "b.tsv").write_text(
        "".join(f"{pivot}\t{VARIANTS[3]} {i} b\n" for i, pivot in enumerate(PIVOTS)),
        encoding="utf-8",
    )
    refresh(config)
    assert old <= pair_ids(root)  # old pairs stay
    table, _ = read_pairs(str(root))
    covered = set(table.column("sentence_a").to_pylist()) | set(
        table.column("sentence_b").to_pylist()
    )
    every = {line.split("\t")[1] for f in inputs.iterdir() for line in f.read_text().splitlines()}
    assert covered == every


def test_changed_and_removed_shards_are_retracted(tmp_path: Path, tiny_model_dir: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    write_shard(inputs / "b.tsv", "b")
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs], **{"pair-mode": "all"})
    refresh(config)
    assert any(" a" in s for s in read_pairs(str(root))[0].column("sentence_a").to_pylist())

    write_shard(inputs / "a.tsv", "changed", range(2))
    changed = refresh(config)
    assert names(changed.plan.retracted) == names(changed.plan.reasons) == ["a.tsv"]
    sentences = read_pairs(str(root))[0].column("sentence_a").to_pylist()
    assert not any(s.endswith(" a") for s in sentences)
    assert any(s.endswith(" changed") for s in sentences)

    (inputs / "a.tsv").unlink()
    removed = refresh(config)
    assert names(removed.plan.removed) == ["a.tsv"] and not removed.plan.to_mine
    assert pair_ids(root) == mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "pl"), threshold=-1.0, pair_mode="all"
    )
    state = open_table(str(root / STATE_DIR)).to_pyarrow_table()
    assert set(names(pa.table(state).column("shard").to_pylist())) == {"b.tsv"}


def test_retraction_repairs_cover(tmp_path: Path, tiny_model_dir: Path) -> None:
    """A candidate whose partner is retracted gets a new pair (cover mode)."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a", range(1))
    write_shard(inputs / "b.tsv", "b", range(1, 2))
    write_shard(inputs / "c.tsv", "c", range(2, 3))
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs])
    refresh(config)
    (inputs / "b.tsv").unlink()
    refresh(config)
    table, _ = read_pairs(str(root))
    sentences = set(table.column("sentence_a").to_pylist()) | set(
        table.column("sentence_b").to_pylist()
    )
    assert not any(s.endswith(" b") for s in sentences)
    # Three candidates per pivot before, two left: each of them is in a pair.
    assert sum(s.endswith(" a") for s in sentences) == len(PIVOTS)
    assert sum(s.endswith(" c") for s in sentences) == len(PIVOTS)


def test_a_concurrent_refresh_is_refused(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two refreshes of one table at once: the first to commit wins, the other fails clean."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
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
        files = set(root.rglob("part-*.parquet"))
        return lambda _: bool(set(root.rglob("part-*.parquet")) - files)
    if name == "committed":
        version = _versions(root / STATE_DIR)
        return lambda _: _versions(root / STATE_DIR) > version
    raise ValueError(f"unknown phase {name!r}; mining, writing or committed")


def _versions(table: Path) -> int:
    """The newest version in a Delta table's log, read from its file names."""
    return max(int(p.stem) for p in (table / "_delta_log").glob("*.json") if p.stem.isdigit())


@pytest.mark.slow
def test_killed_in_each_phase_the_next_run_completes(tmp_path: Path, tiny_model_dir: Path) -> None:
    """SIGKILL in each phase a run shows from outside: the table stays at a commit; the next run
    finishes the job.

    The phases: mining (the launcher has printed its run id, the Beam job
    runs), writing (the run's first bucket file has appeared in the table's
    folders, nothing is committed) and committed (the state table has the
    run's commit; the run is vacuuming). The gap between the two commits is
    too short to hit from outside:
    ``test_a_run_stopped_between_its_two_commits_is_finished`` covers it.
    """
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    root = tmp_path / "t"
    state_root = root / STATE_DIR
    config_path = tmp_path / "refresh.yaml"
    config_path.write_text(
        yaml.safe_dump(
            {
                "output": str(root),
                "inputs": [str(inputs)],
                "src_lang": "en",
                "tgt_lang": "pl",
                "model": str(tiny_model_dir),
                "options": FIXED_ALL,
                "buckets": 4,
            }
        ),
        encoding="utf-8",
    )
    status, stderr = _refresh_killed_when(config_path, lambda _: False)
    assert status == 0, stderr[-2000:]
    config = load_config(str(config_path))
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


def test_a_run_stopped_between_its_two_commits_is_finished(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state commit fails right after the pairs commit (a kill, a lost connection).

    The table is left as a kill between the two commits leaves it: readers
    see the new version, the state is one commit behind, the run's summary
    folder is still there. The next run commits the state from the record
    of the pairs commit, then has nothing to do.
    """
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
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


def test_time_travel_history_and_other_readers(tmp_path: Path, tiny_model_dir: Path) -> None:
    import duckdb
    from deltalake import DeltaTable

    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs])
    refresh(config)
    first = pair_ids(root)
    write_shard(inputs / "b.tsv", "b")
    refresh(config)
    assert pair_ids(root, version=1) == first
    # Each version comes with its own commit's manifest.
    assert read_pairs(str(root), version=1)[1].rows["pairs"] == len(first)
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
    assert manifest.rows["pairs"] == len(pair_ids(root))


def test_a_bucket_stays_one_file_and_compaction_keeps_the_pairs(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
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


def test_settings_change_mines_everything_again(tmp_path: Path, tiny_model_dir: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    root = tmp_path / "t"
    refresh(make_config(root, tiny_model_dir, [inputs]))
    result = refresh(make_config(root, tiny_model_dir, [inputs], **{"pair-mode": "all"}))
    assert set(result.plan.reasons.values()) == {"settings changed"}
    assert names(result.plan.retracted) == ["a.tsv"]
    assert pair_ids(root) == mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "pl"), threshold=-1.0, pair_mode="all"
    )


def test_editing_the_licence_or_corpus_name_mines_nothing_again(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    # license and corpus are where a job's rows come from, not what decides
    # its pairs: they are RunSettings, outside the settings' fingerprint.
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    root = tmp_path / "t"
    first = make_config(root, tiny_model_dir, [inputs], license="cc-by-2.0")
    refresh(first)
    edited = make_config(root, tiny_model_dir, [inputs], license="cc-by-4.0", corpus="tatoeba")
    assert edited.fingerprint() == first.fingerprint()
    result = refresh(edited)
    assert result.plan.reasons == {} and names(result.plan.retracted) == []
    assert (edited.running.license, edited.running.corpus) == ("cc-by-4.0", "tatoeba")


def test_auto_threshold_records_the_cut_of_each_commit(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    root = tmp_path / "t"
    config = RefreshConfig(
        output=str(root),
        inputs=[str(inputs)],
        src_lang="en",
        tgt_lang="pl",
        model=str(tiny_model_dir),
        options={"calibration-sample": 200},
        buckets=2,
    )
    result = refresh(config)
    assert result.manifest is not None
    threshold = result.manifest.threshold
    assert threshold["mode"] != "fixed" and isinstance(threshold["value"], float)
    assert read_pairs(str(root))[1].threshold["value"] == threshold["value"]
    assert f"{round(threshold['value'], 6)}" in history(str(root))[1]


def test_not_a_table(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not a Delta table"):
        history(str(tmp_path))
