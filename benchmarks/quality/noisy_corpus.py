"""The noisy corpus of bench_quality: a Tatoeba pair with a share of its target lines replaced.

Reads a Moses pair with many-to-one structure (one English pivot, several
translations), replaces a seeded share of the target lines with noise and
labels every line: which were replaced, with what, and which original
candidates each pivot keeps. bench_quality.py mines the corrupted pair and
scores the run against these labels; bench_signals.py reads the same corpus.

The noise kinds: random (target lines from elsewhere in the file), lexical
(the target of the most similar source line), language and junk
(``planted_noise.py``).

A corpus of several pairs with pivots in several languages (x-pol + eng-pol)
is built in ``pivot_sets.py``; its lines carry their pivot's language, and
its gold groups are keyed as paramine groups (``Corpus.key``).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from paramine.pipelines.core.groups import GroupKey, group_key, pivot_key
from paramine.pipelines.core.text import canonical_lang, normalize

from benchmarks.quality.planted_noise import corrupt_junk, corrupt_language, load_donors

TATOEBA_STEM = "tatoeba-test-v2021-08-07"
WORD = re.compile(r"\w+")
#: Letters of scripts written without spaces (Han, kana, Thai, Lao, Khmer),
#: where a ``WORD`` is a whole clause: words_of splits such runs into
#: character pairs.
UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
)

#: A gold group's key: the pivot's text key (``pivot_key``) where every pivot
#: has one language, as bench_signals reads it; ``group_key`` (language part,
#: text key) where pivots have several, as paramine groups them.
Key = str | GroupKey


@dataclass
class Corpus:
    """The corrupted bitext and what is known about every line of it."""

    pivots: list[str]  # normalized pivot of each line
    candidates: list[str]  # normalized candidate of each line (after replacement)
    replaced: list[bool]
    pivot_lang: str
    lang: str
    # gold group (``key``) -> distinct original (not replaced) candidates
    originals: dict[Key, set[str]] = field(default_factory=dict)
    # per line: what was planted there (donor language, junk kind), "" for none
    planted: list[str] = field(default_factory=list)
    # per line: the pivot's canonical language where pivots have several
    # (``pivot_sets``); empty where every pivot's is ``pivot_lang``
    pivot_langs: list[str] = field(default_factory=list)
    # per line: the name of the pair (directory) it came from; empty for one pair
    sets: list[str] = field(default_factory=list)

    def pivot_lang_of(self, line: int) -> str:
        """The canonical language of the pivot of a line (0-based)."""
        return self.pivot_langs[line] if self.pivot_langs else self.pivot_lang

    def key(self, pivot: str, pivot_lang: str) -> Key:
        """The gold group of a normalized pivot in a language, as paramine groups it."""
        return group_key(pivot_lang, pivot) if self.pivot_langs else pivot_key(pivot)

    def line_key(self, line: int) -> Key:
        """The gold group of a line (0-based)."""
        return self.key(self.pivots[line], self.pivot_lang_of(line))


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


def words_of(text: str) -> set[str]:
    """The lowercase words of a line; character pairs inside a run of an unspaced script.

    A Japanese or Chinese line is one or two ``WORD`` runs, which no other
    line shares: its character pairs (``学生``, ``生で``) make lines that
    share words share units. A line without such letters: its ``WORD`` set.
    """
    out: set[str] = set()
    for word in WORD.findall(text.lower()):
        if len(word) > 1 and UNSPACED.search(word):
            out.update(word[k : k + 2] for k in range(len(word) - 1))
        else:
            out.add(word)
    return out


def lexical_donors(pivots: list[str], chosen: list[int]) -> dict[int, int]:
    """For each chosen line i: the line j whose source shares most lowercase words with i's.

    Words as ``words_of`` counts them. Ties go to the lowest j; a j whose
    normalized source equals line i's is never taken (its target could be a
    true translation of the same pivot).
    """
    words = [words_of(p) for p in pivots]
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
    pivot_langs: list[str] | None = None,
    sets: list[str] | None = None,
) -> Corpus:
    """Normalize the lines as the pipeline does, and index the original candidates.

    ``pivot_langs`` and ``sets``: each line's pivot language and pair, where
    pivots have several languages (``pivot_sets``).
    """
    corpus = Corpus(
        pivots=[normalize(p) for p in pivots],
        candidates=[normalize(t) for t in targets],
        replaced=replaced,
        pivot_lang=pivot_lang,
        lang=lang,
        planted=planted or ["planted" if r else "" for r in replaced],
        pivot_langs=pivot_langs or [],
        sets=sets or [],
    )
    originals: dict[Key, set[str]] = defaultdict(set)
    for i, (p, c, r) in enumerate(zip(corpus.pivots, corpus.candidates, replaced, strict=True)):
        if not r and p and c:
            originals[corpus.line_key(i)].add(c)
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
