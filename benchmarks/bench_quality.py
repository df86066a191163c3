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

Usage::

    python benchmarks/bench_quality.py \\
        ../shared/corpora/tatoeba_test_v2021-08-07/eng-pol --noise lexical --rate 0.2

The last line is ``precision=<p> recall=<r> planted_in_pairs=<n>`` of the
first scoring.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Before torch is imported: spinning OpenMP threads made encoding 5x slower
# on 2-core machines (shared/DESIGN.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paramine.pipelines.core.cuts import sample_rank
from paramine.pipelines.core.groups import pivot_key
from paramine.pipelines.core.junk import Limits
from paramine.pipelines.core.language_id import LanguageCheck, detector_label
from paramine.pipelines.core.text import canonical_lang, comparison_key, normalize, trivial_reason
from paramine.pipelines.stages.prefilter import PrefilterOptions, prefilter_reason
from paramine.schemas.records import AlignedPair, ScoredPair
from planted_noise import corrupt_junk, corrupt_language, load_donors

TATOEBA_STEM = "tatoeba-test-v2021-08-07"
WORD = re.compile(r"\w+")


@dataclass
class Corpus:
    """The corrupted bitext and what is known about every line of it."""

    pivots: list[str]  # normalized pivot of each line
    candidates: list[str]  # normalized candidate of each line (after replacement)
    replaced: list[bool]
    pivot_lang: str
    lang: str
    # pivot key -> distinct original (not replaced) candidates
    originals: dict[str, set[str]] = field(default_factory=dict)
    # per line: what was planted there (donor language, junk kind), "" for none
    planted: list[str] = field(default_factory=list)


def find_sides(directory: Path, pivot: str) -> tuple[Path, Path]:
    """Return the pivot-side and target-side files of a Moses pair directory."""
    files = sorted(
        p for p in directory.iterdir() if p.is_file() and p.suffix and p.suffix != ".labels"
    )
    files = [p for p in files if p.name.startswith(TATOEBA_STEM + ".")] or files
    sides = [p for p in files if len(p.suffix) in (3, 4) and p.suffix[1:].isalpha()]
    pivots = [p for p in sides if p.suffix[1:] == pivot]
    targets = [p for p in sides if p.suffix[1:] != pivot]
    if len(pivots) != 1 or len(targets) != 1:
        raise SystemExit(
            f"{directory}: expected one .{pivot} file and one target file, found "
            f"{[p.name for p in sides]}; use --pivot to name the pivot's extension"
        )
    return pivots[0], targets[0]


def read_lines(path: Path) -> list[str]:
    """Lines of a Moses file, line ends stripped."""
    with path.open(encoding="utf-8") as handle:
        return [line.rstrip("\n").rstrip("\r") for line in handle]


def corrupt(
    pivots: list[str], targets: list[str], share: float, seed: int
) -> tuple[list[str], list[bool]]:
    """Replace ``share`` of the target lines with target lines from elsewhere.

    A donor line is drawn at random from the whole file; it is redrawn when
    it could be a true translation of the pivot (same pivot, or a text that
    the file already aligns with this pivot), so every replaced line is
    noise.
    """
    rng = random.Random(seed)
    n = len(targets)
    aligned: dict[str, set[str]] = defaultdict(set)
    for p, t in zip(pivots, targets, strict=True):
        aligned[pivot_key(normalize(p))].add(normalize(t))
    chosen = sorted(rng.sample(range(n), round(share * n)))
    out = list(targets)
    replaced = [False] * n
    for i in chosen:
        key = pivot_key(normalize(pivots[i]))
        while True:
            j = rng.randrange(n)
            if key != pivot_key(normalize(pivots[j])) and normalize(targets[j]) not in aligned[key]:
                break
        out[i] = targets[j]
        replaced[i] = True
    return out, replaced


