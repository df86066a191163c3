"""The prefilter's judge alone, pair by pair against over columns: CPU-us a pair of each.

Issue 75: the prefilter's ``ColumnJudge`` judges a batch's rules as columns
(``stages/filter/rules/column_judge.py``); ``PairJudge`` is the pair-by-pair
path it replaced, kept as the reference. Both judge the same
real pairs here, the aligned lines of Tatoeba test sets (``--pairs``, by
default English pivots with Polish and with Czech candidates, ``--size``
pairs in all, split evenly), in the prefilter's batches of ``BATCH``, with
the curated profile's defaults, without and with the language check.

Each path runs ``--repeats`` times, the two alternating, each run a fresh
judge (and detector: the language check judges every line anew, as on a
dump, its model loaded before the clock starts); CPU seconds by
``time.process_time``, the collector run before and kept off. The runs' CPU-us
a pair are printed, and each path's best.

    python -m benchmarks.speed.bench_judge [--size 20480] [--pairs eng-pol,eng-ces] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.filter.rules.column_judge import ColumnJudge
from paramine.pipelines.stages.filter.rules.detectors import language_detector
from paramine.pipelines.stages.filter.rules.pair_judge import PairJudge, PrefilterOptions

from benchmarks.lib.pair_loop import timed
from benchmarks.lib.real_sentences import Corpus, mine_languages

#: The prefilter's batch (``FilterFn``'s ``BATCH_SIZE``).
BATCH = 1024
DEFAULT_PAIRS = "eng-pol,eng-ces"
#: The two paths: pair by pair, and the prefilter's, over columns.
PATHS: dict[str, type[PairJudge]] = {"objects": PairJudge, "columns": ColumnJudge}

Pair = tuple[str, str, str, str]


def real_pairs(names: Sequence[str], size: int) -> list[Pair]:
    """``size`` aligned pairs, as evenly as they go from each of ``names``' Tatoeba sets."""
    found: list[Pair] = []
    for k, name in enumerate(names):
        pivot_lang, lang = mine_languages(name)
        wanted = (size - len(found)) // (len(names) - k)
        lines = Corpus.read(name).lines
        found += [(pivot, candidate, pivot_lang, lang) for pivot, candidate in lines[:wanted]]
    return found


def options_for(pairs: Sequence[Pair]) -> PrefilterOptions:
    """The curated profile's defaults, as a run of the first pair's languages sets them."""
    _, _, pivot_lang, lang = pairs[0]
    return MiningSettings(src_lang=pivot_lang, tgt_lang=lang).prefilter_options


def run_once(pairs: Sequence[Pair], options: PrefilterOptions, path: str, checked: bool) -> float:
    """CPU seconds of one path (``PATHS``) over ``pairs``, a fresh judge."""
    detector = language_detector(options.language_id) if checked else None
    judge = PATHS[path](options, detector)
    # Every language the pairs declare, judged once: the model loads and is
    # restricted before the clock starts, and no line of ``pairs`` is cached.
    languages = {(pivot_lang, lang) for _, _, pivot_lang, lang in pairs}
    judge.judge([("Warm up.", "Rozgrzewka.", *langs) for langs in sorted(languages)])
    judged: Callable[[Sequence[Pair]], list] = judge.judge
    batches = [pairs[i : i + BATCH] for i in range(0, len(pairs), BATCH)]
    _, seconds = timed(lambda: [judged(batch) for batch in batches])
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=20 * BATCH, help="pairs (default: %(default)s)")
    parser.add_argument(
        "--pairs",
        default=DEFAULT_PAIRS,
        help="Tatoeba pairs, PIVOT-CANDIDATE, comma-separated (default: %(default)s)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (default: 3)")
    args = parser.parse_args(argv)
    pairs = real_pairs(args.pairs.split(","), args.size)
    options = options_for(pairs)
    print(f"{len(pairs):,} pairs ({args.pairs}), batches of {BATCH}, CPU-us a pair")
    for checked in (False, True):
        runs: dict[str, list[float]] = {path: [] for path in PATHS}
        for repeat in range(args.repeats):
            order = list(runs) if repeat % 2 == 0 else list(runs)[::-1]
            for path in order:
                seconds = run_once(pairs, options, path, checked)
                runs[path].append(seconds / len(pairs) * 1e6)
        label = "with the language check" if checked else "without the language check"
        print(label)
        for path, found in runs.items():
            shown = " ".join(f"{us:6.1f}" for us in found)
            print(f"  {path:<14} {shown}   best {min(found):6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
