"""Noise that real dumps carry, planted into a bitext's target side for bench_quality.

Two kinds, each seeded and deterministic:

- language: a replaced target line becomes the translation, in a close
  language, of the same or the most similar source sentence (Czech, Russian
  or Ukrainian in place of Polish; Polish, Slovak, Russian or Ukrainian in
  place of Czech). A multilingual encoder scores such a line as high as the
  right one, so only a language check can stop it.
- junk: a replaced target line becomes a line of symbols (``♪ ♪``), a
  credit line with a URL or an e-mail address, the English pivot left
  untranslated with a small edit (a typo, a changed word), or the line's own
  translation wrapped in markup (``<i>...</i>``, ``{\\an8}``).

Donors of the language noise are read from shared/corpora: the other Tatoeba
test set (``tatoeba_test_v2021-08-07/ces-eng`` for a Polish target,
``eng-pol`` for a Czech one) and the LASER Tatoeba sets
(``laser_tatoeba_v1/tatoeba.<lang>-eng.*``) that exist.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from paramine.pipelines.core.groups import pivot_key
from paramine.pipelines.core.text import comparison_key, normalize

WORD = re.compile(r"\w+")

#: Per target language: (donor language, Tatoeba test pair, LASER set), close languages first.
DONORS: dict[str, tuple[tuple[str, str | None, str], ...]] = {
    "pl": (("cs", "ces-eng", "ces"), ("ru", None, "rus"), ("uk", None, "ukr")),
    "cs": (
        ("pl", "eng-pol", "pol"),
        ("sk", None, "slk"),
        ("ru", None, "rus"),
        ("uk", None, "ukr"),
    ),
}
TATOEBA_DIR = "tatoeba_test_v2021-08-07"
LASER_DIR = "laser_tatoeba_v1"
TATOEBA_STEM = "tatoeba-test-v2021-08-07"

#: Junk kinds, in the order they are dealt out.
JUNK_KINDS = ("symbols", "url", "english", "markup")
SYMBOL_LINES = (
    "♪ ♪",
    "♪♪♪",
    "♪ ~ ♪",
    "- - -",
    "###",
    "* * *",
    "...",
    "--",
    "= = =",
    "[ ... ]",
    "♫",
    "#1",
    "100%",
    ":-)",
)
_SITES = (
    "www.napisy24.pl",
    "www.opensubtitles.org",
    "http://www.titulky.com",
    "https://napiprojekt.pl/napisy",
    "www.addic7ed.com",
    "http://subs.example.org/forum?id=42",
)
_ADDRESSES = ("kontakt@napisy24.pl", "subs@titulky.com", "admin@example.org")
#: A credit line's words, per target language: "Subtitles:", "Translation:", "More at".
_CREDIT_WORDS = {
    "pl": ("Napisy:", "Tłumaczenie:", "Więcej na", "Synchro:"),
    "cs": ("Titulky:", "Překlad:", "Více na", "Časování:"),
}
_MARKUP = (
    "<i>{}</i>",
    '<font color="#ffff00">{}</font>',
    "{{\\an8}}{}",
    "<b>{}</b>",
    "{}<br/>",
    "- <i>{}</i>",
)


@dataclass(frozen=True)
class Donor:
    """A translation in another language of an English sentence."""

    english: str
    text: str
    lang: str
    source: str  # "tatoeba ces-eng", "laser rus", ...


def _read(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [line.rstrip("\n").rstrip("\r") for line in handle]


def load_donors(lang: str, root: Path) -> list[Donor]:
    """Close-language translations of English sentences for a ``lang`` target.

    Args:
        lang: The target's language (``pl``, ``cs``).
        root: The folder holding ``tatoeba_test_v2021-08-07/`` and
            ``laser_tatoeba_v1/`` (shared/corpora).

    Raises:
        SystemExit: No donor language is known for ``lang``, or no donor file exists.
    """
    if lang not in DONORS:
        raise SystemExit(
            f"--noise language: no close languages known for a {lang!r} target; "
            f"known: {', '.join(DONORS)}"
        )
    seen: set[tuple[str, str]] = set()
    donors: list[Donor] = []
    for donor_lang, tatoeba_pair, laser in DONORS[lang]:
        sources = []
        if tatoeba_pair:
            side = tatoeba_pair.replace("eng", "").strip("-")
            folder = root / TATOEBA_DIR / tatoeba_pair
            sources.append(
                (
                    f"tatoeba {tatoeba_pair}",
                    folder / f"{TATOEBA_STEM}.eng",
                    folder / f"{TATOEBA_STEM}.{side}",
                )
            )
        stem = root / LASER_DIR / f"tatoeba.{laser}-eng"
        sources.append((f"laser {laser}", Path(f"{stem}.eng"), Path(f"{stem}.{laser}")))
        for source, english_path, text_path in sources:
            if not (english_path.exists() and text_path.exists()):
                continue
            for english, text in zip(_read(english_path), _read(text_path), strict=True):
                english, text = normalize(english), normalize(text)
                # One donor per (English, text): the LASER sets repeat Tatoeba's lines.
                if english and text and (english, text) not in seen:
                    seen.add((english, text))
                    donors.append(Donor(english, text, donor_lang, source))
    if not donors:
        raise SystemExit(
            f"--noise language: no donor files under {root} for a {lang!r} target "
            f"(looked for {TATOEBA_DIR}/ and {LASER_DIR}/)"
        )
    return donors


def _aligned(pivots: list[str], targets: list[str]) -> dict[str, set[str]]:
    """Pivot key -> the normalized texts the file aligns with it."""
    aligned: dict[str, set[str]] = defaultdict(set)
    for p, t in zip(pivots, targets, strict=True):
        aligned[pivot_key(normalize(p))].add(normalize(t))
    return aligned


def corrupt_language(
    pivots: list[str],
    targets: list[str],
    share: float,
    seed: int,
    donors: list[Donor],
) -> tuple[list[str], list[bool], list[str]]:
    """Replace ``share`` of the target lines with a close-language translation.

    The donor of line i translates the same English sentence where one does
    (equal pivot keys; a seeded pick among several), else the English
    sentence sharing the most lowercase words with line i's (ties: the
    donor with fewer words, then a seeded pick among them in donor order,
    so that the pick does not depend on string hashing). A donor text the
    file aligns with the pivot (a name, "OK.") is skipped: it is no noise.

    Returns:
        The target lines after replacement, which lines are noise, and a
        label per line: ``<lang> same`` or ``<lang> similar`` for a planted
        line, ``""`` for the others.
    """
    rng = random.Random(seed)
    n = len(targets)
    aligned = _aligned(pivots, targets)
    by_key: dict[str, list[int]] = defaultdict(list)
    holders: dict[str, list[int]] = defaultdict(list)  # word -> donors holding it
    donor_words = []
    for d, donor in enumerate(donors):
        by_key[pivot_key(donor.english)].append(d)
        words = set(WORD.findall(donor.english.lower()))
        donor_words.append(len(words))
        for w in words:
            holders[w].append(d)
    chosen = sorted(rng.sample(range(n), round(share * n)))
    out = list(targets)
    replaced = [False] * n
    labels = [""] * n
    for i in chosen:
        key = pivot_key(normalize(pivots[i]))

        def fits(d: int, key: str = key) -> bool:
            return donors[d].text not in aligned[key]

        same = [d for d in by_key.get(key, ()) if fits(d)]
        if same:
            best, how = rng.choice(same), "same"
        else:
            shared: dict[int, int] = defaultdict(int)
            for w in set(WORD.findall(normalize(pivots[i]).lower())):
                for d in holders.get(w, ()):
                    shared[d] += 1
            ranked = sorted(
                (d for d in shared if fits(d)), key=lambda d: (-shared[d], donor_words[d], d)
            )
            if ranked:
                top = [
                    d
                    for d in ranked
                    if (shared[d], donor_words[d]) == (shared[ranked[0]], donor_words[ranked[0]])
                ]
                best = rng.choice(top)
            else:  # shares no word with any donor
                best = rng.randrange(len(donors))
            how = "similar"
        out[i] = donors[best].text
        replaced[i] = True
        labels[i] = f"{donors[best].lang} {how}"
    return out, replaced, labels


def _typo(text: str, rng: random.Random) -> str | None:
    """Swap two neighbouring letters inside a word of four or more letters, or drop one."""
    words = [m for m in WORD.finditer(text) if len(m.group()) >= 4 and m.group().isalpha()]
    if not words:
        return None
    m = rng.choice(words)
    word = m.group()
    k = rng.randrange(1, len(word) - 2)
    if rng.random() < 0.5 and word[k] != word[k + 1]:
        edited = word[:k] + word[k + 1] + word[k] + word[k + 2 :]
    else:
        edited = word[:k] + word[k + 1 :]
    return text[: m.start()] + edited + text[m.end() :]


def _changed_word(text: str, vocabulary: list[str], rng: random.Random) -> str | None:
    """Put another word of the pivots in place of one word of three or more letters."""
    words = [m for m in WORD.finditer(text) if len(m.group()) >= 3 and m.group().isalpha()]
    if not words:
        return None
    m = rng.choice(words)
    other = rng.choice(vocabulary)
    if other.lower() == m.group().lower():
        return None
    return text[: m.start()] + other + text[m.end() :]


def untranslated(pivot: str, vocabulary: list[str], rng: random.Random) -> str:
    """The pivot itself with one small edit, so that it is not equal to the pivot."""
    edits: list[Callable[[], str | None]] = [
        lambda: _typo(pivot, rng),
        lambda: _changed_word(pivot, vocabulary, rng),
    ]
    if rng.random() < 0.5:
        edits.reverse()
    for edit in edits:
        edited = edit()
        if edited and comparison_key(edited) != comparison_key(pivot):
            return edited
    return pivot + " " + rng.choice(vocabulary)


def credit_line(lang: str, translation: str, rng: random.Random) -> str:
    """A subtitle credit with a URL or e-mail address, alone or after the line's translation."""
    words = _CREDIT_WORDS.get(lang, ("Subtitles:", "Translation:", "More at", "Sync:"))
    address = rng.choice(_SITES if rng.random() < 0.7 else _ADDRESSES)
    credit = f"{rng.choice(words)} {address}"
    if rng.random() < 0.5:
        return credit
    return f"{translation} {address}" if rng.random() < 0.5 else f"{translation} ({credit})"


