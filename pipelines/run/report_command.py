"""``paramine report DIR``: (re)build a finished dataset's report, stats and card."""

from __future__ import annotations

import argparse
import sys

from paramine.schemas.options import ConfigParser


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``paramine report``."""
    parser = ConfigParser(
        prog="paramine report",
        description=(
            "Rebuild report.html, stats.json and the dataset card README.md of a finished "
            "dataset from its manifest and Parquet files (paramine mine writes them at the "
            "end of every run)."
        ),
    )
    parser.add_argument("dataset", metavar="DIR", help="the dataset directory, any fsspec URL")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``paramine report``."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    from paramine.pipelines.report.build import REPORT_NAME, build_report
    from paramine.pipelines.run.progress import silence_third_party

    silence_third_party()
    build_report(args.dataset)
    print(f"paramine: wrote {args.dataset.rstrip('/')}/{REPORT_NAME}", file=sys.stderr)
    return 0
