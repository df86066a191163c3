"""The prefilter's length unit: which count tells aligned from misaligned pairs, in every script.

The prefilter drops a pair where (longer + 1) / (shorter + 1) > ``--max-length-ratio``
(2.5), lengths as ``paramine.pipelines.stages.filter.rules.words.length`` counts them. Units:

- whitespace: whitespace tokens holding a letter or digit;
- treebank: NLTK's Treebank tokens (``NLTKWordTokenizer``, no model to
  download) holding a letter or digit, the prefilter's count before issue 44;
- code points: characters other than the space;
- length(): whitespace words where the script separates words, weighted
  characters where it does not (Han 0.7 of a word, other unspaced letters 1/3).

Lines are normalized as the prefilter does; pairs with an empty side are left
out. A set's group is the dominant script of its non-English, non-Polish side
(of its sides, the one further along Latin/Cyrillic, other spaced, unspaced).
Per group and unit, means over the sets of drop@2.5 (aligned pairs above the
cut), catch@2.5 (misaligned pairs above it: the same lines, one side in a
seeded random order, less pairs sharing a text with the aligned pair) and AUC
(P(misaligned ratio > aligned ratio), ties half); CPU-us per line over the
group's lines (``time.process_time``, after a warm-up); the Latin/Cyrillic
aligned pairs that treebank and length() decide differently; and a last line,
``bench_length: ...``, with the figures the choice rests on.

Sets: the Tatoeba test sets v2021-08-07 in ``../shared/corpora`` (scripts/*,
x-pol/*, eng-pol, ces-eng), or directories given with ``--sets``, each named
``<x>-<y>`` and holding a Moses pair of files (``*.<x>``, ``*.<y>``).

Usage::

    python -m benchmarks.studies.bench_length
    python -m benchmarks.studies.bench_length --sets DIR DIR --limit 500 --json /tmp/length.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import regex
from nltk.tokenize import NLTKWordTokenizer
from paramine.pipelines.core.text import normalize
from paramine.pipelines.stages.filter.rules.pair_judge import PrefilterOptions
from paramine.pipelines.stages.filter.rules.words import UNSPACED_SCRIPTS, length

from benchmarks.lib.paths import TATOEBA

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: Script groups, in the order that ranks a set's two sides.
GROUPS = ("latin/cyrillic", "other spaced", "unspaced")
WARM_UP = 200  # lines a unit counts untimed first: imports, paramine's per-character tables
_WORD_CHAR = re.compile(r"[^\W_]")
_TREEBANK = NLTKWordTokenizer()
_LATIN_CYRILLIC = regex.compile(r"[\p{sc=Latin}\p{sc=Cyrillic}]")
_UNSPACED = regex.compile(
    "[[" + "".join(f"\\p{{scx={s}}}" for s in UNSPACED_SCRIPTS) + "]&&\\p{L}]", regex.V1
)
_LETTER = regex.compile(r"\p{L}")


@dataclass(frozen=True)
class AlignedSet:
    """Normalized lines, x[k] aligned with y[k]; misaligned pairs x[wrong_x[k]], y[wrong_y[k]]."""

    name: str
    group: str
    x: list[str]
    y: list[str]
    wrong_x: np.ndarray
    wrong_y: np.ndarray


def _lines(path: Path) -> list[str]:
    # "\n" only, as the Moses readers: str.splitlines() would also cut at U+2028 and U+0085.
    lines = path.read_text(encoding="utf-8").split("\n")
    return lines[:-1] if lines and not lines[-1] else lines


def read_sides(folder: Path) -> tuple[list[str], list[str]]:
    """The two sides of a set directory ``<x>-<y>``, a Moses pair of files ``*.<x>``, ``*.<y>``."""
    x, _, y = folder.name.partition("-")
    files = [sorted(folder.glob(f"*.{lang}")) if lang else [] for lang in (x, y)]
    if any(len(found) != 1 for found in files):
        raise SystemExit(
            f"bench_length: {folder} should hold one *.{x} and one *.{y} file (a Moses pair); "
            "name a set's directory <x>-<y> after its files' suffixes"
        )
    sides = _lines(files[0][0]), _lines(files[1][0])
    if len(sides[0]) != len(sides[1]):
        raise SystemExit(f"bench_length: {folder}: its two files differ in line count")
    return sides


def script_group(lines: Sequence[str]) -> str:
    """The group of the script that most of a side's letters are written in."""
    text = "".join(lines)
    counts = [len(_LATIN_CYRILLIC.findall(text)), 0, len(_UNSPACED.findall(text))]
    counts[1] = len(_LETTER.findall(text)) - counts[0] - counts[2]
    return GROUPS[counts.index(max(counts))]