def lexical_donors(pivots: list[str], chosen: list[int]) -> dict[int, int]:
    """For each chosen line i: the line j whose source shares most lowercase words with i's.

    Ties go to the lowest j; a j whose normalized source equals line i's is
    never taken (its target could be a true translation of the same pivot).
    """
    words = [set(WORD.findall(p.lower())) for p in pivots]
    keys = [pivot_key(normalize(p)) for p in pivots]
    holders: dict[str, list[int]] = defaultdict(list)  # word -> lines holding it
    for j, ws in enumerate(words):
        for w in ws:
            holders[w].append(j)
    donors = {}
    for i in chosen:
        shared: dict[int, int] = defaultdict(int)
        for w in words[i]:
            for j in holders[w]:
                shared[j] += 1
        best = min(
            (j for j in shared if keys[j] != keys[i]),
            key=lambda j: (-shared[j], j),
            default=None,
        )
        if best is None:  # shares no word with any other source: any other line
            best = next(j for j in range(len(pivots)) if keys[j] != keys[i])
        donors[i] = best
    return donors


def corrupt_lexical(
    pivots: list[str], targets: list[str], share: float, seed: int
) -> tuple[list[str], list[bool]]:
    """Replace ``share`` of the target lines with the translation of a similar source.

    The replacement of line i is line j's target, where j is the source line
    sharing the most lowercase words with line i's (``lexical_donors``): the
    plausible misalignment of subtitle and web corpora, not a random line.
    """
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(targets)), round(share * len(targets))))
    out = list(targets)
    replaced = [False] * len(targets)
    for i, j in lexical_donors(pivots, chosen).items():
        out[i] = targets[j]
        # A donor identical to the original is no noise at all.
        replaced[i] = normalize(targets[j]) != normalize(targets[i])
    return out, replaced


def build_corpus(
    pivots: list[str],
    targets: list[str],
    replaced: list[bool],
    pivot_lang: str,
    lang: str,
    planted: list[str] | None = None,
) -> Corpus:
    """Normalize the lines as the pipeline does, and index the original candidates."""
    corpus = Corpus(
        pivots=[normalize(p) for p in pivots],
        candidates=[normalize(t) for t in targets],
        replaced=replaced,
        pivot_lang=pivot_lang,
        lang=lang,
        planted=planted or ["planted" if r else "" for r in replaced],
    )
    originals: dict[str, set[str]] = defaultdict(set)
    for p, c, r in zip(corpus.pivots, corpus.candidates, replaced, strict=True):
        if not r and p and c:
            originals[pivot_key(p)].add(c)
    corpus.originals = dict(originals)
    return corpus


def corrupted_pair(
    directory: Path,
    pivot: str,
    noise: str,
    rate: float,
    seed: int,
    donor_root: Path | None = None,
) -> tuple[list[str], list[str], Corpus]:
    """Read a Tatoeba pair and replace ``rate`` of its target lines with ``noise``.

    ``donor_root`` holds the close-language donors of ``language`` noise
    (``planted_noise.load_donors``); by default shared/corpora, two levels
    above ``directory``.

    Returns the pivot lines, the target lines after the replacement, and the
    corpus that labels them.
    """
    pivot_path, target_path = find_sides(directory, pivot)
    pivot_lang = canonical_lang(pivot_path.suffix[1:])
    lang = canonical_lang(target_path.suffix[1:])
    pivots, targets = read_lines(pivot_path), read_lines(target_path)
    planted: list[str] | None = None
    if noise == "language":
        donors = load_donors(lang, donor_root or directory.resolve().parents[1])
        corrupted, replaced, planted = corrupt_language(pivots, targets, rate, seed, donors)
    elif noise == "junk":
        corrupted, replaced, planted = corrupt_junk(pivots, targets, rate, seed, lang)
    else:
        replace = corrupt_lexical if noise == "lexical" else corrupt
        corrupted, replaced = replace(pivots, targets, rate, seed)
    corpus = build_corpus(pivots, corrupted, replaced, pivot_lang, lang, planted)
    return pivots, corrupted, corpus


