"""The pipeline's per-pair code in a plain loop, with no runner: what Beam's stages do to each pair.

The real reader (``read_shard``), the prefilter's DoFn (``FilterFn``) over
batches of ``BATCH_SIZE`` as the pipeline hands them, with the pairs held
back for the sides' decisions settled by the functions ``ResolvePending``
calls (``side_decisions``, ``settle``),
the duplicate search (the smallest origin per key, what ``KeepFirst``
keeps) and ``GroupByPivot``'s decision per pivot, each in a dict. bench_floor
times it (the floor under bench_scale's figure), and the peers' comparison
runs it beside OpusFilter; ``tests/benchmarks/lib/test_pair_loop.py`` checks
that it keeps what the Beam stages keep.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

from paramine.pipelines.core.keep_first import first_of_each
from paramine.pipelines.formats import ReaderOptions, read_shard
from paramine.pipelines.stages.filter.prefilter import (
    BATCH_SIZE,
    PENDING,
    FilterFn,
    settle,
    side_decisions,
)
from paramine.pipelines.stages.filter.rules.pair_judge import PrefilterOptions
from paramine.pipelines.stages.group.group_by_pivot import LowestRanksFn, pivot_and_rank
from paramine.schemas.records import AlignedPair
from paramine.schemas.run_counts import LINE_CHECKS


def timed(step: Callable[[], Any]) -> tuple[Any, float]:
    """``step()``'s result and its CPU seconds, with the collector run before and kept off."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        result = step()
        return result, time.process_time() - start
    finally:
        gc.enable()


def read_pairs(shards: list) -> list[AlignedPair]:
    """Every pair the reader makes of ``shards`` (bench_scale's input has no bad line)."""
    options = ReaderOptions()
    return [r for shard in shards for r in read_shard(shard, options) if isinstance(r, AlignedPair)]


def prefilter(pairs: list[AlignedPair], options: PrefilterOptions, origins: Any) -> list:
    """The prefilter DoFn's outputs for ``pairs`` in the pipeline's batches, a fresh worker.

    The pairs it holds back for the sides' decisions are settled at the end
    from the figures it counted, as ``ResolvePending`` settles them: the
    kept ones join the entries.
    """
    from apache_beam.pvalue import TaggedOutput

    fn = FilterFn(options, origins)
    fn.setup()
    fn.start_bundle()
    out: list = []
    for start in range(0, len(pairs), BATCH_SIZE):
        out.extend(fn.process_batch(pairs[start : start + BATCH_SIZE]))
    out.extend(fn.finish_bundle())
    profile: dict[str, int] = {}
    pending = []
    for item in out:
        if isinstance(item, TaggedOutput) and item.tag == LINE_CHECKS:
            _, key, n = item.value.value
            profile[key] = profile.get(key, 0) + n
        elif isinstance(item, TaggedOutput) and item.tag == PENDING:
            pending.append(item.value)
    decisions = side_decisions(profile, options, {})
    for row in pending:
        if not settle(row, decisions, options).reason:
            out.append(row[:2])
    return out


def first_of_duplicates(entries: list) -> dict:
    """The smallest origin of each key: what the duplicate search (``KeepFirst``) keeps."""
    return first_of_each(entries)


def group_decision(kept: dict, cap: int) -> set:
    """``GroupByPivot``'s decision over the kept pairs: the group keys of the pivots that go on."""
    combine = LowestRanksFn(cap)
    ranks: dict = {}
    for key in kept:
        pivot, candidate, _, pivot_lang = key
        group, rank = pivot_and_rank((pivot, candidate, pivot_lang))
        ranks[group] = combine.add_input(ranks.get(group, combine.create_accumulator()), rank)
    return {group for group, acc in ranks.items() if len(combine.extract_output(acc)[1]) >= 2}


def entries_of(outputs: list) -> list:
    """The kept pairs' entries among the prefilter DoFn's outputs (the rest are drop rows).

    Those the DoFn still held at the bundle's end come out as Beam's windowed values.
    """
    from apache_beam.utils.windowed_value import WindowedValue

    values = [o.value if isinstance(o, WindowedValue) else o for o in outputs]
    return [v for v in values if isinstance(v, tuple) and isinstance(v[0], tuple)]
