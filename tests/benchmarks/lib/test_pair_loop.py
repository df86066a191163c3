"""benchmarks/lib/pair_loop.py does the pipeline's per-pair work: the same pairs and groups kept.

The floor that bench_floor prints is only a floor of *this* pipeline if the
plain loop keeps what the Beam stages keep; these tests run both on one
synthetic input.
"""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.core.groups import group_key
from paramine.pipelines.core.origins import Origins
from paramine.pipelines.formats import resolve_inputs
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.filter.prefilter import Prefilter
from paramine.pipelines.stages.group.group_by_pivot import GroupByPivot

from benchmarks.lib import pair_loop
from benchmarks.lib.synthetic import write_tsv


@pytest.fixture(scope="module")
def floor_run(tmp_path_factory):
    """3,000 synthetic subtitle pairs through the floor's loop, with what it was given."""
    tsv = tmp_path_factory.mktemp("floor") / "subtitles.tsv"
    write_tsv(tsv, 3_000, seed=0)
    config = MiningSettings(input_format="tsv")
    shards = resolve_inputs([str(tsv)], config.src_lang, config.tgt_lang, "tsv")
    origins = Origins((s.url for s in shards), (s.corpus for s in shards))
    options = config.prefilter_options
    pairs = pair_loop.read_pairs(shards)
    outputs = pair_loop.prefilter(pairs, options, origins)
    kept = pair_loop.first_of_duplicates(pair_loop.entries_of(outputs))
    groups = pair_loop.group_decision(kept, config.max_group_size)
    return shards, pairs, options, config, kept, groups


def test_the_loop_reads_every_pair_and_keeps_some(floor_run):
    _, pairs, _, _, kept, groups = floor_run
    assert len(pairs) == 3_000
    # Duplicates and rule drops leave fewer, and some pivots have two candidates.
    assert 0 < len(kept) < len(pairs)
    assert groups


@pytest.mark.pipeline
def test_the_loop_keeps_the_pairs_the_prefilter_keeps(floor_run):
    shards, pairs, options, _, kept, _ = floor_run
    with TestPipeline(runner="FnApiRunner") as p:
        prefiltered = p | beam.Create(pairs) | Prefilter(options, shards)
        assert_that(prefiltered.entries, equal_to(list(kept.items())))


@pytest.mark.pipeline
def test_the_loop_sends_on_the_groups_group_by_pivot_sends_on(floor_run):
    shards, pairs, options, config, _, groups = floor_run
    origins = Origins((s.url for s in shards), (s.corpus for s in shards))
    with TestPipeline(runner="FnApiRunner") as p:
        prefiltered = p | beam.Create(pairs) | Prefilter(options, shards)
        grouped = prefiltered.entries | GroupByPivot(config.group_options, origins)
        keys = (
            grouped.kept
            | beam.Map(lambda pair: group_key(pair.pivot_lang, pair.pivot))
            | beam.Distinct()
        )
        assert_that(keys, equal_to(sorted(groups)))
