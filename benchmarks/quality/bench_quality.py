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
``pivot_sets.py`` (several), and the per-line scores are recomputed in
``line_scores.py`` (bench_signals.py uses both). Why this file is a little
over 600 lines: the planted-line accounting (where each planted line was
stopped) reads the run's manifest and output in one place, beside the
figures it prints, and its flags take some 80 lines.

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
from collections import defaultdict
from pathlib import Path
from typing import Any

# Before torch is imported: spinning OpenMP threads made encoding 5x slower
# on 2-core machines (shared/DESIGN.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from paramine.pipelines.core.groups import pivot_language
from paramine.pipelines.core.language_id import PASSES, LanguageCheck, detector_label
from paramine.pipelines.core.text import trivial_reason

from benchmarks.quality.line_scores import (
    RunPrefilter,
    cached_handler,
    encode_all,
    line_margin_scores,
    line_scores,
    run_prefilter,
)
from benchmarks.quality.noisy_corpus import Corpus, Key, corrupted_pair
from benchmarks.quality.pivot_sets import (
    corrupted_sets,
    find_sets,
    format_pivot_languages,
    pivot_language_figures,
    write_sets,
)


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


def evaluate(
    corpus: Corpus,
    scores: list[float],
    rows: list[dict[str, Any]],
    manifest: Any,
    prefilter: RunPrefilter | None = None,
) -> dict[str, Any]:
    """Precision, recall, noise passed, planted lines and recall losses of one mining run.

    ``prefilter``: the run's prefilter (``run_prefilter``); by default read
    from ``manifest``.
    """
    judged = prefilter or run_prefilter(manifest)
    cut = float(manifest.threshold["value"])
    originals = corpus.originals
    row_keys = [corpus.key(r["pivot_sentence"], r["pivot_lang"]) for r in rows]
    good = sum(
        1
        for r, key in zip(rows, row_keys, strict=True)
        if r["sentence_a"] in originals.get(key, ()) and r["sentence_b"] in originals.get(key, ())
    )
    sides = ("sentence_a", "sentence_b")
    mined = {(key, r[s]) for r, key in zip(rows, row_keys, strict=True) for s in sides}

    # Per (gold group, candidate): the first line's fate, as the pipeline keeps the first.
    fate: dict[tuple[Key, str], str] = {}
    passing: dict[Key, set[str]] = defaultdict(set)
    kept_by_cut = 0
    # The prefilter's duplicate key: both texts and the pivot's language part.
    seen_pairs: set[tuple[str, str, str]] = set()
    reasons: list[str] = []  # per line: the prefilter's drop reason, "" when kept
    lines = [
        (p, c, corpus.pivot_lang_of(i), corpus.lang)
        for i, (p, c) in enumerate(zip(corpus.pivots, corpus.candidates, strict=True))
    ]
    line_reasons = judged.reasons(lines)
    for i, (p, c, score) in enumerate(zip(corpus.pivots, corpus.candidates, scores, strict=True)):
        pivot_lang, kc = corpus.pivot_lang_of(i), (corpus.line_key(i), c)
        reason = line_reasons[i]
        dedup = (p, c, pivot_language(pivot_lang))
        reasons.append(reason or ("duplicate_pair" if dedup in seen_pairs else ""))
        if reason or dedup in seen_pairs:
            fate.setdefault(kc, "prefilter")
            continue
        seen_pairs.add(dedup)
        if score >= cut:
            kept_by_cut += 1
            passing[kc[0]].add(c)
            fate[kc] = "passed"
        else:
            fate.setdefault(kc, "below_cut")

    eligible = [(k, c) for k, cands in originals.items() if len(cands) >= 2 for c in cands]
    found = sum(1 for kc in eligible if kc in mined)
    # Who each sentence is paired with, under any pivot.
    partners: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        partners[r["sentence_a"]].add(r["sentence_b"])
        partners[r["sentence_b"]].add(r["sentence_a"])
    near_equal = float(manifest.options.get("near_equal", 0.95))
    losses: dict[str, int] = defaultdict(int)
    for kc in eligible:
        if kc in mined:
            continue
        where = fate.get(kc, "prefilter")
        if where == "passed":
            where = "singleton" if len(passing[kc[0]]) < 2 else "pairing_postfilter"
        if where == "pairing_postfilter":
            losses[
                pairing_loss(kc, set(originals[kc[0]]), passing[kc[0]], partners, near_equal)
            ] += 1
        losses[where] += 1

    noise = [s for s, r in zip(scores, corpus.replaced, strict=True) if r]
    noise_pass = sum(1 for s in noise if s >= cut)
    planted = planted_fates(corpus, scores, rows, manifest, reasons, judged)
    true_lines = [r for r, replaced in zip(reasons, corpus.replaced, strict=True) if not replaced]
    true_dropped: dict[str, int] = defaultdict(int)
    for reason in true_lines:
        if reason and reason != "duplicate_pair":
            true_dropped[reason] += 1
    recomputed: dict[str, int] = defaultdict(int)
    for reason in reasons:
        if reason:
            recomputed[reason] += 1
    counted = manifest.counts["Prefilter"]["dropped"]
    several = {}
    if corpus.pivot_langs:
        several = {"pivot_languages": pivot_language_figures(corpus, rows, planted["by_language"])}
    return {
        "cut": cut,
        "mode": manifest.threshold.get("mode"),
        "pairs": len(rows),
        "precision": good / max(len(rows), 1),
        "recall": found / max(len(eligible), 1),
        "eligible": len(eligible),
        "noise_passed": noise_pass / max(len(noise), 1),
        "noise_lines": len(noise),
        "noise_in_output": sum(1 for k, c in mined if c not in originals.get(k, ())),
        "planted_in_pairs": planted["in_pairs"],
        "planted_texts_in_output": planted["texts_in_output"],
        "planted": planted["by_label"],
        "planted_passed_prefilter": planted["examples"],
        "kept_by_cut_recomputed": kept_by_cut,
        "kept_by_cut_manifest": manifest.counts["ThresholdFilter"]["kept"],
        # The prefilter's drops of the true (not planted) lines, by reason:
        # the per-line checks that do not fit the language show here.
        "true_lines": len(true_lines),
        "true_dropped_by_prefilter": dict(sorted(true_dropped.items(), key=lambda kv: -kv[1])),
        "true_dropped_share": round(sum(true_dropped.values()) / max(len(true_lines), 1), 4),
        # The recomputed drops are the run's own, reason by reason.
        "prefilter_agrees": dict(recomputed) == {k: v for k, v in counted.items() if v},
        "recall_losses": dict(sorted(losses.items())),
        "fallback": manifest.threshold.get("fallback"),
        **several,
    }