def encode_all(
    corpus: Corpus, model_spec: str, cache: Path | None = None
) -> tuple[dict[str, int], Any]:
    """Encode every distinct text once, as the pipeline's handler does.

    With ``cache``, reuses an ``.npz`` of (texts, emb) written by an earlier
    run with the same model: only the texts it lacks are encoded, and the
    union is written back (one cache serves every noise of a corpus). A
    text's embedding does not depend on the others encoded with it.
    """
    import numpy as np
    from paramine.encoders.models import resolve_model
    from sentence_transformers import SentenceTransformer

    resolved = resolve_model(model_spec)
    texts = sorted(set(corpus.pivots) | set(corpus.candidates))
    known: list[str] = []
    known_emb = None
    if cache is not None and cache.exists():
        stored = np.load(cache, allow_pickle=True)
        if str(stored["model"]) == resolved.revision:
            known, known_emb = [str(t) for t in stored["texts"]], stored["emb"]
    index = {t: i for i, t in enumerate(known)}
    missing = [t for t in texts if t not in index]
    if not missing:
        return index, known_emb
    model = SentenceTransformer(resolved.path, device="cpu")
    start = time.monotonic()
    embeddings = model.encode(
        [resolved.prefix + t for t in missing],
        batch_size=128,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    ).astype("float32")  # (missing, dim)
    print(
        f"[bench] encoded {len(missing):,} distinct texts in {time.monotonic() - start:.0f} s",
        file=sys.stderr,
    )
    if known_emb is not None:
        embeddings = np.concatenate([known_emb, embeddings])
    texts = known + missing
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(
            cache,
            texts=np.array(texts, dtype=object),
            emb=embeddings,
            model=np.array(resolved.revision),
        )
    return {t: i for i, t in enumerate(texts)}, embeddings


def line_scores(corpus: Corpus, index: dict[str, int], embeddings: Any) -> list[float]:
    """Cosine of every line's (pivot, candidate), from the shared embeddings."""
    import numpy as np

    p = embeddings[[index[t] for t in corpus.pivots]]  # (lines, dim)
    c = embeddings[[index[t] for t in corpus.candidates]]  # (lines, dim)
    return [float(x) for x in np.einsum("ij,ij->i", p, c)]


def run_prefilter(manifest: Any) -> tuple[PrefilterOptions, LanguageCheck | None]:
    """The prefilter's settings of a run, from its manifest (the profile's, resolved)."""
    options = manifest.options
    filters = options.get("filters") or {}
    limits = Limits()
    prefilter = PrefilterOptions(
        min_words=int(options.get("min_words", 1)),
        max_words=int(options.get("max_words", 80)),
        max_length_ratio=float(options.get("max_length_ratio", 2.5)),
        sentence_count_filter=bool(options.get("sentence_count_filter", False)),
        junk_rules=tuple(filters.get("junk_rules") or ()),
        limits=Limits(
            float(filters.get("min_letter_share", limits.min_letter_share)),
            float(filters.get("min_script_share", limits.min_script_share)),
        ),
        language_ratio=filters.get("language_check"),
    )
    ratio = prefilter.language_ratio
    return prefilter, (LanguageCheck((), ratio) if ratio is not None else None)


