"""Which aligned lines of a pass would train, counted against the clean input's true lines.

A mining pass with ``--write-scored`` (bench_quality's runs, or a round of
``paramine adapt``) keeps every aligned line with its score; a round of the
adapt recipe trains on those that pass the null's cut
(``encoders/training/aligned.py``). Given the clean sets the noisy input was
made from, this counts the planted and the true lines among the training
rows at each ``--aligned-max-true-loss``::

    python -m benchmarks.quality.aligned_rows W/adapt/rounds/round-0/dataset \\
        --clean ../shared/corpora/tatoeba_test_v2021-08-07/small/eng-kab --candidate kab

A line is true where its (pivot, candidate) is a line pair of a clean set;
every other line of the pass is a planted one.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from paramine.encoders.training.aligned import aligned_lines
from paramine.encoders.training.config import DEFAULT_ALIGNED_FALSE_ACCEPT
from paramine.pipelines.adapt.settings import AdaptSettings
from paramine.schemas.manifest import read_manifest
from paramine.schemas.reader import read_scored


def true_pairs(folders: Sequence[Path], candidate: str) -> set[tuple[str, str]]:
    """Every (pivot, candidate) line pair of the clean sets: two text files a folder.

    The candidate's file is the one whose suffix is ``candidate``; labels
    files (``*.labels``) are not read.
    """
    pairs: set[tuple[str, str]] = set()
    for folder in folders:
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix != ".labels")
        texts = {p.suffix.lstrip("."): p.read_text(encoding="utf-8").split("\n") for p in files}
        if candidate not in texts or len(texts) != 2:
            raise SystemExit(f"{folder}: expected two text files, one of them *.{candidate}")
        [pivot] = [lang for lang in texts if lang != candidate]
        pairs |= set(zip(texts[pivot], texts[candidate], strict=True))
    return pairs


#: The share of pivots ``paramine adapt`` holds out (``--held-out``): their lines never train.
HELD_OUT = AdaptSettings.__dataclass_fields__["held_out"].default


def count_rows(
    dataset: str,
    clean: set[tuple[str, str]],
    true_losses: Sequence[float],
    held_out: float = HELD_OUT,
) -> list[dict[str, float | int | None]]:
    """The training split's rows at each ``max_true_loss``: the share chosen, planted and true."""
    scored, _ = read_scored(dataset)
    frame = scored.to_pandas()
    cut = read_manifest(dataset).cut
    rows = []
    for loss in true_losses:
        lines = aligned_lines(frame, cut, held_out, DEFAULT_ALIGNED_FALSE_ACCEPT, loss)
        pairs = zip(lines.train["pivot"], lines.train["candidate"], strict=True)
        planted = sum(1 for pair in pairs if pair not in clean)
        rows.append(
            {
                "max_true_loss": loss,
                "false_accept": lines.counts["false_accept"],
                "mismatched_share": lines.counts["mismatched_share"],
                "planted": planted,
                "true": len(lines.train) - planted,
            }
        )
    return rows


def table(rows: list[dict[str, float | int | None]]) -> str:
    """The counts as a Markdown table."""
    out = [
        "| --aligned-max-true-loss | share chosen | mismatched, estimated "
        "| planted rows | true rows |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        estimate = "-" if r["mismatched_share"] is None else f"{r['mismatched_share']:.3f}"
        out.append(
            f"| {r['max_true_loss']} | {r['false_accept']} | {estimate} "
            f"| {r['planted']:,} | {r['true']:,} |"
        )
    return "\n".join(out)


def pass_arguments(description: str) -> argparse.ArgumentParser:
    """A parser of a pass (``--write-scored``) and the clean sets its input was made from."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("dataset", help="a pass's dataset, mined with --write-scored")
    parser.add_argument("--clean", nargs="+", type=Path, required=True, help="the clean sets")
    parser.add_argument("--candidate", required=True, help="the candidate side's file suffix")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = pass_arguments(__doc__.split("\n\n")[0])
    parser.add_argument(
        "--true-loss", default="0,0.02,0.05", help="the shares to count at (default 0,0.02,0.05)"
    )
    args = parser.parse_args(argv)
    losses = [float(v) for v in args.true_loss.split(",")]
    print(table(count_rows(args.dataset, true_pairs(args.clean, args.candidate), losses)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
