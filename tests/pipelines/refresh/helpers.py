"""What the refresh tests share: shards of known pairs, configs, the pair ids of a table or run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paramine.pipelines.refresh.config import RefreshConfig
from paramine.pipelines.run import mine
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import RunSettings
from paramine.schemas import read_pairs

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


def input_folder(tmp_path: Path, *shards: str | tuple[str, range]) -> Path:
    """``tmp_path/in``, with a shard ``<tag>.tsv`` (``write_shard``) per tag or (tag, variants)."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    for shard in shards:
        tag, *variants = shard if isinstance(shard, tuple) else (shard,)
        write_shard(inputs / f"{tag}.tsv", tag, *variants)
    return inputs


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