def read_set(folder: Path, limit: int, seed: int) -> AlignedSet:
    """A set's first ``limit`` pairs (0: all), normalized, with its misaligned pairs."""
    xs, ys = (side[:limit] if limit else side for side in read_sides(folder))
    pairs = [(normalize(a), normalize(b)) for a, b in zip(xs, ys, strict=True)]
    pairs = [(a, b) for a, b in pairs if a and b]
    x, y = [a for a, _ in pairs], [b for _, b in pairs]
    order = list(range(len(x)))
    random.Random(seed).shuffle(order)
    # x[j] equal to x[i] would make y[j] a translation of x[i]: not misaligned.
    wrong = [(i, j) for i, j in enumerate(order) if x[i] != x[j] and y[i] != y[j]]
    if not wrong:
        raise SystemExit(f"bench_length: {folder}: too few distinct pairs to misalign")
    wrong_x, wrong_y = np.array(wrong).T
    group = max(script_group(x), script_group(y), key=GROUPS.index)
    return AlignedSet(folder.name, group, x, y, wrong_x, wrong_y)


def whitespace_words(text: str) -> int:
    return sum(1 for token in text.split() if _WORD_CHAR.search(token))


def treebank_words(text: str) -> int:
    return sum(1 for token in _TREEBANK.tokenize(text) if _WORD_CHAR.search(token))


def code_points(text: str) -> int:
    return len(text) - text.count(" ")  # a normalized line's only whitespace is the space


UNITS: dict[str, Callable[[str], float]] = {
    "whitespace": whitespace_words,
    "treebank": treebank_words,
    "code points": code_points,
    "length()": length,
}


def timed_counts(unit: Callable[[str], float], lines: list[str]) -> tuple[np.ndarray, float]:
    """Each line's length in ``unit``, and the CPU seconds they took."""
    gc.collect()  # the previous unit's garbage is not this one's cost
    start = time.process_time()
    counts = [unit(line) for line in lines]
    return np.array(counts, dtype=float), time.process_time() - start


def ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The prefilter's length ratio, (longer + 1) / (shorter + 1)."""
    return (np.maximum(a, b) + 1) / (np.minimum(a, b) + 1)


def auc(aligned: np.ndarray, misaligned: np.ndarray) -> float:
    """P(a misaligned pair's ratio > an aligned pair's), ties counted half."""
    ordered = np.sort(aligned)
    below = np.searchsorted(ordered, misaligned, "left")
    not_above = np.searchsorted(ordered, misaligned, "right")
    return float((below + not_above).sum() / 2 / (len(aligned) * len(misaligned)))


def set_figures(right: np.ndarray, wrong: np.ndarray, cut: float) -> dict[str, float]:
    """A set's figures in one unit, from its aligned and its misaligned pairs' ratios."""
    dropped, caught = int((right > cut).sum()), int((wrong > cut).sum())
    return {"dropped": dropped, "caught": caught, "drop": dropped / len(right),
            "catch": caught / len(wrong), "auc": auc(right, wrong)}  # fmt: skip


