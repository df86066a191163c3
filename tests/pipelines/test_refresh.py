"""paramine refresh on a Delta Lake table: the same pairs as one run, retraction, races, kills.

Every refresh here is a real one: a Beam pipeline on the DirectRunner with
the tiny offline model, real Delta commits through ``deltalake``, read back
with ``deltalake``, DuckDB and ``paramine.schemas.read_pairs``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml
from paramine.pipelines.refresh import launch as rf
from paramine.pipelines.run import mine
from paramine.pipelines.run.config import MineConfig
from paramine.schemas import read_pairs
from paramine.schemas.errors import DatasetError
from paramine.schemas.table import STATE_DIR, commits, latest_record, open_table

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


def make_config(root: Path, model: Path, inputs: list[Path], **options: Any) -> rf.RefreshConfig:
    return rf.RefreshConfig(
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
    config = MineConfig.from_mapping(
        {
            "inputs": [str(i) for i in inputs],
            "output": str(tmp_path / "one-run"),
            "src_lang": langs[0],
            "tgt_lang": langs[1],
            "model": str(model),
            "quiet": True,
            "overwrite": True,
            **opts,
        }
    )
    mine.run_config(config)
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
    config = rf.RefreshConfig(
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
            first = rf.refresh(config)
            assert first.version == 1
    second = rf.refresh(config)
    assert second.version == 2
    expected = mined_ids(tmp_path, tiny_model_dir, [inputs], ("en", "cs"), **FIXED_ALL)
    assert len(expected) > 100
    assert pair_ids(root) == expected
    # The second commit paired new candidates with old ones across the shards.
    assert second.manifest is not None
    assert second.manifest.counts["affected"]["dropped"]["unchanged"] > 0
    assert second.manifest.accounting_errors() == []
    # Nothing new: nothing committed.
    again = rf.refresh(config)
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
    rf.refresh(config)
    (inputs / "b.tsv").write_text(f"{PIVOTS[0]}\tzupełnie nowe zdanie\n", encoding="utf-8")
    result = rf.refresh(config)
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
    rf.refresh(config)
    old = pair_ids(root)
    (inputs / "b.tsv").write_text(
        "".join(f"{pivot}\t{VARIANTS[3]} {i} b\n" for i, pivot in enumerate(PIVOTS)),
        encoding="utf-8",
    )
    rf.refresh(config)
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
    rf.refresh(config)
    assert any(" a" in s for s in read_pairs(str(root))[0].column("sentence_a").to_pylist())

    write_shard(inputs / "a.tsv", "changed", range(2))
    changed = rf.refresh(config)
    assert names(changed.plan.retracted) == names(changed.plan.reasons) == ["a.tsv"]
    sentences = read_pairs(str(root))[0].column("sentence_a").to_pylist()
    assert not any(s.endswith(" a") for s in sentences)
    assert any(s.endswith(" changed") for s in sentences)

    (inputs / "a.tsv").unlink()
    removed = rf.refresh(config)
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
    rf.refresh(config)
    (inputs / "b.tsv").unlink()
    rf.refresh(config)
    table, _ = read_pairs(str(root))
    sentences = set(table.column("sentence_a").to_pylist()) | set(
        table.column("sentence_b").to_pylist()
    )
    assert not any(s.endswith(" b") for s in sentences)
    # Three candidates per pivot before, two left: each of them is in a pair.
    assert sum(s.endswith(" a") for s in sentences) == len(PIVOTS)
    assert sum(s.endswith(" c") for s in sentences) == len(PIVOTS)


def test_a_concurrent_refresh_is_refused(tmp_path: Path, tiny_model_dir: Path) -> None:
    """Two refreshes of one table at once: the first to commit wins, the other fails clean."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs])
    rf.refresh(config)
    write_shard(inputs / "b.tsv", "b")
    winner: list[rf.RefreshResult] = []

    def race() -> None:
        # The other run starts after this one read the table and commits first.
        winner.append(rf.refresh(config))

    with pytest.raises(rf.RefreshConflict, match="another refresh committed while this one"):
        rf.refresh(config, before_commit=race)
    assert winner[0].version == 2
    table = open_table(str(root))
    assert table.version() == 2
    # The loser's files are gone; the table uses only the winner's.
    run_ids = {c["record"]["run_id"] for c in commits(table) if c["record"]}
    on_disk = {
        p.name.split("-")[1] + "-" + p.name.split("-")[2] for p in root.rglob("bucket=*/part-*")
    }
    assert on_disk <= run_ids
    assert rf.refresh(config).noop


