"""What one mining run of bench_quality is worth against its corpus's gold, and its tables.

``evaluate`` takes the corrupted corpus, the per-line scores recomputed for
the run (``line_scores``), the run's rows and manifest, and gives precision,
recall, noise passed, where each planted line was stopped
(``planted_fates``), the recall losses by where a candidate was lost
(``pairing_loss``) and the true lines the prefilter dropped, by reason;
``format_table`` and ``format_planted`` print them. bench_quality.py's
docstring defines each figure.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from paramine.pipelines.core.groups import PostFilterOptions, pivot_language
from paramine.pipelines.core.text import trivial_reason
from paramine.pipelines.stages.filter.rules.language_id import PASSES, LanguageCheck, detector_label

from benchmarks.quality.line_scores import RunPrefilter, run_prefilter
from benchmarks.quality.noisy_corpus import Corpus, Key
from benchmarks.quality.pivot_sets import pivot_language_figures


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
    cut = manifest.cut.value
    assert cut is not None, "the benchmarks' runs always cut"
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
    near_equal = float(manifest.options.get("near_equal", PostFilterOptions.near_equal))
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
    counted = manifest.books.stage("Prefilter").dropped
    several = {}
    if corpus.pivot_langs:
        several = {"pivot_languages": pivot_language_figures(corpus, rows, planted["by_language"])}
    return {
        "cut": cut,
        "mode": manifest.cut.mode,
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
        "kept_by_cut_manifest": manifest.books.stage("ThresholdFilter").kept,
        # The prefilter's drops of the true (not planted) lines, by reason:
        # the per-line checks that do not fit the language show here.
        "true_lines": len(true_lines),
        "true_dropped_by_prefilter": dict(sorted(true_dropped.items(), key=lambda kv: -kv[1])),
        "true_dropped_share": round(sum(true_dropped.values()) / max(len(true_lines), 1), 4),
        # The recomputed drops are the run's own, reason by reason.
        "prefilter_agrees": dict(recomputed) == {k: v for k, v in counted.items() if v},
        "recall_losses": dict(sorted(losses.items())),
        "fallback": manifest.cut.fallback,
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
    cut = manifest.cut.value
    assert cut is not None, "the benchmarks' runs always cut"
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
