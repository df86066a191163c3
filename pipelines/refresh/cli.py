"""``paramine refresh``: the command line of a refresh, of ``--history`` and of ``--compact``.

The refresh itself (update.py: the mining graph, preflight and deployment) is
imported only when a refresh runs; ``--history`` and ``--compact`` need only
the tables.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from paramine.pipelines.refresh.config import absolute, load_config
from paramine.pipelines.refresh.table import compact, history
from paramine.schemas.errors import UsageError
from paramine.schemas.options import ConfigParser


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``paramine refresh``."""
    parser = ConfigParser(
        prog="paramine refresh",
        description=(
            "Mine the shards that are new or changed since the last commit of the config's "
            "output table, retract the rows of changed and removed shards, re-mine every pivot "
            "they touch with its old candidates, and commit the result to the Delta Lake table "
            "atomically. With nothing new it commits nothing and says so."
        ),
        epilog="Other arguments are passed to Beam after the config's beam_args.",
    )
    parser.add_argument(
        "config", metavar="CONFIG", nargs="?", help="refresh config (YAML), any fsspec URL"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would be mined and retracted; mine and commit nothing",
    )
    parser.add_argument(
        "--mine-all",
        action="store_true",
        help="mine every shard again, as a change of settings does, so that every line is "
        "judged by the per-line checks' decisions of today (a refresh says when they moved)",
    )
    parser.add_argument(
        "--history",
        metavar="ROOT",
        help="list the commits of the table at ROOT with their counts, and exit",
    )
    parser.add_argument(
        "--compact",
        metavar="ROOT",
        help="merge the small files of each bucket of the table at ROOT (one commit per "
        "table), and exit",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``paramine refresh``."""
    parser = build_parser()
    args, extra = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    if args.history or args.compact:
        if args.config or extra:
            raise UsageError("--history and --compact take a table ROOT and nothing else")
        root = absolute(args.history or args.compact).rstrip("/")
        if args.history:
            print("\n".join(history(root)))
        else:
            for url, metrics in compact(root).items():
                print(
                    f"{url}: {metrics.get('numFilesRemoved', 0)} files merged into "
                    f"{metrics.get('numFilesAdded', 0)}"
                )
        return 0
    if not args.config:
        raise UsageError("give a refresh CONFIG (or --history ROOT)")
    config = load_config(args.config)
    if extra:
        config = dataclasses.replace(config, beam_args=[*config.beam_args, *extra])

    from paramine.pipelines.refresh.update import refresh

    refresh(config, dry_run=args.dry_run, mine_all=args.mine_all)
    return 0
