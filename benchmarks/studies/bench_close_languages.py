"""The language check on close languages: the detectors' confusions, and the check as a run runs it.

Issue 52 asks that close languages be told apart by measurement, not by a
hand-kept list. This reads every line of shared/ whose language is known:
the labelled Tatoeba sets (the ``.labels`` files: eng-pol, ces-eng and
small/*, each line by its own label), the x-pol and scripts/ sets and the
LASER sets (a file's language), deduplicated per language; and prints:

1. **Confusions**: per language, the share of its lines each detector
   (py3langid over all its labels; heliport when installed) names something
   else, and the labels it names most. A set whose lines are another
   language (Tatoeba's "slv", two thirds Slovak) shows here, as do the
   detector's true confusions.
2. **The check on true lines**: each language's lines as one side of a run,
   judged as paramine judges them (``LanguageCheck.judge_many``, the side's
   figures, ``stages.filter.rules.line_checks.decide``): the share dropped. Beside it the
   rule before issue 52 (every label of the hand-kept close list competing
   at the ratio, fold sums), on the same lines.
3. **Close-language lines planted**: a tenth of a side replaced by lines of
   a close language (Czech and Slovak on a Polish side, Slovak and Polish on
   a Czech side, Ukrainian and Belarusian on a Russian side, ...): the share
   of planted lines caught and of true lines lost, now and before.

A line is a language's by its label or file; nothing here is tuned to these
sets (the rule's constants come from ``stages/filter/rules/language_id.py``).

    python -m benchmarks.studies.bench_close_languages [--per-lang 3000] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.lib.paths import LASER, TATOEBA
from benchmarks.lib.paths import TATOEBA_STEM as STEM

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

#: The hand-kept table of close languages before issue 52, for the comparison only.
OLD_CLOSE: dict[str, tuple[str, ...]] = {
    "pl": ("cs", "sk"), "cs": ("sk", "pl"), "sk": ("cs", "pl"), "ru": ("uk", "be", "bg"),
    "uk": ("ru", "be"), "be": ("ru", "uk"), "bg": ("mk", "ru"), "mk": ("bg", "sr"),
    "hr": ("sr", "bs", "sl"), "sl": ("hr",), "no": ("da", "sv"), "da": ("no", "sv"),
    "sv": ("no", "da"), "es": ("pt", "ca", "gl"), "pt": ("es", "gl"), "ca": ("es",),
    "gl": ("pt", "es"), "id": ("ms",), "ms": ("id",), "de": ("nl",), "nl": ("de", "af"),
    "hi": ("mr", "ne", "ur"), "mr": ("hi", "ne"), "ne": ("hi", "mr"), "ur": ("hi",),
    "ja": ("zh",), "zh": ("ja",),
}  # fmt: skip
#: (planted language, on a side declared) cases: the pairs of shared/'s languages
#: that are each other's neighbours.
PLANTED = [
    ("cs", "pl"), ("sk", "pl"), ("pl", "cs"), ("sk", "cs"), ("cs", "sk"), ("uk", "ru"),
    ("be", "ru"), ("ru", "uk"), ("ru", "be"), ("hr", "pl"), ("nl", "de"), ("es", "pt"),
    ("pt", "es"), ("it", "es"), ("fr", "es"), ("ru", "pl"), ("en", "pl"), ("de", "nl"),
]  # fmt: skip
PLANTED_SHARE = 0.1


def labelled_lines(per_lang: int, seed: int) -> dict[str, list[str]]:
    """Distinct lines per language: by label where a ``.labels`` file gives one, else by file."""
    from paramine.pipelines.core.text import canonical_lang, normalize
    from paramine.pipelines.stages.filter.rules.language_id import detector_label

    found: dict[str, list[str]] = {}

    def add(code: str, lines: Sequence[str]) -> None:
        lang = detector_label(canonical_lang(code.split("_")[0]))
        found.setdefault(lang, []).extend(normalize(line) for line in lines if line.strip())

    for path in sorted(TATOEBA.glob(f"*/{STEM}.*")) + sorted(TATOEBA.glob(f"*/*/{STEM}.*")):
        if path.suffix == ".labels":
            continue
        lines = path.read_text(encoding="utf-8").split("\n")[:-1]
        labels_path = path.with_name(path.name + ".labels")
        if labels_path.is_file():
            labels = labels_path.read_text(encoding="utf-8").split("\n")[:-1]
            for line, label in zip(lines, labels, strict=True):
                add(label, [line])
        else:
            add(path.name.removeprefix(f"{STEM}."), lines)
    for path in sorted(LASER.glob("tatoeba.*-eng.*")):
        add(path.name.rsplit(".", 1)[1], path.read_text(encoding="utf-8").split("\n")[:-1])
    out = {}
    for lang, lines in sorted(found.items()):
        distinct = list(dict.fromkeys(lines))
        if len(distinct) > per_lang:
            keep = sorted(random.Random(f"{seed}:{lang}").sample(range(len(distinct)), per_lang))
            distinct = [distinct[i] for i in keep]
        if len(distinct) >= 50:
            out[lang] = distinct
    return out


def confusions(lines: dict[str, list[str]], top: int = 3) -> dict[str, dict[str, Any]]:
    """Per language, py3langid's (and heliport's) top label over all its labels."""
    from paramine.pipelines.stages.filter.rules.language_id import detector_label
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    detectors = {"py3langid": lambda t: detector_label(identifier.classify(t)[0])}
    knows = {"py3langid": {detector_label(c) for c in identifier.nb_classes}}
    try:
        import heliport
        from paramine.pipelines.stages.filter.rules.heliport_id import heliport_code

        back = {heliport_code(code): code for code in identifier.nb_classes}
        helper = heliport.Identifier()
        detectors["heliport"] = lambda t: detector_label(back.get(helper.identify(t), "?"))
        known = set(helper.get_confidence_all())
        knows["heliport"] = {
            detector_label(c) for c in identifier.nb_classes if heliport_code(c) in known
        }
    except ImportError:
        pass
    out: dict[str, dict[str, Any]] = {}
    for lang, texts in lines.items():
        row: dict[str, Any] = {"lines": len(texts)}
        for name, classify in detectors.items():
            if lang not in knows[name]:
                continue  # a language it cannot name (heliport: Kabyle)
            labels = Counter(classify(text) for text in texts)
            other = {k: v for k, v in labels.items() if k != lang}
            row[name] = {
                "other": round(sum(other.values()) / len(texts), 4),
                "top": {k: v for k, v in Counter(other).most_common(top)},
            }
        out[lang] = row
    return out


def judge_side(check: Any, texts: list[str], lang: str) -> list[bool]:
    """Which lines of a side declared ``lang`` the check drops, as a run decides."""
    from paramine.pipelines.stages.filter.rules.line_checks import (
        JUDGED,
        STRONG,
        decide,
        figure,
        side_key,
    )

    evidence = check.judge_many([(text, lang) for text in texts])
    key = side_key("candidate", lang)
    figures: Counter[str] = Counter()
    for found in evidence:
        if found is not None:
            figures[figure(key, JUDGED)] += 1
            figures.update(figure(key, STRONG, label) for label in found.strong)
    present = decide(figures)[key].present if figures else {}
    return [
        found is not None and (bool(found.strong) or any(t in present for t in found.weak))
        for found in evidence
    ]


def judge_before(texts: list[str], lang: str, ratio: float = 0.3) -> list[bool]:
    """The rule before issue 52: the hand-kept list's labels all competing at the ratio."""
    from paramine.pipelines.stages.filter.rules.language_id import FOLDS, WIDESPREAD, detector_label
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    folds = {label: group for group in FOLDS for label in group}
    wanted = {*WIDESPREAD, lang, *OLD_CLOSE.get(lang, ())}
    wanted |= {m for label in list(wanted) for m in folds.get(label, (label,))}
    identifier.set_languages(sorted(wanted & set(identifier.nb_classes)))
    dropped = []
    for text in texts:
        shares: Counter[str] = Counter()
        for name, share in identifier.rank(text):
            shares[detector_label(name)] += share
        dropped.append(shares.get(lang, 0.0) < ratio * max(shares.values()))
    return dropped


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the three tables."""
    from paramine.pipelines.stages.filter.rules.language_id import LanguageCheck

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-lang", type=int, default=3000, help="lines per language (3000)")
    parser.add_argument("--seed", type=int, default=0, help="sample seed (0)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    lines = labelled_lines(args.per_lang, args.seed)
    check = LanguageCheck(list(lines))
    result: dict[str, Any] = {"confusions": confusions(lines), "true": {}, "planted": {}}

    print("1. the detectors' confusions: share of a language's lines named something else")
    print("| language | lines | py3langid: other | its top other labels | heliport: other |")
    print("|---|---:|---:|---|---:|")
    for lang, row in result["confusions"].items():
        own = row.get("py3langid")
        helper = row.get("heliport", {}).get("other")
        print(
            f"| {lang} | {row['lines']:,} | "
            + (f"{own['other']:.1%} | {own['top']}" if own else "not known | -")
            + f" | {'not known' if helper is None else f'{helper:.1%}'} |"
        )

    print("\n2. the check on true lines (each language a side of its own): share dropped")
    print("| language | lines | now | before (hand-kept list, all competing) |")
    print("|---|---:|---:|---:|")
    for lang, texts in lines.items():
        if not check.supported(lang):
            continue
        now = judge_side(check, texts, lang)
        before = judge_before(texts, lang)
        result["true"][lang] = {
            "lines": len(texts),
            "now": round(sum(now) / len(texts), 4),
            "before": round(sum(before) / len(texts), 4),
        }
        row = result["true"][lang]
        print(f"| {lang} | {len(texts):,} | {row['now']:.2%} | {row['before']:.2%} |")

    print(f"\n3. close-language lines planted ({PLANTED_SHARE:.0%} of a side)")
    print("| planted | on a side declared | caught now | before | true lines lost now | before |")
    print("|---|---|---:|---:|---:|---:|")
    for planted, declared in PLANTED:
        if planted not in lines or declared not in lines:
            continue
        true = lines[declared]
        n = int(len(true) * PLANTED_SHARE / (1 - PLANTED_SHARE))
        alien = random.Random(f"{args.seed}:{planted}:{declared}").sample(
            lines[planted], min(n, len(lines[planted]))
        )
        side = true + alien
        now = judge_side(check, side, declared)
        before = judge_before(side, declared)
        k = len(true)
        row = {
            "planted_lines": len(alien),
            "caught_now": round(sum(now[k:]) / len(alien), 4),
            "caught_before": round(sum(before[k:]) / len(alien), 4),
            "lost_now": round(sum(now[:k]) / k, 4),
            "lost_before": round(sum(before[:k]) / k, 4),
        }
        result["planted"][f"{planted}>{declared}"] = row
        print(
            f"| {planted} | {declared} | {row['caught_now']:.1%} | {row['caught_before']:.1%} "
            f"| {row['lost_now']:.2%} | {row['lost_before']:.2%} |"
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
