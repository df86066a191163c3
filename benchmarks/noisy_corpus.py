"""The noisy corpus of bench_quality: a Tatoeba pair with a share of its target lines replaced.

Reads a Moses pair with many-to-one structure (one English pivot, several
translations), replaces a seeded share of the target lines with noise and
labels every line: which were replaced, with what, and which original
candidates each pivot keeps. bench_quality.py mines the corrupted pair and
scores the run against these labels; bench_signals.py reads the same corpus.

The noise kinds: random (target lines from elsewhere in the file), lexical
(the target of the most similar source line), language and junk
(``planted_noise.py``).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from paramine.pipelines.core.groups import pivot_key
from paramine.pipelines.core.text import canonical_lang, normalize
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
