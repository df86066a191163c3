"""``paramine refresh CONFIG``: mine only new or changed shards into a new dataset version.

An output root holds versions and a pointer to the newest committed one::

    OUTPUT/
      _LATEST                      "v=20261121T085408Z\\n"
      v=20261120T020000Z/
        mined/                     a complete ``paramine mine`` dataset (its own manifest)
        manifest.json              the version: every pairs file it holds, incl. references
      v=20261121T085408Z/
        mined/                     pairs of the shards new or changed since the last version
        manifest.json              lists mined/pairs/... and ../v=20261120T020000Z/mined/pairs/...

A run fingerprints the input shards (size, mtime, etag or checksum, through
fsspec), compares them with the latest version's manifest, mines the shards
that are new or changed in one ``paramine mine`` run (a "batch"), writes the
new version's manifest last, and then points ``_LATEST`` at it. A run killed
at any point before that pointer moves leaves the previous version as the
latest; the next run starts over. See docs/refresh.md for the design.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import posixpath
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import fsspec
import yaml
from paramine.pipelines.accounting import NOTES
from paramine.pipelines.config import DEFAULT_MODEL, DEFAULT_RUNNER, MineConfig
from paramine.pipelines.fingerprint import fingerprint
from paramine.pipelines.formats import Shard, resolve_inputs
from paramine.schemas.digest import text_digest
from paramine.schemas.errors import InputError, UsageError
from paramine.schemas.manifest import (
    MANIFEST_NAME,
    IncompleteDatasetError,
    Manifest,
    read_manifest,
    write_manifest,
)
from paramine.schemas.storage import atomic_write

LATEST_NAME = "_LATEST"
VERSION_PREFIX = "v="
VERSION_FORMAT = "%Y%m%dT%H%M%SZ"
MINED_DIR = "mined"
REFRESH_FORMAT = "paramine.refresh/1"

CONFIG_KEYS = ("output", "inputs", "src_lang", "tgt_lang", "model", "options", "beam_args", "keep")
#: Settings that refresh owns: a version's inputs and output are not the user's to set.
RESERVED_OPTIONS = ("output", "overwrite", "inputs", "input_list", "src_lang", "tgt_lang", "model")
DEFAULT_KEEP = 5
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
        output: The output root (any fsspec URL): versions and ``_LATEST``.
        inputs: Files, globs, directories or Moses prefixes, as for ``mine``.
        src_lang: Pivot language.
        tgt_lang: Candidate language.
        model: The encoder, as ``mine --model``.
        options: Other ``paramine mine`` flags, ``{flag: value}`` without the
            dashes; ``true`` for a switch.
        beam_args: Beam and deployment flags passed through unchanged, e.g.
            ``--runner=DataflowRunner``.
        keep: Committed versions to keep (versions they reference are kept too).
    """

    output: str
    inputs: list[str]
    src_lang: str = "en"
    tgt_lang: str = "pl"
    model: str = DEFAULT_MODEL
    options: dict[str, Any] = field(default_factory=dict)
    beam_args: list[str] = field(default_factory=lambda: [f"--runner={DEFAULT_RUNNER}"])
    keep: int = DEFAULT_KEEP
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
    keep = data.get("keep", DEFAULT_KEEP)
    if not isinstance(keep, int) or keep < 1:
        raise UsageError(f"{path}: 'keep' must be a positive integer, got {keep!r}")
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
            keep=keep,
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


@dataclass
class Plan:
    """What a refresh does: which shards to mine, which batches to carry over.

    Attributes:
        previous: The latest committed version, or ``None`` on the first run.
        to_mine: Shards to mine in this run.
        reasons: Why each shard is mined, by shard key: ``new``, ``changed``,
            ``batch-mate`` (mined with a changed or removed shard, whose pairs
            cannot be separated from it) or ``settings changed``.
        carried: Batches of the previous version kept as they are.
        dropped: Batches of the previous version that this version leaves out.
        removed: Keys of shards that are no longer among the inputs.
    """

    previous: str | None
    to_mine: list[Shard]
    reasons: dict[str, str]
    carried: list[dict[str, Any]]
    dropped: list[dict[str, Any]]
    removed: list[str]

    @property
    def nothing_to_do(self) -> bool:
        """No shard to mine and no batch to drop: the latest version is current."""
        return self.previous is not None and not self.to_mine and not self.dropped


