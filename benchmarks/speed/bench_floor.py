"""The pipeline's own Python per input pair with no runner: the floor under bench_scale's figure.

Issue 30 asks for 60 CPU-us per input pair at 1M synthetic subtitle pairs
(bench_scale, tiny model, in-process runner). This benchmark measures what
is left when Beam is taken away: the same code paramine runs on every input
pair, called in a plain loop in one process (``lib/pair_loop.py``), on
bench_scale's input (the same ``--input``, ``--pair``, size and seed, reused
from ``--workdir`` when it is there; real sentence pairs by default,
``--input synthetic`` for the word-soup input of the figures before issue 75):

- **read**: the real reader (``read_shard``) over the TSV, into records;
- **prefilter**: the prefilter's DoFn (``FilterFn``: normalize, the rules,
  the language check, its per-worker memo) over batches of ``BATCH_SIZE``,
  as the pipeline hands them; then again without the language check, and
  without the junk rules too, which splits its time among them;
- **duplicate search**: the smallest origin per key in a dict (what
  ``KeepFirst`` keeps, without the runner's shuffle);
- **group decision**: ``GroupByPivot``'s key and rank per kept pair and its
  ``LowestRanksFn`` per pivot, in a dict.

Each step's CPU seconds (``time.process_time``, the garbage collector off
during the step: a floor) and CPU-us per input pair are printed, then their
sum. Given bench_scale's ``--json`` of the same
size (``--scale-json``), it also prints that run's CPU-us per input pair and
the rest: the runner's work (encoding, buffering and decoding what crosses
a shuffle), the encoder, and the run's fixed cost (imports, model load,
report). The sum is the floor of the pipeline as written in Python: no
runner can bring a run below it.

    python -m benchmarks.speed.bench_floor [--size 1M] [--input real|synthetic] [--pair eng-pol]
        [--workdir DIR] [--scale-json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from paramine.pipelines.core.origins import Origins
from paramine.pipelines.formats import resolve_inputs
from paramine.pipelines.settings.mining import MiningSettings

from benchmarks.lib.pair_loop import (
    entries_of,
    first_of_duplicates,
    group_decision,
    prefilter,
    read_pairs,
    timed,
)
from benchmarks.lib.real_sentences import DEFAULT_PAIR
from benchmarks.lib.sizes import parse_size
from benchmarks.speed.bench_scale import INPUTS, Input


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=parse_size, default=1_000_000, help="pairs (default 1M)")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed (default 0)")
    parser.add_argument(
        "--input",
        choices=INPUTS,
        default="real",
        help="bench_scale's --input: real sentence pairs resampled (default) or synthetic words",
    )
    parser.add_argument(
        "--pair", default=DEFAULT_PAIR, help=f"the real input's pair (default {DEFAULT_PAIR})"
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        help="bench_scale's --workdir: its input is read there or written (default: temp)",
    )
    parser.add_argument(
        "--scale-json", type=Path, help="bench_scale's --json of the same size, to compare"
    )
    args = parser.parse_args(argv)
    if args.workdir is None:
        with tempfile.TemporaryDirectory(prefix="bench-floor-") as workdir:
            return measure(args, Path(workdir))
    args.workdir.mkdir(parents=True, exist_ok=True)
    return measure(args, args.workdir)


def measure(args: argparse.Namespace, workdir: Path) -> int:
    """Time each step on bench_scale's input in ``workdir``, written there if missing; print."""
    n = args.size
    source = Input(args.input, args.pair)
    tsv = workdir / f"{source.stem(n, args.seed)}.tsv"
    shape_path = tsv.with_suffix(".shape.json")
    if not (tsv.exists() and shape_path.exists()):
        shape_path.write_text(json.dumps(source.write(tsv, n, args.seed)))

    src_lang, tgt_lang = source.languages()
    # What decides the output, as bench_scale's mine gets it; no inputs there.
    config = MiningSettings(input_format="tsv", src_lang=src_lang, tgt_lang=tgt_lang)
    shards = resolve_inputs([str(tsv)], config.src_lang, config.tgt_lang, "tsv")
    options = config.prefilter_options
    origins = Origins((s.url for s in shards), (s.corpus for s in shards))

    pairs, read_s = timed(lambda: read_pairs(shards))
    if len(pairs) != n:
        sys.exit(f"bench_floor: read {len(pairs):,} pairs of {tsv}, expected {n:,}")
    outputs, filter_s = timed(lambda: prefilter(pairs, options, origins))
    _, no_language_s = timed(
        lambda: prefilter(pairs, replace(options, language_ratio=None), origins)
    )
    _, no_rules_s = timed(
        lambda: prefilter(pairs, replace(options, language_ratio=None, junk_rules=()), origins)
    )
    entries = entries_of(outputs)
    kept, dedup_s = timed(lambda: first_of_duplicates(entries))
    groups, group_s = timed(lambda: group_decision(kept, config.max_group_size))

    def us(seconds: float) -> str:
        return f"{seconds:6.1f} s  {seconds * 1e6 / n:6.1f} CPU-us per input pair"

    print(
        f"bench_floor: {n:,} pairs of bench_scale's input, {source} (seed {args.seed}), "
        f"the pipeline's per-pair code in a plain loop, no runner, one process"
    )
    print(f"  read (the TSV reader, into records)      {us(read_s)}")
    print(f"  prefilter (its DoFn, the defaults)       {us(filter_s)}")
    print(f"    of which the language check            {us(filter_s - no_language_s)}")
    print(f"    of which the junk rules                {us(no_language_s - no_rules_s)}")
    print(f"    the rest (normalize, lengths, memo)    {us(no_rules_s)}")
    print(f"  duplicate search (a dict)                {us(dedup_s)}")
    print(f"  group decision (ranks per pivot, a dict) {us(group_s)}")
    total = read_s + filter_s + dedup_s + group_s
    print(f"  sum                                      {us(total)}")
    print(
        f"  ({len(entries):,} entries, {len(kept):,} distinct pairs kept, "
        f"{len(groups):,} pivots with two or more candidates)"
    )
    if args.scale_json:
        runs = [r for r in json.loads(args.scale_json.read_text()) if r.get("n") == n]
        if not runs:
            sys.exit(f"bench_floor: {args.scale_json} has no run of {n:,} pairs")
        run_s = runs[-1]["cpu_seconds"]
        print(f"  {'bench_scale: ' + args.scale_json.name:<41}{us(run_s)}")
        print(f"  {'the rest: runner, encoder, fixed cost':<41}{us(run_s - total)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
