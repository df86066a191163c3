"""``paramine models``: list the short names, what is cached and where; prune the cache."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from paramine.encoders.models.cache import (
    CachedFolder,
    cache_root,
    cached_folders,
    leftover_temps,
    remove_folder,
    unused_folders,
)
from paramine.encoders.models.hub import hf_cached_snapshot
from paramine.encoders.models.registry import DEFAULT_MODEL, REGISTRY
from paramine.encoders.models.resolve import resolve_model


def status_lines(cache_dir: str | None) -> list[str]:
    """The listing ``paramine models`` prints, one line per entry."""
    from paramine.encoders.models import e5_small

    lines = [f"cache: {cache_root(cache_dir) / 'models'}", "", "models:"]
    for name, entry in REGISTRY.items():
        lines.append(f"  {name}" + (" (default)" if name == DEFAULT_MODEL else ""))
        lines.append(f"      {entry.description}")
        if entry.offline:
            folder = e5_small.find_cached_folder(cache_dir)
            where = (
                f"cached: {folder}"
                if folder
                else "not cached (built on first use, or: paramine models --materialize e5-small)"
            )
        else:
            assert entry.hub_id is not None
            snapshot = hf_cached_snapshot(entry.hub_id)
            where = f"hub id {entry.hub_id}; " + (
                f"in the Hugging Face cache: {snapshot}" if snapshot else "not cached"
            )
        lines.append(f"      {where}")
    lines += [
        "",
        "--model also takes a local sentence-transformers folder, a folder URL "
        "(gs://, s3://, memory://), or a hub id where the hub is reachable.",
    ]
    return [*lines, "", *cached_lines(cache_root(cache_dir))]


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def _folder_line(folder: CachedFolder, root: Path, now: float) -> str:
    days = max(0.0, (now - folder.last_used) / 86400)
    source = f"; from {folder.source}" if folder.source else ""
    return (
        f"  {folder.path.relative_to(root)}  {_mb(folder.size)}, "
        f"last used {days:.1f} days ago{source}"
    )


def cached_lines(root: Path) -> list[str]:
    """The folders paramine built in the cache: size, last use, source."""
    folders = cached_folders(root)
    total = sum(f.size for f in folders)
    lines = [
        f"cached folders: {len(folders)}, {_mb(total)} "
        "(paramine models --prune-unused DAYS removes those unused for DAYS days)"
    ]
    now = time.time()
    return [*lines, *(_folder_line(f, root, now) for f in folders)]


def prune(root: Path, days: float) -> tuple[list[str], int]:
    """Remove the cached folders unused for ``days`` days and dead builds' temporary folders.

    Returns:
        The lines to print (each folder removed or not removable, then the
        totals), and how many folders could not be removed.
    """
    now = time.time()
    lines = []
    removed: list[CachedFolder] = []
    failed = 0
    for folder in unused_folders(root, days):
        try:
            remove_folder(folder.path)
        except FileNotFoundError:
            continue  # another prune got there first
        except OSError as error:
            lines.append(f"could not remove {folder.path}: {error.strerror or error}")
            failed += 1
            continue
        removed.append(folder)
        lines.append("removed" + _folder_line(folder, root, now)[1:])
    temps = leftover_temps(root)
    for temp in temps:
        shutil.rmtree(temp, ignore_errors=True)
        lines.append(f"removed {temp.relative_to(root)} (a build that did not finish)")
    kept = cached_folders(root)
    lines.append(
        f"removed {len(removed)} cached folders ({_mb(sum(f.size for f in removed))}) and "
        f"{len(temps)} temporary ones; kept {len(kept)} ({_mb(sum(f.size for f in kept))})"
    )
    return lines, failed


def main(argv: list[str] | None = None) -> int:
    """``paramine models``: list the short names, what is cached and where."""
    parser = argparse.ArgumentParser(
        prog="paramine models",
        description="List the encoders paramine knows by short name and what is cached.",
    )
    parser.add_argument(
        "--cache-dir",
        default=None,
        help="paramine cache (default: $PARAMINE_CACHE, $XDG_CACHE_HOME/paramine "
        "or ~/.cache/paramine)",
    )
    parser.add_argument(
        "--materialize",
        metavar="NAME",
        choices=[name for name, entry in REGISTRY.items() if entry.offline],
        help="build an offline model into the cache now (e5-small), instead of on first use",
    )
    parser.add_argument(
        "--prune-unused",
        metavar="DAYS",
        type=float,
        help="remove the folders paramine built in the cache (models, URL copies, "
        "backend exports) that no run has used for DAYS days; a removed one is "
        "built again when next needed",
    )
    args = parser.parse_args(argv)
    if args.prune_unused is not None:
        if args.prune_unused < 0:
            parser.error(f"--prune-unused {args.prune_unused:g}: DAYS must be 0 or more")
        lines, failed = prune(cache_root(args.cache_dir), args.prune_unused)
        print("\n".join(lines))
        return 1 if failed else 0
    if args.materialize:
        started = time.perf_counter()
        resolved = resolve_model(args.materialize, args.cache_dir)
        # The listing is the command's output (stdout); so is this line.
        print(
            f"{args.materialize}: {resolved.path} (revision {resolved.revision}) "
            f"in {time.perf_counter() - started:.1f} s"
        )
        print()
    print("\n".join(status_lines(args.cache_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