def plan_refresh(
    config: RefreshConfig, shards: list[Shard], previous: tuple[str, Manifest] | None
) -> Plan:
    """Compare the shards with the latest version and decide what to mine.

    Args:
        config: The refresh config.
        shards: The shards the inputs resolve to now.
        previous: The latest committed version's name and manifest, if any.
    """
    if previous is None:
        return Plan(None, list(shards), {shard_key(s.files): "new" for s in shards}, [], [], [])
    name, manifest = previous
    state = manifest.extra.get("refresh", {})
    batches: list[dict[str, Any]] = list(state.get("batches", []))
    if state.get("config_fingerprint") != config.fingerprint():
        return Plan(
            name,
            list(shards),
            {shard_key(s.files): "settings changed" for s in shards},
            [],
            batches,
            [],
        )
    current = {shard_key(s.files): s for s in shards}
    mined_before: dict[str, tuple[int, list[dict[str, Any]]]] = {}
    for i, batch in enumerate(batches):
        for entry in batch["inputs"]:
            fps = entry["files"]
            mined_before[shard_key(fp["url"] for fp in fps)] = (i, fps)

    reasons: dict[str, str] = {}
    stale: set[int] = set()
    for key, shard in current.items():
        if key not in mined_before:
            reasons[key] = "new"
            continue
        batch_index, old = mined_before[key]
        if not same_content(old, [fingerprint(f) for f in shard.files]):
            reasons[key] = "changed"
            stale.add(batch_index)
    removed = sorted(set(mined_before) - set(current))
    stale |= {mined_before[key][0] for key in removed}
    # A batch's pairs are mixed across its shards (groups span them), so a
    # batch with one changed or removed shard is dropped whole and its
    # unchanged shards are mined again.
    for key, (batch_index, _) in mined_before.items():
        if batch_index in stale and key in current and key not in reasons:
            reasons[key] = "batch-mate"
    to_mine = [s for k, s in current.items() if k in reasons]
    carried = [b for i, b in enumerate(batches) if i not in stale]
    dropped = [b for i, b in enumerate(batches) if i in stale]
    return Plan(name, to_mine, reasons, carried, dropped, removed)


# Versions and the _LATEST pointer


def _join(root: str, *parts: str) -> str:
    return "/".join([root.rstrip("/"), *parts])


def read_latest(root: str) -> str | None:
    """The name of the latest committed version under ``root``, or ``None``."""
    fs, path = fsspec.core.url_to_fs(_join(root, LATEST_NAME))
    if not fs.exists(path):
        return None
    name = fs.cat_file(path).decode("utf-8").strip()
    if not name.startswith(VERSION_PREFIX) or "/" in name:
        raise ValueError(f"{root}/{LATEST_NAME} holds {name!r}, not a version name v=<timestamp>")
    return name


def latest_url(root: str) -> str:
    """The URL of the latest committed version: what readers open with ``read_pairs``.

    Raises:
        IncompleteDatasetError: Nothing has been committed under ``root``.
    """
    name = read_latest(root)
    if name is None:
        raise IncompleteDatasetError(f"{root} has no {LATEST_NAME}: no refresh has committed")
    return _join(root, name)


def write_latest(root: str, version: str) -> None:
    """Point ``_LATEST`` at ``version`` atomically (``paramine.schemas.storage.atomic_write``)."""
    atomic_write(_join(root, LATEST_NAME), version + "\n")


def list_versions(root: str) -> list[str]:
    """Names of the version directories under ``root``, oldest first (committed or not)."""
    fs, path = fsspec.core.url_to_fs(root)
    if not fs.exists(path):
        return []
    names = [posixpath.basename(p.rstrip("/")) for p in fs.ls(path, detail=False)]
    return sorted(n for n in names if n.startswith(VERSION_PREFIX))


def is_committed(root: str, version: str) -> bool:
    """Whether a version's manifest was written (its directory is complete)."""
    fs, path = fsspec.core.url_to_fs(_join(root, version, MANIFEST_NAME))
    return bool(fs.exists(path))


def new_version_name(root: str, now: dt.datetime) -> str:
    """A version name after every existing one: ``v=<UTC timestamp>``.

    Names sort by time; two runs in one second (or a clock behind the last
    version) move to the next free second, so a newer version never sorts
    before an older one.
    """
    existing = list_versions(root)
    stamp = now.astimezone(dt.timezone.utc).replace(microsecond=0)
    if existing:
        last = dt.datetime.strptime(existing[-1][len(VERSION_PREFIX) :], VERSION_FORMAT)
        last = last.replace(tzinfo=dt.timezone.utc)
        stamp = max(stamp, last + dt.timedelta(seconds=1))
    return VERSION_PREFIX + stamp.strftime(VERSION_FORMAT)


def referenced_versions(manifest: Manifest) -> set[str]:
    """The versions whose files a version's manifest lists (its own included)."""
    return {b["version"] for b in manifest.extra.get("refresh", {}).get("batches", [])}


