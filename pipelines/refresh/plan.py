"""The plan of a refresh: which shards to mine and which to retract, from their fingerprints.

The inputs resolve to shards; each is fingerprinted and compared with the
shards that the last commit recorded: new, changed, removed or unchanged. A
change of the mining settings re-mines every shard. Nothing new, changed or
removed: the table is current and nothing is committed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from paramine.pipelines.formats import Shard
from paramine.pipelines.refresh.config import RefreshConfig
from paramine.pipelines.run.input_fingerprint import fingerprint

#: The key of a commit's record that holds the ``line_checks`` figures of
#: every line the table's commits have read (``Plan.earlier_figures``).
LINE_CHECK_FIGURES = "line_check_figures"


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


@dataclass
class Plan:
    """What a refresh does.

    Attributes:
        previous: The pairs table version of the last paramine commit, or
            ``None`` when the table has none yet.
        to_mine: Shards to mine in this run.
        reasons: Why each shard is mined, by shard key: ``new``, ``changed``,
            ``settings changed`` or ``requested`` (``--mine-all``).
        retracted: Shard keys whose rows leave the state (changed or removed).
        removed: Keys of shards that are no longer among the inputs.
        shards: The shards the table holds after this run: key -> record
            (``url``, ``format``, ``corpus``, ``files`` fingerprints).
        earlier_figures: The ``line_checks`` figures of every line the
            table's commits have read, which this run's decisions about each
            side count too (``stages.filter.rules.line_checks.with_earlier``); none when
            every shard is mined again (a change of settings, ``--mine-all``),
            or when the last commit is older than the figures. Those of a
            changed or removed shard stay in them: they are not kept per shard.
    """

    previous: int | None
    to_mine: list[Shard]
    reasons: dict[str, str]
    retracted: list[str]
    removed: list[str]
    shards: dict[str, dict[str, Any]]
    #: ``AlignedPair.shard`` of the retracted shards' rows.
    retracted_urls: frozenset[str] = frozenset()
    earlier_figures: dict[str, int] = field(default_factory=dict)

    @property
    def nothing_to_do(self) -> bool:
        """Nothing to mine and nothing to retract: the table is current."""
        return self.previous is not None and not self.to_mine and not self.retracted

    def describe(self) -> list[str]:
        """The plan as the lines a refresh prints before it mines (or says it will not)."""
        previous = "none (first run)" if self.previous is None else f"version {self.previous}"
        lines = [f"paramine refresh: last commit {previous}"]
        tally: dict[str, int] = {}
        for reason in self.reasons.values():
            tally[reason] = tally.get(reason, 0) + 1
        summary = ", ".join(f"{n} {reason}" for reason, n in sorted(tally.items()))
        lines.append(
            f"  shards to mine: {len(self.to_mine)}" + (f" ({summary})" if summary else "")
        )
        if self.retracted:
            lines.append(
                f"  shards retracted: {len(self.retracted)} ({len(self.removed)} no longer among "
                "the inputs)"
            )
        for shard in self.to_mine:
            key = shard_key(shard.files)
            lines.append(f"    mine     {key}  ({self.reasons[key]})")
        for key in self.removed:
            lines.append(f"    retract  {key}  (removed)")
        if self.nothing_to_do:
            lines.append(
                f"paramine refresh: nothing new since version {self.previous}; nothing committed"
            )
        return lines


def shard_record(shard: Shard) -> dict[str, Any]:
    """What a commit records of a shard: enough to spot a change and to retract its rows."""
    return {
        "url": shard.url,
        "format": shard.format,
        "corpus": shard.corpus,
        "files": [fingerprint(f) for f in shard.files],
    }


def plan_refresh(
    config: RefreshConfig,
    shards: list[Shard],
    previous: tuple[int, dict[str, Any]] | None,
    mine_all: bool = False,
) -> Plan:
    """Compare the shards with the last commit's and decide what to mine and retract.

    Args:
        config: The refresh config.
        shards: The shards the inputs resolve to now.
        previous: The version and paramine record of the last commit, if any.
        mine_all: Mine every shard again (``--mine-all``), as a change of
            settings does: every line is judged by today's decisions.
    """
    now = {shard_key(s.files): (s, shard_record(s)) for s in shards}
    records = {key: record for key, (_, record) in now.items()}
    if previous is None:
        return Plan(None, list(shards), {k: "new" for k in now}, [], [], records)
    version, record = previous
    before: dict[str, dict[str, Any]] = record.get("shards", {})
    changed = record.get("config_fingerprint") != config.fingerprint()
    if changed or mine_all:
        urls = frozenset(r["url"] for r in before.values())
        reasons = {k: "settings changed" if changed else "requested" for k in now}
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
    earlier = dict(record.get(LINE_CHECK_FIGURES) or {})
    return Plan(version, to_mine, reasons, retracted, removed, records, urls, earlier)
