"""benchmarks/speed/bench_floor.py on bench_scale's input: each step timed, the sum, the rest.

That its loop keeps what the Beam stages keep: tests/benchmarks/lib/test_pair_loop.py.
"""

from __future__ import annotations

import json
import re

import pytest
from paramine.pipelines.core.origins import Origins
from paramine.pipelines.formats import resolve_inputs
from paramine.pipelines.settings.mining import MiningSettings

from benchmarks.lib import pair_loop
from benchmarks.speed import bench_floor
from tests.benchmarks.harness import SCALE_PAIRS

pytestmark = pytest.mark.pipeline


def test_the_script_times_each_step_on_bench_scales_input_and_compares(scale_run, capsys):
    workdir, scale_json, _ = scale_run
    tsv = workdir / "subtitles-2k-seed0.tsv"
    written = tsv.stat().st_mtime_ns
    argv = ["--size", str(SCALE_PAIRS), "--workdir", str(workdir), "--scale-json", str(scale_json)]
    argv += ["--input", "synthetic"]  # the scale run's input
    assert bench_floor.main(argv) == 0
    out = capsys.readouterr().out
    assert tsv.stat().st_mtime_ns == written  # bench_scale's input, read, not written again
    assert out.startswith(f"bench_floor: {SCALE_PAIRS:,} pairs of bench_scale's input, synthetic")
    us = {}
    for line in out.splitlines()[1:]:
        match = re.fullmatch(r"\s+(.+?)\s+(-?[\d.]+) s\s+(-?[\d.]+) CPU-us per input pair", line)
        if match:
            us[match.group(1)] = float(match.group(3))
    steps = ["read", "prefilter", "duplicate search", "group decision"]
    steps = [next(k for k in us if k.startswith(step + " (")) for step in steps]
    assert all(us[step] > 0 for step in steps[:2])
    # The sum is the four steps', and the prefilter's parts are its own (as printed, 0.1 us).
    assert us["sum"] == pytest.approx(sum(us[step] for step in steps), abs=0.25)
    parts = [k for k in us if k.startswith(("of which", "the rest (normalize"))]
    assert len(parts) == 3
    assert sum(us[k] for k in parts) == pytest.approx(us[steps[1]], abs=0.25)
    # The loop's counts: what the pipeline's own stages keep of the same input.
    shards = resolve_inputs([str(tsv)], "en", "pl", "tsv")
    pairs = pair_loop.read_pairs(shards)
    config = MiningSettings(input_format="tsv")
    origins = Origins((s.url for s in shards), (s.corpus for s in shards))
    entries = pair_loop.entries_of(pair_loop.prefilter(pairs, config.prefilter_options, origins))
    kept = pair_loop.first_of_duplicates(entries)
    groups = pair_loop.group_decision(kept, config.max_group_size)
    assert (
        f"({len(entries):,} entries, {len(kept):,} distinct pairs kept, "
        f"{len(groups):,} pivots with two or more candidates)"
    ) in out
    # bench_scale's whole run beside the floor: its CPU-us per pair, and the rest.
    [scale] = json.loads(scale_json.read_text())
    run_us = scale["cpu_seconds"] * 1e6 / SCALE_PAIRS
    scale_line = next(k for k in us if k.startswith("bench_scale: scale.json"))
    # Printed to 0.1 us, as the script rounds it (8041.05 prints as 8041.1, past abs=0.05).
    assert us[scale_line] == float(f"{run_us:.1f}")
    rest = us["the rest: runner, encoder, fixed cost"]
    assert rest == pytest.approx(run_us - us["sum"], abs=0.25)
    assert rest > 0  # a run costs more than its per-pair code