def prune(root: str, keep: int) -> list[str]:
    """Delete old versions: keep the newest ``keep`` committed ones and all they reference.

    Uncommitted directories older than ``_LATEST`` are what killed runs left
    behind, and go too. Refreshes of one root must not run concurrently (see
    docs/refresh.md): a second run's directory would look abandoned.

    Returns:
        The names of the deleted versions.
    """
    if keep < 1:
        raise ValueError(f"keep must be at least 1, got {keep}")
    latest = read_latest(root)
    if latest is None:
        return []
    versions = list_versions(root)
    committed = [v for v in versions if v <= latest and is_committed(root, v)]
    kept = set(committed[-keep:])
    for version in list(kept):
        kept |= referenced_versions(read_manifest(_join(root, version)))
    deleted = []
    for version in versions:
        if version in kept or version >= latest:
            continue
        fs, path = fsspec.core.url_to_fs(_join(root, version))
        # The manifest first: a half-deleted version must read as incomplete.
        manifest = _join(path, MANIFEST_NAME)
        if fs.exists(manifest):
            fs.rm(manifest)
        fs.rm(path, recursive=True)
        deleted.append(version)
    return deleted


# Committing a version


def _sum_counts(batches: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Stage counts of a version: the sum of its batches' (each balances, so the sum does)."""
    total: dict[str, dict[str, Any]] = {}
    stages = [name for batch in batches for name in batch["counts"] if name not in NOTES]
    for stage in dict.fromkeys(stages):
        merged: dict[str, Any] = {"in": 0, "kept": 0, "dropped": {}}
        for batch in batches:
            c = batch["counts"].get(stage, {"in": 0, "kept": 0, "dropped": {}})
            merged["in"] += c["in"]
            merged["kept"] += c["kept"]
            for reason, n in c["dropped"].items():
                merged["dropped"][reason] = merged["dropped"].get(reason, 0) + n
        merged["dropped"] = dict(sorted(merged["dropped"].items()))
        total[stage] = merged
    return total


def batch_from_manifest(version: str, mined: Manifest) -> dict[str, Any]:
    """Describe one mining run's output as a batch of a version."""
    return {
        "version": version,
        "dir": f"{version}/{MINED_DIR}",
        "inputs": mined.inputs,
        "files": mined.files,
        "rows": mined.rows,
        "counts": mined.counts,
        "threshold": mined.threshold,
        "model": mined.model,
        "created_at": mined.created_at,
    }


def version_manifest(
    version: str,
    batches: list[dict[str, Any]],
    config: RefreshConfig,
    plan: Plan,
    code_version: str,
) -> Manifest:
    """The manifest of a version: its batches' files relative to its directory."""
    files: dict[str, list[str]] = {"pairs": [], "rejects": []}
    for batch in batches:
        # "../v=<old>/mined/pairs/part-..." for carried batches: relative to
        # this version's directory, which is what read_pairs joins names to.
        base = MINED_DIR if batch["version"] == version else f"../{batch['dir']}"
        for table in files:
            files[table] += [f"{base}/{name}" for name in batch["files"].get(table, [])]
    model = batches[-1]["model"] if batches else {"spec": config.model}
    return Manifest(
        created_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        code_version=code_version,
        options={
            "refresh": {
                "inputs": config.inputs,
                "mine_settings": config.mine_settings(),
                "beam_args": config.beam_args,
                "keep": config.keep,
            }
        },
        model=model,
        threshold={
            "mode": "per_batch",
            "value": None,
            "batches": {b["dir"]: b["threshold"] for b in batches},
        },
        inputs=[entry for b in batches for entry in b["inputs"]],
        counts=_sum_counts(batches),
        files=files,
        rows={t: sum(b["rows"].get(t, 0) for b in batches) for t in ("pairs", "rejects")},
        extra={
            "refresh": {
                "format": REFRESH_FORMAT,
                "version": version,
                "previous": plan.previous,
                "config_fingerprint": config.fingerprint(),
                "batches": batches,
                "mined": sorted(shard_key(s.files) for s in plan.to_mine),
                "reasons": plan.reasons,
                "removed": plan.removed,
            }
        },
    )


def commit_manifest(root: str, version: str, manifest: Manifest) -> None:
    """Write the version's manifest: from here on the version is complete.

    A separate step so that tests can kill a run right before it.
    """
    write_manifest(_join(root, version), manifest)


@dataclass
class RefreshResult:
    """What a refresh did."""

    version: str | None
    plan: Plan
    manifest: Manifest | None
    pruned: list[str]

    @property
    def noop(self) -> bool:
        """Nothing was new: no version was committed."""
        return self.version is None


def _describe(plan: Plan) -> list[str]:
    lines = [f"paramine refresh: latest version {plan.previous or '(none: first run)'}"]
    tally: dict[str, int] = {}
    for reason in plan.reasons.values():
        tally[reason] = tally.get(reason, 0) + 1
    carried_shards = sum(len(b["inputs"]) for b in plan.carried)
    summary = ", ".join(f"{n} {reason}" for reason, n in sorted(tally.items()))
    lines.append(f"  shards to mine: {len(plan.to_mine)}" + (f" ({summary})" if summary else ""))
    lines.append(f"  shards carried over: {carried_shards} in {len(plan.carried)} batch(es)")
    if plan.removed:
        lines.append(f"  shards removed from the inputs: {len(plan.removed)}")
    for shard in plan.to_mine:
        lines.append(
            f"    mine  {shard_key(shard.files)}  ({plan.reasons[shard_key(shard.files)]})"
        )
    return lines


def refresh(
    config: RefreshConfig,
    keep: int | None = None,
    dry_run: bool = False,
    now: dt.datetime | None = None,
    log: Any = None,
) -> RefreshResult:
    """Run one refresh: plan, mine what is new, commit a version, move ``_LATEST``, prune.

    Args:
        config: The refresh config.
        keep: Versions to keep; ``config.keep`` by default.
        dry_run: Print the plan and stop.
        now: The time that names the new version (tests).
        log: Where progress lines go; stderr by default.
    """
    from paramine.pipelines import mine

    out = log or sys.stderr
    root = config.output
    keep = config.keep if keep is None else keep
    shards = resolve_inputs(
        config.inputs,
        config.src_lang,
        config.tgt_lang,
        config.mine.input_format,
        config.mine.corpus,
    )
    latest = read_latest(root)
    previous = (latest, read_manifest(_join(root, latest))) if latest else None
    plan = plan_refresh(config, shards, previous)
    for line in _describe(plan):
        print(line, file=out)
    if plan.nothing_to_do:
        print(f"paramine refresh: nothing new since {latest}; no new version", file=out)
        return RefreshResult(None, plan, None, [])
    if dry_run:
        print("paramine refresh: dry run, nothing mined or committed", file=out)
        return RefreshResult(None, plan, None, [])

    version = new_version_name(root, now or dt.datetime.now(dt.timezone.utc))
    batches = list(plan.carried)
    if plan.to_mine:
        print(f"paramine refresh: mining {len(plan.to_mine)} shard(s) into {version}", file=out)
        batch_config = config.mine.replace(
            inputs=tuple(s.url for s in plan.to_mine), output=_join(root, version, MINED_DIR)
        )
        mined = mine.run_config(batch_config, config.beam_args).manifest
        batches.append(batch_from_manifest(version, mined))
    manifest = version_manifest(version, batches, config, plan, mine.code_version())
    commit_manifest(root, version, manifest)
    write_latest(root, version)
    pruned = prune(root, keep)
    mined_rows = batches[-1]["rows"]["pairs"] if plan.to_mine else 0
    print(
        f"paramine refresh: committed {version}: {manifest.rows['pairs']:,} pairs "
        f"({mined_rows:,} mined now, {manifest.rows['pairs'] - mined_rows:,} carried over); "
        f"{LATEST_NAME} -> {version}",
        file=out,
    )
    if pruned:
        print(f"paramine refresh: deleted old versions {', '.join(pruned)}", file=out)
    return RefreshResult(version, plan, manifest, pruned)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``paramine refresh``."""
    parser = argparse.ArgumentParser(
        prog="paramine refresh",
        description=(
            "Mine only the shards that are new or changed since the latest version under "
            "the config's output root, commit a new version v=<timestamp>/ (new pairs plus "
            "references to the pairs carried over), then move _LATEST to it. With nothing "
            "new it does nothing and says so."
        ),
        epilog="Other arguments are passed to Beam after the config's beam_args.",
    )
    parser.add_argument("config", metavar="CONFIG", help="refresh config (YAML), any fsspec URL")
    parser.add_argument(
        "--keep",
        type=int,
        default=None,
        help=f"committed versions to keep, plus those they reference (default: the config's "
        f"keep, else {DEFAULT_KEEP})",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be mined and carried over; mine and commit nothing",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``paramine refresh``."""
    parser = build_parser()
    args, extra = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if args.keep is not None and args.keep < 1:
        raise UsageError(f"--keep must be at least 1, got {args.keep}")
    try:
        config = load_config(args.config)
    except OSError as error:
        raise InputError(f"{args.config}: cannot read the refresh config ({error})") from None
    if extra:
        config = dataclasses.replace(config, beam_args=[*config.beam_args, *extra])
    refresh(config, keep=args.keep, dry_run=args.dry_run)
    return 0
