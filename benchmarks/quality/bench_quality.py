"""Mining quality on real bitext with injected noise: precision, recall, noise passed.

Takes a Moses pair with many-to-one structure (Tatoeba: one English pivot,
several translations), replaces a share of the target lines (seeded) with
noise, mines the corrupted pair with the real pipeline
(``paramine.pipelines.run.mine.run``) once per scoring, and reports. The
noise (``--noise``): random, target lines from elsewhere in the file;
lexical, the target of the most similar source line; language, a
close-language translation of the same or the most similar source sentence;
junk, symbol lines, URLs, untranslated English and markup
(``planted_noise.py``). The figures:

- precision: mined pairs whose two sentences are both original (not
  replaced) translations of their pivot, out of all mined pairs;
- recall: original candidates found in at least one mined pair, out of the
  original candidates of pivots that keep >= 2 distinct original candidates
  after the replacement;
- noise passed: replaced lines whose score reaches the run's cut, out of all
  replaced lines. The pipeline does not write per-line scores, so these are
  recomputed here with the same model, prefix and normalization (and, for
  margin scoring, the same background: the run's calibration sample), and
  compared with the cut from the run's manifest. The column ``agree`` checks
  that recomputation: pairs at or above the cut by our scores versus the
  manifest's ``threshold.kept`` count.

- planted in pairs: planted (pivot, line) pairs found in the output, under
  that pivot; for language and junk noise also every planted text found in
  any output pair, and where each planted line was stopped (the prefilter's
  reason, the cut, the grouping), with examples of those that passed the
  prefilter and what the language detector said about them.

The prefilter's fate of each line is recomputed with the run's own settings
(the manifest's ``filters``: profile, junk rules, language check).

Recall losses of each run are broken down by where a candidate was lost:
prefilter, below the cut, a group left with one candidate, or pairing and
the post-filter; of the last, how many were near-equal to every group-mate
that passed (dropped by design), and how many are in a right pair written
under another pivot with the same candidates (``pairing_loss``).

Several pairs that share a candidate language (``--candidate pol``; a
directory of pairs, x-pol, stands for them all) are mined in one run with
``--src-lang auto``, as the several-pivot Polish dataset is: each pair's
pivot language is read from its file's suffix, noise is planted into every
pair's candidate side, gold groups are keyed as paramine groups (the pivot
language's part and the text key: Tatoeba's jpn, jpn_Hani and jpn_Hira
pivots are one group), and the figures are also given per pivot language
(``pivot_sets.py``).

The corrupted corpus is built in ``noisy_corpus.py`` (one pair) and
``pivot_sets.py`` (several), the per-line scores are recomputed in
``line_scores.py`` (the study ``studies/bench_signals.py`` uses both), and
the figures of a run are counted in ``run_figures.py``.

Usage::

    python -m benchmarks.quality.bench_quality \\
        ../shared/corpora/tatoeba_test_v2021-08-07/eng-pol --noise lexical --rate 0.2
    python -m benchmarks.quality.bench_quality ../shared/corpora/tatoeba_test_v2021-08-07/x-pol \\
        ../shared/corpora/tatoeba_test_v2021-08-07/eng-pol --candidate pol --noise lexical

The table's last column is the share of the true (not planted) lines that
the prefilter dropped, by reason: where a per-line check does not fit a
language. The prefilter's drops are recomputed with the run's own judge and
its sides' decisions (``line_scores.RunPrefilter``), and checked against the
run's counts, reason by reason.

The last line is ``precision=<p> recall=<r> planted_in_pairs=<n>
true_dropped_by_prefilter=<share>`` of the first scoring.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Before torch is imported: spinning OpenMP threads made encoding 5x slower
# on 2-core machines (shared/DESIGN.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


from benchmarks.quality.adapt_rounds import format_rounds, judge_rounds, run_loop
from benchmarks.quality.line_scores import (
    cached_handler,
    encode_all,
    line_margin_scores,
    line_scores,
    run_prefilter,
)
from benchmarks.quality.noisy_corpus import Corpus, corrupted_pair
from benchmarks.quality.pivot_sets import (
    corrupted_sets,
    find_sets,
    format_pivot_languages,
    write_sets,
)
from benchmarks.quality.run_figures import evaluate, format_planted, format_table


def parse_scorings(text: str) -> list[tuple[str, list[str]]]:
    """``fixed:0.7,auto,auto:0.01,margin:auto`` -> (label, mine flags) per scoring.

    ``auto`` is the calibrated cosine (``--score cosine``), whatever the
    pipeline's default score; ``margin:auto`` the calibrated ratio margin.
    """
    out = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        kind, _, arg = item.partition(":")
        if kind == "default" and not arg:  # paramine mine's own defaults
            out.append((item, []))
            continue
        score = "cosine"
        if kind == "margin" and (arg == "auto" or arg.startswith("auto:")):
            score, (kind, _, arg) = "margin", arg.partition(":")
        if kind == "fixed" and arg:
            out.append((item, ["--score", "cosine", "--threshold", arg]))
        elif kind == "auto":
            flags = ["--score", score, "--threshold", "auto"]
            if arg:
                flags += ["--max-false-accept", arg]
            out.append((item, flags))
        else:
            raise SystemExit(
                f"--scorings: {item!r}; allowed: default, fixed:<cosine>, auto, auto:<share>, "
                "margin:auto, margin:auto:<share>"
            )
    return out


def mine(
    inputs: list[Path],
    out: Path,
    pivot_lang: str,
    lang: str,
    model: str,
    flags: list[str],
    cache: Path | None = None,
) -> tuple[list[dict[str, Any]], Any]:
    """Run the pipeline on the corrupted inputs; return its rows and manifest.

    ``pivot_lang``: ``--src-lang`` (``auto`` where pivots have several
    languages). With ``cache``, the encoder's forward pass is replaced by a
    lookup in the embeddings that ``encode_all`` stored (see ``cached_handler``).
    """
    import paramine.pipelines.run.encoder
    from paramine.encoders.inference.handler import EncoderHandler
    from paramine.pipelines.run.mine import run
    from paramine.schemas.reader import read_pairs

    # run.encoder.encoder_for builds the run's handler from this name.
    paramine.pipelines.run.encoder.EncoderHandler = (  # type: ignore[misc]
        cached_handler(cache) if cache else EncoderHandler
    )
    manifest = run(
        [
            *map(str, inputs),
            "--src-lang",
            pivot_lang,
            "--tgt-lang",
            lang,
            "--output",
            str(out),
            "--overwrite",
            "--model",
            model,
            *flags,
            "--runner",
            "FnApiRunner",
        ]
    )
    table, manifest = read_pairs(str(out))
    columns = ["pivot_sentence", "pivot_lang", "sentence_a", "sentence_b"]
    return table.select(columns).to_pylist(), manifest


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The benchmark's flags."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "directories",
        type=Path,
        nargs="+",
        metavar="DIRECTORY",
        help="a Tatoeba language-pair directory; with --candidate, one or more, and a "
        "directory of pair directories (x-pol) stands for them all",
    )
    parser.add_argument(
        "--pivot", default="eng", help="extension of the pivot side of one pair (eng)"
    )
    parser.add_argument(
        "--candidate",
        default=None,
        help="the language every pair shares, the candidate side (pol): each pair's other "
        "file is its pivot side, in the language its suffix names, and the pairs are mined "
        "in one run with --src-lang auto (default: one pair, --pivot and its other side)",
    )
    parser.add_argument(
        "--noise",
        choices=("random", "lexical", "language", "junk"),
        default="random",
        help="random: a replaced target is any other line's; lexical: the target of the "
        "source line sharing the most words with this one; language: a close language's "
        "translation of the same or the most similar source sentence (Czech, Russian, "
        "Ukrainian for Polish; Polish, Slovak, Russian, Ukrainian for Czech; a pivot in "
        "another language than English is matched through the English that Tatoeba "
        "eng-<candidate> aligns with its line, else by its own words, labelled 'loose'); junk: "
        "symbol lines, URLs and e-mail, untranslated pivots with an edit, markup "
        "(default: random)",
    )
    parser.add_argument(
        "--donors",
        type=Path,
        default=None,
        help="folder with tatoeba_test_v2021-08-07/ and laser_tatoeba_v1/, the donors of "
        "--noise language (default: two levels above DIRECTORY, i.e. shared/corpora)",
    )
    parser.add_argument(
        "--rate",
        "--replace-share",
        dest="rate",
        type=float,
        default=0.2,
        help="share of target lines replaced (in every pair), 0 for the clean pair (0.2)",
    )
    parser.add_argument("--seed", type=int, default=13, help="seed of the replacement")
    parser.add_argument("--model", default="e5-small", help="--model of paramine mine")
    parser.add_argument(
        "--scorings",
        default="default",
        help="comma-separated: default (paramine mine's defaults), fixed:<cosine>, auto, "
        "auto:<max false accept> (calibrated cosine), margin:auto, "
        "margin:auto:<max false accept> (calibrated ratio margin)",
    )
    parser.add_argument(
        "--mine-flags",
        default="",
        help="more flags for every paramine mine run, e.g. '--rival-margin off'",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    parser.add_argument(
        "--embeddings-cache",
        type=Path,
        default=None,
        help="an .npz to reuse the per-line embeddings from (written when missing)",
    )
    parser.add_argument(
        "--verify",
        default="",
        help="comma-separated scorings (as in --scorings) to mine once more with the real "
        "encoder (slow), reported as '<scoring> (encoder)'",
    )
    parser.add_argument(
        "--verify-auto",
        action="store_true",
        help="the same as --verify auto",
    )
    parser.add_argument(
        "--adapt",
        action="store_true",
        help="run paramine adapt (mine, train on every aligned line, mine again) on the "
        "corrupted input, planted lines included, and judge every round's pass",
    )
    parser.add_argument(
        "--adapt-flags",
        default="",
        help="more flags for paramine adapt, e.g. '--rounds 2 --train-flags \"--epochs 2\"'",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="keep files here")
    args = parser.parse_args(argv)
    if not 0 <= args.rate < 1:
        parser.error("--rate must be in [0, 1)")
    if len(args.directories) > 1 and args.candidate is None:
        parser.error("several directories need --candidate, the language they share (pol)")
    return args


def corrupted_inputs(args: argparse.Namespace, workdir: Path) -> tuple[list[Path], Corpus, str]:
    """Corrupt the pair (or pairs) and write them for the run: its inputs, the corpus, its name.

    One pair is written as ``bench.<pivot>`` / ``bench.<lang>`` and mined as
    that prefix; several as a directory of pairs (``pivot_sets``), as the
    real several-pivot command reads x-pol.
    """
    if args.candidate is None:
        [directory] = args.directories
        pivots, corrupted, corpus = corrupted_pair(
            directory, args.pivot, args.noise, args.rate, args.seed, args.donors
        )
        (workdir / f"bench.{corpus.pivot_lang}").write_text(
            "\n".join(pivots) + "\n", encoding="utf-8"
        )
        (workdir / f"bench.{corpus.lang}").write_text("\n".join(corrupted) + "\n", encoding="utf-8")
        return [workdir / "bench"], corpus, directory.name
    sets = find_sets(args.directories, args.candidate)
    written, corpus = corrupted_sets(
        sets, args.candidate, args.noise, args.rate, args.seed, args.donors
    )
    folder = write_sets(written, workdir / "sets")
    print(
        f"[bench] {len(sets)} pairs, pivots in "
        f"{', '.join(sorted({s.pivot_lang for s in sets}))}: {len(corpus.pivots):,} lines",
        file=sys.stderr,
    )
    return [folder], corpus, " + ".join(d.name for d in args.directories)


def main(argv: list[str] | None = None) -> int:
    """Corrupt, mine once per scoring, and print the quality table."""
    args = parse_args(argv)
    scorings = parse_scorings(args.scorings)
    verify = parse_scorings(args.verify + (",auto" if args.verify_auto else ""))

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-quality-"))
    workdir.mkdir(parents=True, exist_ok=True)
    inputs, corpus, corpus_name = corrupted_inputs(args, workdir)
    pivot_lang, lang, replaced = corpus.pivot_lang, corpus.lang, corpus.replaced

    if args.adapt:
        return adapt_main(args, workdir, inputs, corpus, corpus_name)
    cache = args.embeddings_cache or workdir / "embeddings.npz"
    index, embeddings = encode_all(corpus, args.model, cache)
    scores = line_scores(corpus, index, embeddings)

    extra = args.mine_flags.split()
    scorings = [(label, flags + extra) for label, flags in scorings]
    verify = [(label, flags + extra) for label, flags in verify]
    runs: list[tuple[str, list[str], Path | None]] = [(lb, f, cache) for lb, f in scorings]
    # Runs with the real encoder: their cuts and figures must match the cached runs'.
    runs += [(f"{lb} (encoder)", f, None) for lb, f in verify]
    results = []
    for label, flags, run_cache in runs:
        start = time.monotonic()
        out = workdir / ("out-" + "".join(c if c.isalnum() else "-" for c in label))
        rows, manifest = mine(inputs, out, pivot_lang, lang, args.model, flags, run_cache)
        run_scores = scores
        prefilter = run_prefilter(manifest)
        if manifest.cut.score == "margin":
            run_scores = line_margin_scores(
                corpus,
                index,
                embeddings,
                manifest.cut.margin_k,  # a margin cut records its k
                int(manifest.options["calibration_sample"]),
                prefilter,
            )
        result = evaluate(corpus, run_scores, rows, manifest, prefilter)
        result["seconds"] = round(time.monotonic() - start, 1)
        result["threshold"] = manifest.threshold
        results.append((label, result))
        print(f"[bench] {label}: {json.dumps(result)}", file=sys.stderr)

    name = f"{corpus_name} ({pivot_lang}->{lang}, {args.noise} noise: "
    name += f"{sum(replaced):,} of {len(replaced):,} "
    name += f"lines replaced, seed {args.seed})"
    print(format_table(corpus_name, results))
    print(f"\n{name}; model {args.model}")
    for label, result in results:
        if "pivot_languages" in result:
            print(f"\n{label}, per pivot language:")
            print(format_pivot_languages(result["pivot_languages"]))
    if sum(replaced):
        for label, result in results:
            print(
                f"\n{label}: planted lines in output pairs {result['planted_in_pairs']}, "
                f"planted texts in any output pair {result['planted_texts_in_output']}"
            )
            print(format_planted(result))
    if args.json:
        args.json.write_text(json.dumps({"corpus": name, "results": dict(results)}, indent=1))
    first = results[0][1]
    print(
        f"precision={first['precision']:.4f} recall={first['recall']:.4f} "
        f"planted_in_pairs={first['planted_in_pairs']} "
        f"true_dropped_by_prefilter={first['true_dropped_share']:.4f}"
    )
    return 0


def adapt_main(
    args: argparse.Namespace, workdir: Path, inputs: list[Path], corpus: Corpus, name: str
) -> int:
    """``--adapt``: the loop on the corrupted input, every round's pass judged."""
    record, seconds = run_loop(
        inputs,
        workdir / "adapt",
        corpus.pivot_lang,
        corpus.lang,
        args.model,
        args.mine_flags + " " + args.adapt_flags,
    )
    results = judge_rounds(corpus, record)
    for label, result in results:
        print(f"[bench] {label}: {json.dumps(result)}", file=sys.stderr)
    print(format_table(name, results))
    print()
    print(format_rounds(results, seconds))
    replaced = corpus.replaced
    print(
        f"\n{name} ({corpus.pivot_lang}->{corpus.lang}, {args.noise} noise: {sum(replaced):,} of "
        f"{len(replaced):,} lines replaced, seed {args.seed}); paramine adapt from {args.model}; "
        f"stopped: {record.stopped}"
    )
    if args.json:
        loop = {"lines": len(replaced), "loop_seconds": round(seconds, 1)}
        args.json.write_text(
            json.dumps({"corpus": name, "results": dict(results), **loop}, indent=1)
        )
    final = results[-1][1]
    print(
        f"precision={final['precision']:.4f} recall={final['recall']:.4f} "
        f"planted_in_pairs={final['planted_in_pairs']} rounds={len(results) - 1} "
        f"minutes={seconds / 60:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
