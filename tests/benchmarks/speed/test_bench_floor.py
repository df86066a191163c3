"""benchmarks/speed/bench_floor.py does the pipeline's per-pair work: the same pairs and groups.

The floor it prints is only a floor of *this* pipeline if its plain loop
keeps what the Beam stages keep; these tests run both on one synthetic input.
"""

from __future__ import annotations

import json
import re

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.core.groups import group_key
from paramine.pipelines.core.origins import Origins
from paramine.pipelines.formats import resolve_inputs
from paramine.pipelines.mining.read_and_prefilter import prefilter_options
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.group_by_pivot import GroupByPivot
from paramine.pipelines.stages.prefilter import Prefilter

from benchmarks.speed import bench_floor
from tests.benchmarks.harness import SCALE_PAIRS


@pytest.fixture(scope="module")
def floor_run(tmp_path_factory):
    """3,000 synthetic subtitle pairs through the floor's loop, with what it was given."""
    tsv = tmp_path_factory.mktemp("floor") / "subtitles.tsv"
    bench_floor.write_tsv(tsv, 3_000, seed=0)
    config = MiningSettings(input_format="tsv")
    shards = resolve_inputs([str(tsv)], config.src_lang, config.tgt_lang, "tsv")
    origins = Origins((s.url for s in shards), (s.corpus for s in shards))
    options = prefilter_options(config)
    pairs = bench_floor.read_pairs(shards)
    outputs = bench_floor.prefilter(pairs, options, origins)
    kept = bench_floor.first_of_duplicates(bench_floor.entries_of(outputs))
    groups = bench_floor.group_decision(kept, config.max_group_size)
    return shards, pairs, options, config, kept, groups


def test_the_loop_reads_every_pair_and_keeps_some(floor_run):
    _, pairs, _, _, kept, groups = floor_run
    assert len(pairs) == 3_000
    # Duplicates and rule drops leave fewer, and some pivots have two candidates.
    assert 0 < len(kept) < len(pairs)
    assert groups


def test_the_loop_keeps_the_pairs_the_prefilter_keeps(floor_run):
    shards, pairs, options, _, kept, _ = floor_run
    with TestPipeline(runner="FnApiRunner") as p:
        prefiltered = p | beam.Create(pairs) | Prefilter(options, shards)
        assert_that(prefiltered.entries, equal_to(list(kept.items())))


def test_the_loop_sends_on_the_groups_group_by_pivot_sends_on(floor_run):
    shards, pairs, options, config, _, groups = floor_run
    origins = Origins((s.url for s in shards), (s.corpus for s in shards))
    with TestPipeline(runner="FnApiRunner") as p:
        prefiltered = p | beam.Create(pairs) | Prefilter(options, shards)
        grouped = prefiltered.entries | GroupByPivot(config.max_group_size, origins)
        keys = (
            grouped.kept
            | beam.Map(lambda pair: group_key(pair.pivot_lang, pair.pivot))
            | beam.Distinct()
        )
        assert_that(keys, equal_to(sorted(groups)))


def test_the_script_times_each_step_on_bench_scales_input_and_compares(scale_run, capsys):
    workdir, scale_json, _ = scale_run
    tsv = workdir / "subtitles-2k-seed0.tsv"
    written = tsv.stat().st_mtime_ns
    argv = ["--size", str(SCALE_PAIRS), "--workdir", str(workdir), "--scale-json", str(scale_json)]
    assert bench_floor.main(argv) == 0
    out = capsys.readouterr().out
    assert tsv.stat().st_mtime_ns == written  # bench_scale's input, read, not written again
    assert out.startswith(f"bench_floor: {SCALE_PAIRS:,} pairs of bench_scale's input (seed 0)")
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
    pairs = bench_floor.read_pairs(shards)
    config = MiningSettings(input_format="tsv")
    origins = Origins((s.url for s in shards), (s.corpus for s in shards))
    entries = bench_floor.entries_of(
        bench_floor.prefilter(pairs, prefilter_options(config), origins)
    )
    kept = bench_floor.first_of_duplicates(entries)
    groups = bench_floor.group_decision(kept, config.max_group_size)
    assert (
        f"({len(entries):,} entries, {len(kept):,} distinct pairs kept, "
        f"{len(groups):,} pivots with two or more candidates)"
    ) in out
    # bench_scale's whole run beside the floor: its CPU-us per pair, and the rest.
    [scale] = json.loads(scale_json.read_text())
    run_us = scale["cpu_seconds"] * 1e6 / SCALE_PAIRS
    scale_line = next(k for k in us if k.startswith("bench_scale: scale.json"))
    assert us[scale_line] == pytest.approx(run_us, abs=0.05)
    rest = us["the rest: runner, encoder, fixed cost"]
    assert rest == pytest.approx(run_us - us["sum"], abs=0.25)
    assert rest > 0  # a run costs more than its per-pair code