def pairing_loss(
    kc: tuple[Key, str],
    originals: set[str],
    passing: set[str],
    partners: dict[str, set[str]],
    near_equal: float,
) -> str:
    """Why a candidate that passed the cut with a group-mate is in no pair of its pivot.

    ``other_pivot``: its pair with another original of this pivot was written
    once, under another pivot with the same candidates (the post-filter's
    ``duplicate_across_groups``); ``near_equal``: every other candidate of
    the group that passed is a trivial variant of it (the post-filter drops
    such pairs by design); ``pairing``: anything else (the contest or a
    group check after the cut, or the pairing).
    """
    _, candidate = kc
    if partners.get(candidate, set()) & (originals - {candidate}):
        return "other_pivot"
    mates = passing - {candidate}
    if mates and all(trivial_reason(candidate, mate, near_equal) for mate in mates):
        return "near_equal"
    return "pairing"


def detector_says(check: LanguageCheck, text: str, lang: str, top: int = 3) -> str:
    """The language detector's most likely languages for a line declared ``lang``.

    Shares as the check weighs them (its labels, folds summed), and what
    the check finds against the line, e.g. ``cs 0.81, pl 0.17, sk 0.02 -> strong cs``.
    """
    [evidence] = check.judge_many([(text, lang)])
    if evidence is None or evidence == PASSES:
        verdict = "pass" if evidence is not None else "unchecked"
    else:
        verdict = " ".join(
            f"{kind} {','.join(labels)}"
            for kind, labels in (("strong", evidence.strong), ("weak", evidence.weak))
            if labels
        )
    shares: dict[str, float] = defaultdict(float)
    # The check's own detector, restricted to its labels (a benchmark may look inside).
    for name, share in check._load().rank(text):
        shares[detector_label(name)] += share
    ranked = sorted(shares.items(), key=lambda kv: -kv[1])[:top]
    return ", ".join(f"{name} {share:.2f}" for name, share in ranked) + f" -> {verdict}"