def measure(sets: list[AlignedSet], cut: float, seed: int) -> dict[str, Any]:
    """Every figure: per set, per group, and the Latin/Cyrillic pairs whose decision changes."""
    by_set = {s.name: {"group": s.group, "pairs": len(s.x), "misaligned": len(s.wrong_x),
                       "units": {}} for s in sets}  # fmt: skip
    by_group: dict[str, Any] = {}
    changes: dict[str, Any] = {"pairs": 0, "treebank_only": 0, "length_only": 0, "examples": []}
    for group in GROUPS:
        members = [s for s in sets if s.group == group]
        if not members:
            continue
        lines = sum(2 * len(s.x) for s in members)
        means, aligned = {}, {}
        for name, unit in UNITS.items():
            for line in members[0].x[:WARM_UP]:
                unit(line)
            seconds = 0.0
            for s in members:
                (x, x_cpu), (y, y_cpu) = timed_counts(unit, s.x), timed_counts(unit, s.y)
                seconds += x_cpu + y_cpu
                aligned[s.name, name] = ratio(x, y)
                wrong = ratio(x[s.wrong_x], y[s.wrong_y])
                by_set[s.name]["units"][name] = set_figures(aligned[s.name, name], wrong, cut)
            rows = [by_set[s.name]["units"][name] for s in members]
            means[name] = {
                k: float(np.mean([r[k] for r in rows])) for k in ("drop", "catch", "auc")
            }
            means[name]["cpu_us"] = seconds / lines * 1e6
        by_group[group] = {"sets": [s.name for s in members], "pairs": lines // 2, "units": means}
        for s in members if group == GROUPS[0] else ():
            old, new = aligned[s.name, "treebank"] > cut, aligned[s.name, "length()"] > cut
            changes["pairs"] += len(s.x)
            changes["treebank_only"] += int((old & ~new).sum())
            changes["length_only"] += int((new & ~old).sum())
            for k in np.flatnonzero(old != new)[: 5 - len(changes["examples"])]:
                ratios = [float(aligned[s.name, u][k]) for u in ("treebank", "length()")]
                changes["examples"].append([s.name, s.x[k], s.y[k], *ratios])
    return {"ratio": cut, "seed": seed, "sets": by_set, "groups": by_group, "changes": changes}


def summary(result: dict[str, Any]) -> str:
    """The last line: the figures the choice rests on."""
    parts, groups, cut = [], result["groups"], f"{result['ratio']:g}"
    if "unspaced" in groups:
        u = groups["unspaced"]["units"]
        parts.append(
            f"unspaced length() drop@{cut} {u['length()']['drop']:.4f} (treebank "
            f"{u['treebank']['drop']:.4f}, whitespace {u['whitespace']['drop']:.4f}), "
            f"AUC {u['length()']['auc']:.3f} (treebank {u['treebank']['auc']:.3f})"
        )
    if GROUPS[0] in groups:
        c = result["changes"]
        changed = c["treebank_only"] + c["length_only"]
        parts.append(
            f"latin/cyrillic: {changed} of {c['pairs']:,} aligned decisions change vs treebank "
            f"({c['treebank_only']} now kept, {c['length_only']} now dropped)"
        )
    cpu = {u: np.mean([g["units"][u]["cpu_us"] for g in groups.values()]) for u in UNITS}
    parts.append(f"CPU-us/line length() {cpu['length()']:.1f}, treebank {cpu['treebank']:.1f}")
    return "bench_length: " + "; ".join(parts)


def report(result: dict[str, Any]) -> str:
    """What is printed: the sets of each group, the table, the changed decisions, the summary."""
    cut, groups, changes = f"{result['ratio']:g}", result["groups"], result["changes"]
    pairs = sum(g["pairs"] for g in groups.values())
    out = [f"{len(result['sets'])} sets, {pairs:,} aligned pairs; seed {result['seed']}"]
    out += [f"{k}: {g['pairs']:,} pairs in {' '.join(g['sets'])}" for k, g in groups.items()]
    out += ["", "Means over each group's sets; CPU-us per line over the group's lines.", "",
            f"| group | unit | drop@{cut} | catch@{cut} | AUC | CPU-us/line |",
            "|---|---|---:|---:|---:|---:|"]  # fmt: skip
    for group, g in groups.items():
        for name, f in g["units"].items():
            row = f"{f['drop']:.4f} | {f['catch']:.3f} | {f['auc']:.3f} | {f['cpu_us']:.1f}"
            out.append(f"| {group} | {name} | {row} |")
    if changes["pairs"]:
        out += ["", f"latin/cyrillic aligned pairs decided differently at {cut}: treebank drops "
                f"{changes['treebank_only']}, length() {changes['length_only']}"]  # fmt: skip
        for name, x, y, old, new in changes["examples"]:
            out.append(f"  {name} ratio treebank {old:.2f}, length() {new:.2f}: {x!r} / {y!r}")
    return "\n".join([*out, "", summary(result)])


def default_sets() -> list[Path]:
    if not TATOEBA.is_dir():
        raise SystemExit(f"bench_length: missing {TATOEBA}; give set directories with --sets")
    nested = [p for sub in ("scripts", "x-pol") for p in sorted((TATOEBA / sub).iterdir())]
    return [*nested, TATOEBA / "eng-pol", TATOEBA / "ces-eng"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", type=Path, help="set directories (default: Tatoeba)")
    parser.add_argument("--limit", type=int, default=0, help="first N lines of each set (0: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the misaligned order")
    parser.add_argument("--json", type=Path, help="also write every figure here, per set too")
    args = parser.parse_args(argv)
    if args.limit < 0:
        parser.error(f"--limit must be 0 (all) or more, got {args.limit}")
    folders = args.sets or default_sets()
    if len({folder.name for folder in folders}) < len(folders):
        parser.error("--sets: two directories of the same name; the name is the set's")
    sets = [read_set(folder, args.limit, args.seed) for folder in folders]
    result = measure(sets, PrefilterOptions().max_length_ratio, args.seed)
    text = report(result)
    result |= {"limit": args.limit, "summary": text.splitlines()[-1]}
    print(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
