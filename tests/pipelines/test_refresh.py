"""Scheduled refreshes on the local filesystem: incremental versions, no-ops, crashes, pruning."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Any

import pytest
import yaml
from paramine.pipelines import refresh as rf
from paramine.pipelines.cli import main as cli_main
from paramine.pipelines.formats import resolve_inputs
from paramine.schemas.manifest import IncompleteDatasetError, Manifest
from paramine.schemas.reader import read_pairs

PIVOTS = ["Good morning.", "Where is the station?", "I like cats.", "It is raining today."]
# Far apart by edit distance, so that PostFilter's near-equal check keeps every pair.
VARIANTS = ["kot śpi na dachu", "pada deszcz od rana", "lubię pić gorącą herbatę"]


def write_shard(path: Path, tag: str, variants: int = 3) -> Path:
    """A 2-column TSV in which each pivot has ``variants`` distinct Polish candidates."""
    lines = []
    for i, pivot in enumerate(PIVOTS):
        for v in range(variants):
            lines.append(f"{pivot} {tag}\t{tag} {VARIANTS[v]} {i}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_config(tmp_path: Path, model: Path, inputs: list[str], **extra: Any) -> Path:
    config = {
        "output": str(tmp_path / "out"),
        "inputs": inputs,
        "src_lang": "en",
        "tgt_lang": "pl",
        "model": str(model),
        # Every pair passes: the tiny model's cosines carry no meaning.
        "options": {"threshold": -1.0, "num-shards": 1},
        "keep": 3,
        **extra,
    }
    path = tmp_path / "refresh.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def sentences(version_url: str) -> set[str]:
    table, _ = read_pairs(version_url)
    return set(table.column("sentence_a").to_pylist()) | set(table.column("sentence_b").to_pylist())


def by_name(reasons: dict[str, str]) -> dict[str, str]:
    """Plan reasons keyed by file name (directory listings give ``file://`` URLs)."""
    return {posixpath.basename(key): reason for key, reason in reasons.items()}


def tags(version_url: str) -> set[str]:
    """Which shards (by tag) the pairs of a version came from."""
    return {s.split()[0] for s in sentences(version_url)}


def test_incremental_refreshes(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = tmp_path / "shards"
    shards.mkdir()
    write_shard(shards / "a.tsv", "aaa")
    write_shard(shards / "b.tsv", "bbb")
    config_path = write_config(tmp_path, tiny_model_dir, [str(shards)])
    config = rf.load_config(str(config_path))
    root = config.output

    # First run: everything is new, mined in one batch.
    first = rf.refresh(config)
    assert first.version is not None and first.manifest is not None
    assert sorted(first.plan.reasons.values()) == ["new", "new"]
    assert rf.read_latest(root) == first.version
    assert tags(rf.latest_url(root)) == {"aaa", "bbb"}
    assert first.manifest.rows["pairs"] == 2 * len(PIVOTS) * 2  # cover mode: ceil(3/2) per group

    # Nothing changed: a no-op through the command line, and it says so.
    capsys.readouterr()
    assert cli_main(["refresh", str(config_path)]) == 0
    assert f"nothing new since {first.version}" in capsys.readouterr().err
    assert rf.list_versions(root) == [first.version]

    # A new shard: only it is mined; the version holds the union.
    write_shard(shards / "c.tsv", "ccc")
    added = rf.refresh(config)
    assert added.version is not None and added.manifest is not None
    assert by_name(added.plan.reasons) == {"c.tsv": "new"}
    latest = rf.latest_url(root)
    assert tags(latest) == {"aaa", "bbb", "ccc"}
    assert added.manifest.rows["pairs"] == first.manifest.rows["pairs"] * 3 // 2
    # Carried pairs are referenced, not copied.
    assert any(f.startswith(f"../{first.version}/") for f in added.manifest.files["pairs"])
    assert tags(f"{root}/{added.version}/mined") == {"ccc"}

    # A changed shard is mined again; its old pairs leave the version.
    os.remove(shards / "c.tsv")
    write_shard(shards / "c.tsv", "ddd", variants=2)
    changed = rf.refresh(config)
    assert changed.version is not None and changed.manifest is not None
    assert by_name(changed.plan.reasons) == {"c.tsv": "changed"}
    assert tags(rf.latest_url(root)) == {"aaa", "bbb", "ddd"}
    assert sorted(b["version"] for b in changed.manifest.extra["refresh"]["batches"]) == [
        first.version,
        changed.version,
    ]
    # The version's counts are the sum of its batches' and still balance.
    assert changed.manifest.counts["read"]["in"] == 2 * 12 + 8

    # Earlier versions stay readable until pruned.
    assert tags(f"{root}/{added.version}") == {"aaa", "bbb", "ccc"}


def test_killed_before_manifest_keeps_latest(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shards = tmp_path / "shards"
    shards.mkdir()
    write_shard(shards / "a.tsv", "aaa")
    config = rf.load_config(str(write_config(tmp_path, tiny_model_dir, [str(shards)])))
    first = rf.refresh(config)
    assert first.version is not None

    write_shard(shards / "b.tsv", "bbb")

    def killed(*args: Any) -> None:
        raise KeyboardInterrupt("killed between writing the shards and the manifest")

    monkeypatch.setattr(rf, "commit_manifest", killed)
    with pytest.raises(KeyboardInterrupt):
        rf.refresh(config)
    monkeypatch.undo()

    # The new pairs were written, but the version is not committed.
    versions = rf.list_versions(config.output)
    assert len(versions) == 2
    crashed = versions[-1]
    assert list((Path(config.output) / crashed / "mined" / "pairs").glob("*.parquet"))
    assert not rf.is_committed(config.output, crashed)
    with pytest.raises(IncompleteDatasetError):
        read_pairs(f"{config.output}/{crashed}")
    assert rf.read_latest(config.output) == first.version
    assert tags(rf.latest_url(config.output)) == {"aaa"}

    # The next run completes the work and clears the abandoned directory.
    again = rf.refresh(config)
    assert again.version is not None and again.version > crashed
    assert by_name(again.plan.reasons) == {"b.tsv": "new"}
    assert tags(rf.latest_url(config.output)) == {"aaa", "bbb"}
    assert crashed in again.pruned
    assert rf.list_versions(config.output) == [first.version, again.version]


# Plain functions: planning and pruning without mining.


def fake_batch(version: str, shards: list[Path]) -> dict[str, Any]:
    from paramine.pipelines.fingerprint import fingerprint

    return {
        "version": version,
        "dir": f"{version}/mined",
        "inputs": [
            {"format": "tsv", "corpus": p.stem, "files": [fingerprint(str(p))]} for p in shards
        ],
        "files": {"pairs": ["pairs/part-00000-of-00001.parquet"], "rejects": []},
        "rows": {"pairs": 0, "rejects": 0},
        "counts": {},
        "threshold": {},
        "model": {},
        "created_at": "",
    }


def commit_fake(root: Path, version: str, batches: list[dict[str, Any]], config: Any) -> None:
    plan = rf.Plan(None, [], {}, [], [], [])
    manifest = rf.version_manifest(version, batches, config, plan, "test")
    (root / version).mkdir(parents=True)
    rf.commit_manifest(str(root), version, manifest)
    rf.write_latest(str(root), version)


def test_changed_shard_takes_its_batch_mates(tmp_path: Path) -> None:
    a, b, c = (write_shard(tmp_path / f"{n}.tsv", n * 3) for n in "abc")
    config = rf.RefreshConfig(output=str(tmp_path / "out"), inputs=[str(tmp_path)])
    manifest = rf.version_manifest(
        "v=20260101T000000Z",
        [fake_batch("v=20260101T000000Z", [a, b]), fake_batch("v=20260101T000000Z", [c])],
        config,
        rf.Plan(None, [], {}, [], [], []),
        "test",
    )
    write_shard(a, "changed", variants=1)
    shards = resolve_inputs([str(a), str(b), str(c)], "en", "pl")
    plan = rf.plan_refresh(config, shards, ("v=20260101T000000Z", manifest))
    assert plan.reasons == {str(a): "changed", str(b): "batch-mate"}
    assert [len(batch["inputs"]) for batch in plan.carried] == [1]

    # A different model or option re-mines everything.
    other = rf.RefreshConfig(output=config.output, inputs=config.inputs, model="other")
    assert set(rf.plan_refresh(other, shards, ("v=1", manifest)).reasons.values()) == {
        "settings changed"
    }


def test_prune_keeps_referenced_versions(tmp_path: Path) -> None:
    root = tmp_path / "out"
    shard = write_shard(tmp_path / "a.tsv", "aaa")
    config = rf.RefreshConfig(output=str(root), inputs=[str(shard)])
    names = [f"v=2026010{i}T000000Z" for i in range(1, 6)]
    base = fake_batch(names[0], [shard])
    for i, name in enumerate(names):
        # Every version carries the first one's batch and adds its own.
        batches = [base] if i == 0 else [base, fake_batch(name, [shard])]
        commit_fake(root, name, batches, config)
    (root / "v=20260104T120000Z").mkdir()  # a killed run's leftovers

    deleted = rf.prune(str(root), keep=2)
    assert deleted == [names[1], names[2], "v=20260104T120000Z"]
    assert rf.list_versions(str(root)) == [names[0], names[3], names[4]]
    assert rf.read_latest(str(root)) == names[4]
    with pytest.raises(ValueError, match="at least 1"):
        rf.prune(str(root), keep=0)


def test_latest_pointer_and_version_names(tmp_path: Path) -> None:
    import datetime as dt

    root = str(tmp_path)
    assert rf.read_latest(root) is None
    rf.write_latest(root, "v=20260101T000000Z")
    rf.write_latest(root, "v=20260102T000000Z")
    assert rf.read_latest(root) == "v=20260102T000000Z"
    assert sorted(os.listdir(root)) == ["_LATEST"]  # no temporary file left behind
    (tmp_path / "v=20260105T000000Z").mkdir()
    # A clock behind the newest version still yields a later name.
    early = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    assert rf.new_version_name(root, early) == "v=20260105T000001Z"


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
        ({"output": "o", "inputs": ["x"], "keep": 0}, "positive integer"),
    ],
)
def test_config_errors(tmp_path: Path, content: dict[str, Any], message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(content), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        rf.load_config(str(path))


def test_manifest_round_trips(tmp_path: Path) -> None:
    shard = write_shard(tmp_path / "a.tsv", "aaa")
    config = rf.RefreshConfig(output=str(tmp_path / "out"), inputs=[str(shard)])
    commit_fake(
        tmp_path / "out", "v=20260101T000000Z", [fake_batch("v=20260101T000000Z", [shard])], config
    )
    text = (tmp_path / "out" / "v=20260101T000000Z" / "manifest.json").read_text()
    manifest = Manifest.from_json(text)
    assert manifest.files["pairs"] == ["mined/pairs/part-00000-of-00001.parquet"]
    assert manifest.extra["refresh"]["config_fingerprint"] == config.fingerprint()