def planted_fates(
    corpus: Corpus,
    scores: list[float],
    rows: list[dict[str, Any]],
    manifest: Any,
    reasons: list[str],
    judged: RunPrefilter,
    examples: int = 12,
) -> dict[str, Any]:
    """Where each planted line was stopped, by what was planted; the ones in output pairs.

    A planted line is counted once per (pivot key, text). Its fate: the
    prefilter's reason, ``below_cut`` (its recomputed score), ``later``
    (a group of one, the contest, the group checks or the pairing), or
    ``in_pairs``. Examples: planted lines that passed the prefilter, those
    in output pairs first, with what the language detector said. Where
    pivots have several languages, the same counts per pivot language
    (``by_language``; the language part, as groups are keyed).
    """
    cut = float(manifest.threshold["value"])
    by_pivot: dict[Key, set[str]] = defaultdict(set)
    texts_out: set[str] = set()
    for r in rows:
        key = corpus.key(r["pivot_sentence"], r["pivot_lang"])
        for side in ("sentence_a", "sentence_b"):
            by_pivot[key].add(r[side])
            texts_out.add(r[side])
    any_original = {c for cands in corpus.originals.values() for c in cands}
    # Only to say what the detector thinks: py3langid at the run's ratio.
    check = LanguageCheck((), judged.options.language_ratio or 0.3)
    by_label: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_language: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seen: set[tuple[Key, str]] = set()
    in_pairs = 0
    passed: list[tuple[bool, int]] = []
    planted_texts: set[str] = set()
    labels = corpus.planted or ["planted" if r else "" for r in corpus.replaced]
    for i, (c, label) in enumerate(zip(corpus.candidates, labels, strict=True)):
        key = corpus.line_key(i)
        if not corpus.replaced[i] or (key, c) in seen:
            continue
        seen.add((key, c))
        if c not in any_original:
            planted_texts.add(c)
        tallies = [by_label[label or "planted"]]
        if corpus.pivot_langs:
            tallies.append(by_language[pivot_language(corpus.pivot_langs[i])])
        found = c in by_pivot.get(key, ()) and c not in corpus.originals.get(key, ())
        if reasons[i]:
            fates = [f"prefilter {reasons[i]}"]
        else:
            passed.append((not found, i))
            in_pairs += found
            later = "in_pairs" if found else "below_cut" if scores[i] < cut else "later"
            fates = ["passed_prefilter", later]
        for counts in tallies:
            for what in ("lines", *fates):
                counts[what] += 1
    shown = []
    for missed, i in sorted(passed)[:examples]:
        shown.append(
            {
                "line": i + 1,
                "planted": labels[i],
                "pivot": corpus.pivots[i],
                "candidate": corpus.candidates[i],
                "score": round(scores[i], 4),
                "in_pairs": not missed,
                "detector": detector_says(check, corpus.candidates[i], corpus.lang),
                **({"set": corpus.sets[i]} if corpus.sets else {}),
            }
        )
    return {
        "in_pairs": in_pairs,
        "texts_in_output": len(planted_texts & texts_out),
        "by_label": {k: dict(sorted(v.items())) for k, v in sorted(by_label.items())},
        "by_language": {k: dict(v) for k, v in by_language.items()},
        "examples": shown,
    }


def format_planted(result: dict[str, Any]) -> str:
    """Where the planted lines of one run were stopped, and examples of those that passed."""
    lines = [
        "| planted | lines | stopped by the prefilter (reason: lines) | passed prefilter "
        "| below cut | later | in pairs |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, counts in result["planted"].items():
        stopped = ", ".join(
            f"{k.split(' ', 1)[1]}: {v}" for k, v in counts.items() if k.startswith("prefilter ")
        )
        lines.append(
            f"| {label} | {counts['lines']:,} | {stopped or '-'} "
            f"| {counts.get('passed_prefilter', 0)} | {counts.get('below_cut', 0)} "
            f"| {counts.get('later', 0)} | {counts.get('in_pairs', 0)} |"
        )
    for example in result["planted_passed_prefilter"]:
        where = "IN PAIRS" if example["in_pairs"] else "not in pairs"
        lines.append(
            f"  line {example['line']} ({example['planted']}, {where}, score "
            f"{example['score']}): {example['candidate']!r} for {example['pivot']!r}; "
            f"detector: {example['detector']}"
        )
    return "\n".join(lines)


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


def format_table(corpus_name: str, results: list[tuple[str, dict[str, Any]]]) -> str:
    """A Markdown table of the results of one corpus."""
    lines = [
        f"| {corpus_name} scoring | cut | pairs | precision | recall | noise passed "
        "| agree | recall lost: prefilter / below cut / singleton / pairing "
        "(near-equal, other pivot) | true lines the prefilter dropped (by reason) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r in results:
        lost = r["recall_losses"]
        agree = f"{r['kept_by_cut_recomputed']}/{r['kept_by_cut_manifest']}"
        lines.append(
            f"| {label} | {r['cut']:.4f} | {r['pairs']:,} | {r['precision']:.4f} "
            f"| {r['recall']:.4f} | {r['noise_passed']:.4f} | {agree} "
            f"| {lost.get('prefilter', 0)} / {lost.get('below_cut', 0)} / "
            f"{lost.get('singleton', 0)} / {lost.get('pairing_postfilter', 0)} "
            f"({lost.get('near_equal', 0)}, {lost.get('other_pivot', 0)}) "
            f"| {true_dropped(r)} |"
        )
    return "\n".join(lines)


def true_dropped(result: dict[str, Any]) -> str:
    """``1.2% (wrong_script 8, length_ratio 3)``: the share of true lines the prefilter dropped."""
    reasons = ", ".join(f"{k} {v}" for k, v in result["true_dropped_by_prefilter"].items())
    agrees = "" if result["prefilter_agrees"] else "; recomputed drops differ from the run's"
    return f"{100 * result['true_dropped_share']:.1f}% ({reasons or 'none'}{agrees})"


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
        if manifest.threshold.get("score") == "margin":
            run_scores = line_margin_scores(
                corpus,
                index,
                embeddings,
                int(manifest.threshold["margin_k"]),
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


if __name__ == "__main__":
    raise SystemExit(main())
