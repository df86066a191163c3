"""What a finished mining run prints: the books, the sides' checks, the cut, a second pass."""

from __future__ import annotations

import json
import os

import fsspec
from paramine.pipelines.stages.filter.rules.line_check_record import summary_lines
from paramine.schemas.manifest import Manifest


def run_summary(manifest: Manifest, output: str, seconds: float) -> str:
    """What a finished run prints: each stage's books, in the order of the run's stages."""
    counts = manifest.books
    stages = [stage["name"] for stage in manifest.stages]
    width = max(map(len, stages)) + 2
    read = counts.stage(stages[0]).taken_in
    lines = [
        f"paramine: mined {output if '://' in output else os.path.abspath(output)}",
        f"  {'stage':<{width}} {'in':>10} {'kept':>10}",
    ]
    for name in stages:
        books = counts.stage(name)
        lines.append(f"  {name:<{width}} {books.taken_in:>10,} {books.kept:>10,}")
        for reason, n in books.dropped.items():
            lines.append(f"    dropped {reason:<{width + 12}} {n:>8,}")
    for reason, n in counts.note("repairs").items():
        lines.append(f"    repaired and kept {reason:<{width + 2}} {n:>8,}")
    lines += summary_lines(manifest.line_checks)
    cut = manifest.cut
    lines += [
        f"  cut {cut.value} ({cut.mode}, {cut.score})",
        f"  pairs written {manifest.rows.pairs:,}; {seconds:,.1f} s, "
        f"{read / max(seconds, 1e-9):,.0f} records/s",
    ]
    encoding = manifest.extra.encoding
    if encoding:
        lines.append(
            f"  texts encoded {encoding['texts_encoded']:,} "
            f"({encoding['texts_per_input_pair']:.3f} per input pair, the calibration "
            f"sample's included; {encoding['single_candidate_share']:.1%} of input pairs "
            "had a single-candidate pivot and were never encoded)"
        )
    return "\n".join(lines)


def second_pass_line(output: str) -> str | None:
    """A second pass's pairs against its first's, from the report's stats (None otherwise)."""
    try:
        with fsspec.open(f"{output.rstrip('/')}/stats.json", "r", encoding="utf-8") as f:
            found = json.load(f).get("first_pass")
    except (OSError, ValueError):
        return None
    if not found or "error" in found:
        return None
    return (
        f"  second pass: {found['pairs']:,} pairs, {found['also_in_first_pass']:,} also in the "
        f"first pass ({found['dataset']}), {found['new']:,} new; "
        f"{found['first_pass_pairs_not_found_again']:,} of its {found['first_pass_pairs']:,} "
        "not found again"
    )