def corrupt_junk(
    pivots: list[str], targets: list[str], share: float, seed: int, lang: str
) -> tuple[list[str], list[bool], list[str]]:
    """Replace ``share`` of the target lines with junk, the kinds of ``JUNK_KINDS`` in turn.

    The kinds are dealt in the seeded order of the drawn lines, so each gets
    a quarter. Markup and half the credit lines keep the line's own
    translation: the encoder scores them as right, only a rule can drop them.

    Returns:
        The target lines after replacement, which lines are noise, and each
        planted line's kind (``""`` for the others).
    """
    rng = random.Random(seed)
    n = len(targets)
    vocabulary = sorted({w for p in pivots for w in WORD.findall(p) if w.isalpha() and len(w) > 2})
    drawn = rng.sample(range(n), round(share * n))
    out = list(targets)
    replaced = [False] * n
    labels = [""] * n
    for rank, i in enumerate(drawn):
        kind = JUNK_KINDS[rank % len(JUNK_KINDS)]
        if kind == "symbols":
            line = rng.choice(SYMBOL_LINES)
        elif kind == "url":
            line = credit_line(lang, targets[i], rng)
        elif kind == "english":
            line = untranslated(pivots[i], vocabulary, rng)
        else:
            line = rng.choice(_MARKUP).format(targets[i])
        out[i] = line
        replaced[i] = normalize(line) != normalize(targets[i])
        labels[i] = kind if replaced[i] else ""
    return out, replaced, labels