def line_margin_scores(
    corpus: Corpus,
    index: dict[str, int],
    embeddings: Any,
    k: int,
    sample_size: int,
    prefilter: tuple[PrefilterOptions, LanguageCheck | None] | None = None,
) -> list[float]:
    """Ratio margin of every line's (pivot, candidate), as a margin run scores it.

    The background is rebuilt the pipeline's way: the prefiltered, deduplicated
    pairs with the ``sample_size`` smallest calibration hashes. ``prefilter``:
    the run's settings (``run_prefilter``); by default ``PrefilterOptions()``.
    """
    import numpy as np
    from paramine.pipelines.core.margin import build_background, margin_scores

    options, languages = prefilter or (PrefilterOptions(), None)
    kept: set[tuple[str, str]] = set()
    for p, c in zip(corpus.pivots, corpus.candidates, strict=True):
        pair = AlignedPair(p, c, corpus.pivot_lang, corpus.lang, "bench", "bench", 0)
        if not prefilter_reason(pair, options, languages):
            kept.add((p, c))
    pairs = [
        AlignedPair(p, c, corpus.pivot_lang, corpus.lang, "bench", "bench", 0) for p, c in kept
    ]
    sample = sorted(pairs, key=sample_rank)[:sample_size]
    background = build_background(
        [
            ScoredPair(a, 0.0, embeddings[index[a.pivot]], embeddings[index[a.candidate]])
            for a in sample
        ]
    )
    p = embeddings[[index[t] for t in corpus.pivots]]  # (lines, dim)
    c = embeddings[[index[t] for t in corpus.candidates]]  # (lines, dim)
    keys = [
        (pivot_key(a), comparison_key(b))
        for a, b in zip(corpus.pivots, corpus.candidates, strict=True)
    ]
    return [float(x) for x in np.asarray(margin_scores(background, p, c, keys, k))]


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
    prefilter: tuple[PrefilterOptions, LanguageCheck | None] | None = None,
) -> dict[str, Any]:
    """Precision, recall, noise passed, planted lines and recall losses of one mining run.

    ``prefilter``: the run's settings (``run_prefilter``); by default read
    from ``manifest``.
    """
    options, languages = prefilter or run_prefilter(manifest)
    cut = float(manifest.threshold["value"])
    originals = corpus.originals
    good = sum(
        1
        for r in rows
        if r["sentence_a"] in originals.get(pivot_key(r["pivot_sentence"]), ())
        and r["sentence_b"] in originals.get(pivot_key(r["pivot_sentence"]), ())
    )
    mined = {
        (pivot_key(r["pivot_sentence"]), r[s]) for r in rows for s in ("sentence_a", "sentence_b")
    }

    # Per (pivot key, candidate): the first line's fate, as the pipeline keeps the first.
    fate: dict[tuple[str, str], str] = {}
    passing: dict[str, set[str]] = defaultdict(set)
    kept_by_cut = 0
    seen_pairs: set[tuple[str, str]] = set()
    reasons: list[str] = []  # per line: the prefilter's drop reason, "" when kept
    for p, c, score in zip(corpus.pivots, corpus.candidates, scores, strict=True):
        pair = AlignedPair(p, c, corpus.pivot_lang, corpus.lang, "bench", "bench", 0)
        reason = prefilter_reason(pair, options, languages)
        reasons.append(reason or ("duplicate_pair" if (p, c) in seen_pairs else ""))
        if reason or (p, c) in seen_pairs:
            fate.setdefault((pivot_key(p), c), "prefilter")
            continue
        seen_pairs.add((p, c))
        if score >= cut:
            kept_by_cut += 1
            passing[pivot_key(p)].add(c)
            fate[(pivot_key(p), c)] = "passed"
        else:
            fate.setdefault((pivot_key(p), c), "below_cut")

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
    planted = planted_fates(corpus, scores, rows, manifest, reasons, languages)
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
        "kept_by_cut_manifest": manifest.counts["threshold"]["kept"],
        "recall_losses": dict(sorted(losses.items())),
        "fallback": manifest.threshold.get("fallback"),
    }