def _refresh_process(config_path: Path, kill_at: str | None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PARAMINE_REFRESH_KILL_AT": kill_at or ""}
    return subprocess.run(
        [sys.executable, "-m", "paramine.pipelines.cli", "refresh", str(config_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_killed_at_any_point_the_next_run_completes(tmp_path: Path, tiny_model_dir: Path) -> None:
    """SIGKILL at each step: the table stays at its last commit; the next run finishes the job."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    root = tmp_path / "t"
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
    assert _refresh_process(config_path, None).returncode == 0
    config = rf.load_config(str(config_path))
    for n, point in enumerate(("planned", "written", "pairs-committed", "committed")):
        before = open_table(str(root)).version()
        expected_before = pair_ids(root)
        write_shard(inputs / f"s{n}.tsv", f"s{n}")
        killed = _refresh_process(config_path, point)
        assert killed.returncode == -9, killed.stderr[-2000:]
        after = open_table(str(root)).version()
        if point in ("planned", "written"):
            assert after == before and pair_ids(root) == expected_before
        else:
            assert after == before + 1  # the pairs commit is the run's commit
        # The next run completes: it finishes a half-done commit, or mines again.
        rf.refresh(config)
        state = latest_record(open_table(str(root / STATE_DIR)))
        pairs = latest_record(open_table(str(root)))
        assert state is not None and pairs is not None
        assert state[1]["run_id"] == pairs[1]["run_id"]
        assert rf.refresh(config).noop
    assert pair_ids(root) == mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "pl"), threshold=-1.0, pair_mode="all"
    )
    # Files the killed runs left behind are vacuumed; the table still reads.
    rf.vacuum(str(root), 0)
    assert pair_ids(root)
    assert not list((root / "_paramine" / "runs").glob("*/summary.json"))


def test_time_travel_history_and_other_readers(tmp_path: Path, tiny_model_dir: Path) -> None:
    import duckdb
    from deltalake import DeltaTable

    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs])
    rf.refresh(config)
    first = pair_ids(root)
    write_shard(inputs / "b.tsv", "b")
    rf.refresh(config)
    assert pair_ids(root, version=1) == first
    # Each version comes with its own commit's manifest.
    assert read_pairs(str(root), version=1)[1].rows["pairs"] == len(first)
    assert read_pairs(str(root), version=1)[1].counts["state"]["in"] == 0
    assert pair_ids(root, version=2) > first
    with pytest.raises(DatasetError, match="version 9"):
        read_pairs(str(root), version=9)

    table = DeltaTable(str(root))
    rows = pa.table(table.to_pyarrow_table())
    assert set(rows.column("pair_id").to_pylist()) == pair_ids(root)
    dataset = table.to_pyarrow_dataset()  # noqa: F841 (DuckDB finds it by name)
    count = duckdb.sql("SELECT count(DISTINCT pair_id) FROM dataset").fetchall()
    assert count == [(len(pair_ids(root)),)]

    lines = rf.history(str(root))
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
        rf.refresh(config)
    # A refresh rewrites each bucket it touches into one file: no small files pile up.
    for url in (root, root / STATE_DIR):
        actions = pa.table(open_table(str(url)).get_add_actions(flatten=True))
        buckets = actions.column("partition.bucket").to_pylist()
        assert len(buckets) == len(set(buckets)) > 1
    before = pair_ids(root)
    version = open_table(str(root)).version()
    results = rf.compact(str(root))
    assert set(results) == {str(root), str(root / STATE_DIR)}
    assert pair_ids(root) == before
    assert open_table(str(root)).version() == version  # nothing to merge, nothing committed
    write_shard(inputs / "c.tsv", "c")
    assert rf.refresh(config).version == version + 1
    assert pair_ids(root) == mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "pl"), threshold=-1.0, pair_mode="all"
    )


def test_settings_change_mines_everything_again(tmp_path: Path, tiny_model_dir: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    root = tmp_path / "t"
    rf.refresh(make_config(root, tiny_model_dir, [inputs]))
    result = rf.refresh(make_config(root, tiny_model_dir, [inputs], **{"pair-mode": "all"}))
    assert set(result.plan.reasons.values()) == {"settings changed"}
    assert names(result.plan.retracted) == ["a.tsv"]
    assert pair_ids(root) == mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "pl"), threshold=-1.0, pair_mode="all"
    )


def test_auto_threshold_records_the_cut_of_each_commit(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_shard(inputs / "a.tsv", "a")
    root = tmp_path / "t"
    config = rf.RefreshConfig(
        output=str(root),
        inputs=[str(inputs)],
        src_lang="en",
        tgt_lang="pl",
        model=str(tiny_model_dir),
        options={"calibration-sample": 200},
        buckets=2,
    )
    result = rf.refresh(config)
    assert result.manifest is not None
    threshold = result.manifest.threshold
    assert threshold["mode"] != "fixed" and isinstance(threshold["value"], float)
    assert read_pairs(str(root))[1].threshold["value"] == threshold["value"]
    assert f"{round(threshold['value'], 6)}" in rf.history(str(root))[1]


def test_not_a_table(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not a Delta table"):
        rf.history(str(tmp_path))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"inputs": ["x"]}, "'output' is required"),
        ({"output": "o", "inputs": ["x"], "colour": 1}, "unknown keys"),
        ({"output": "o", "inputs": ["x"], "options": {"output": "y"}}, "set by refresh"),
        (
            {"output": "o", "inputs": ["x"], "options": {"no-such-flag": 1}},
            "is not a paramine mine option",
        ),
        ({"output": "o", "inputs": ["x"], "buckets": 0}, "positive integer"),
        ({"output": "o", "inputs": ["x"], "retention_hours": "a week"}, "positive integer"),
    ],
)
def test_config_errors(tmp_path: Path, content: dict[str, Any], message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(content), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        rf.load_config(str(path))
