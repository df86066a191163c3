"""``paramine models``: list the short names, what is cached and where."""

from __future__ import annotations

import argparse
import sys
import time

from paramine.encoders.cache import cache_root
from paramine.encoders.hub import hf_cached_snapshot
from paramine.encoders.models import resolve_model
from paramine.encoders.registry import DEFAULT_MODEL, REGISTRY


def status_lines(cache_dir: str | None) -> list[str]:
    """The listing ``paramine models`` prints, one line per entry."""
    from paramine.encoders import e5_small

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
    return lines


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
    args = parser.parse_args(argv)
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