def pairing_loss(
    kc: tuple[str, str],
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

    Shares as the check weighs them (its labels, folds summed), and whether
    the line passes the check's ratio rule, e.g. ``cs 0.81, pl 0.17, sk 0.02 -> pass``.
    """
    verdict = "pass" if check.passes(text, lang) else "drop"
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
    languages: LanguageCheck | None,
    examples: int = 12,
) -> dict[str, Any]:
    """Where each planted line was stopped, by what was planted; the ones in output pairs.

    A planted line is counted once per (pivot key, text). Its fate: the
    prefilter's reason, ``below_cut`` (its recomputed score), ``later``
    (a group of one, the contest, the group checks or the pairing), or
    ``in_pairs``. Examples: planted lines that passed the prefilter, those
    in output pairs first, with what the language detector said.
    """
    cut = float(manifest.threshold["value"])
    by_pivot: dict[str, set[str]] = defaultdict(set)
    texts_out: set[str] = set()
    for r in rows:
        key = pivot_key(r["pivot_sentence"])
        for side in ("sentence_a", "sentence_b"):
            by_pivot[key].add(r[side])
            texts_out.add(r[side])
    any_original = {c for cands in corpus.originals.values() for c in cands}
    check = languages or LanguageCheck((), 0.5)  # only to say what the detector thinks
    by_label: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seen: set[tuple[str, str]] = set()
    in_pairs = 0
    passed: list[tuple[bool, int]] = []
    planted_texts: set[str] = set()
    labels = corpus.planted or ["planted" if r else "" for r in corpus.replaced]
    for i, (p, c, label) in enumerate(zip(corpus.pivots, corpus.candidates, labels, strict=True)):
        if not corpus.replaced[i] or (pivot_key(p), c) in seen:
            continue
        seen.add((pivot_key(p), c))
        if c not in any_original:
            planted_texts.add(c)
        counts = by_label[label or "planted"]
        counts["lines"] += 1
        found = c in by_pivot.get(pivot_key(p), ()) and c not in corpus.originals.get(
            pivot_key(p), ()
        )
        if reasons[i]:
            counts[f"prefilter {reasons[i]}"] += 1
            continue
        passed.append((not found, i))
        counts["passed_prefilter"] += 1
        if found:
            in_pairs += 1
            counts["in_pairs"] += 1
        elif scores[i] < cut:
            counts["below_cut"] += 1
        else:
            counts["later"] += 1
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
            }
        )
    return {
        "in_pairs": in_pairs,
        "texts_in_output": len(planted_texts & texts_out),
        "by_label": {k: dict(sorted(v.items())) for k, v in sorted(by_label.items())},
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


class _LookupModel:
    """Stands in for a SentenceTransformer: returns stored embeddings of texts."""

    def __init__(self, cache: Path, prefix: str) -> None:
        import numpy as np

        stored = np.load(cache, allow_pickle=True)
        self.index = {str(t): i for i, t in enumerate(stored["texts"])}
        self.embeddings = stored["emb"]
        self.prefix = prefix

    def preprocess(self, texts: list[str]) -> dict[str, Any]:
        """One token per text: ``encode_unpadded`` then looks all of them up at once."""
        import torch

        return {"attention_mask": torch.ones((len(texts), 1), dtype=torch.long)}

    def get_embedding_dimension(self) -> int:
        return int(self.embeddings.shape[1])

    def encode(self, texts: list[str], **_: Any) -> Any:
        n = len(self.prefix)
        return self.embeddings[[self.index[t[n:]] for t in texts]]


def cached_handler(cache: Path) -> type:
    """An ``EncoderHandler`` whose model looks embeddings up in ``cache``.

    Everything else is the pipeline's own: batching, the cosine, the
    calibration sample and shifts, the cut, grouping, pairing, post-filter.
    Only the encoder's forward pass is memoized, so the scores are the same
    model's (up to float noise from batch padding).
    """
    from paramine.encoders.handler import EncoderHandler, LoadedEncoder

    class CachedEncoderHandler(EncoderHandler):
        def load_model(self) -> Any:
            return LoadedEncoder(_LookupModel(cache, self.prefix))

    return CachedEncoderHandler


def mine(
    prefix: Path,
    out: Path,
    pivot_lang: str,
    lang: str,
    model: str,
    flags: list[str],
    cache: Path | None = None,
) -> tuple[list[dict[str, Any]], Any]:
    """Run the pipeline on the corrupted pair; return its rows and manifest.

    With ``cache``, the encoder's forward pass is replaced by a lookup in the
    embeddings that ``encode_all`` stored (see ``cached_handler``).
    """
    import paramine.pipelines.mine_paraphrases
    from paramine.encoders.handler import EncoderHandler
    from paramine.pipelines.run.mine import run
    from paramine.schemas.reader import read_pairs

    # mine_paraphrases.encoder_handler builds the handler from this name.
    paramine.pipelines.mine_paraphrases.EncoderHandler = (  # type: ignore[misc]
        cached_handler(cache) if cache else EncoderHandler
    )
    manifest = run(
        [
            str(prefix),
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
    return table.select(["pivot_sentence", "sentence_a", "sentence_b"]).to_pylist(), manifest


def format_table(corpus_name: str, results: list[tuple[str, dict[str, Any]]]) -> str:
    """A Markdown table of the results of one corpus."""
    lines = [
        f"| {corpus_name} scoring | cut | pairs | precision | recall | noise passed "
        "| agree | recall lost: prefilter / below cut / singleton / pairing "
        "(near-equal, other pivot) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, r in results:
        lost = r["recall_losses"]
        agree = f"{r['kept_by_cut_recomputed']}/{r['kept_by_cut_manifest']}"
        lines.append(
            f"| {label} | {r['cut']:.4f} | {r['pairs']:,} | {r['precision']:.4f} "
            f"| {r['recall']:.4f} | {r['noise_passed']:.4f} | {agree} "
            f"| {lost.get('prefilter', 0)} / {lost.get('below_cut', 0)} / "
            f"{lost.get('singleton', 0)} / {lost.get('pairing_postfilter', 0)} "
            f"({lost.get('near_equal', 0)}, {lost.get('other_pivot', 0)}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Corrupt, mine once per scoring, and print the quality table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="a Tatoeba language-pair directory")
    parser.add_argument("--pivot", default="eng", help="extension of the pivot side (eng)")
    parser.add_argument(
        "--noise",
        choices=("random", "lexical", "language", "junk"),
        default="random",
        help="random: a replaced target is any other line's; lexical: the target of the "
        "source line sharing the most words with this one; language: a close language's "
        "translation of the same or the most similar source sentence (Czech, Russian, "
        "Ukrainian for Polish; Polish, Slovak, Russian, Ukrainian for Czech); junk: symbol "
        "lines, URLs and e-mail, untranslated English with an edit, markup (default: random)",
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
        help="share of target lines replaced, 0 for the clean pair (0.2)",
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
    scorings = parse_scorings(args.scorings)
    verify = parse_scorings(args.verify + (",auto" if args.verify_auto else ""))

    pivots, corrupted, corpus = corrupted_pair(
        args.directory, args.pivot, args.noise, args.rate, args.seed, args.donors
    )
    pivot_lang, lang, replaced = corpus.pivot_lang, corpus.lang, corpus.replaced

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-quality-"))
    workdir.mkdir(parents=True, exist_ok=True)
    prefix = workdir / "bench"
    (workdir / f"bench.{pivot_lang}").write_text("\n".join(pivots) + "\n", encoding="utf-8")
    (workdir / f"bench.{lang}").write_text("\n".join(corrupted) + "\n", encoding="utf-8")

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
        rows, manifest = mine(prefix, out, pivot_lang, lang, args.model, flags, run_cache)
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

    name = f"{args.directory.name} ({pivot_lang}->{lang}, {args.noise} noise: "
    name += f"{sum(replaced):,} of {len(replaced):,} "
    name += f"lines replaced, seed {args.seed})"
    print(format_table(args.directory.name, results))
    print(f"\n{name}; model {args.model}")
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
        f"planted_in_pairs={first['planted_in_pairs']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
