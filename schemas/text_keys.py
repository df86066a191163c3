"""Normalization and comparison keys of sentences: what makes two texts "the same"; stable hashes.

Below every layer that compares sentences: the mining stages (exact
duplicates, trivial pairs, grouping keys) and the trainer's held-out split
must agree on these keys, so they live here, in ``schemas``, and nowhere else.

The stable hashes (``stable_hash``, ``hash_fraction``, ``sha256_hex``,
``text_digest``) are the same on every worker, process and run: Python's
``hash()`` of a string changes between processes, so every id, sampling
decision and fingerprint that must not depend on the worker goes through them.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

from rapidfuzz.distance import Levenshtein

# Runs of whitespace (Python's `\s` is Unicode-aware: NBSP, U+2028, U+3000, ...)
# and C0/C1 control characters (tabs, newlines, NUL, stray U+0085) become one
# space: a record key must not depend on how an aligner wrapped a line.
_SPACE_RUN = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")

# Invisible characters that corpora sprinkle inside words (a BOM at the start of
# a file, zero-width spaces from web scrapes). Deleted rather than spaced, so
# "ab\u200bc" and "abc" get the same key.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u2060\ufeff"))
_HAS_INVISIBLE = re.compile("[\u200b\u2060\ufeff]")


def normalize(text: str) -> str:
    """Normalize text for display keys and exact-duplicate detection.

    Applies NFKC (ligatures, full-width forms, NBSP), deletes zero-width
    characters, turns every run of Unicode whitespace or control characters
    into a single space, and strips both ends.

    Args:
        text: Any text.

    Returns:
        The normalized text; empty if ``text`` held only whitespace.
    """
    # The mining pipeline normalizes every line it reads, so the steps that
    # cannot change a line are skipped (0.3 instead of 3 us a line): NFKC and
    # the invisible characters leave ASCII alone, and in a printable line the
    # only whitespace is the space, so the pattern would only collapse runs
    # of spaces. tests/schemas/test_text_keys.py checks it against the steps
    # all applied.
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        if _HAS_INVISIBLE.search(text):
            text = text.translate(_INVISIBLE)
    if not text.isprintable() or "  " in text:
        text = _SPACE_RUN.sub(" ", text)
    return text.strip()


class _DropTable(dict[int, int | None]):
    """The `str.translate` table that deletes punctuation (P*) and spaces.

    Filled as characters are met rather than by a scan of every code point
    (1 s, in every worker): a character seen for the first time is looked up
    once, then translated in C like the rest. Symbols (S*) are kept on
    purpose: "$5" vs "€5", "5 + 3" vs "5 = 3" or "20 °C" vs "20" differ in
    meaning, and a pair that differs only in symbols is not a trivial
    paraphrase.
    """

    def __missing__(self, code_point: int) -> int | None:
        value = code_point if keyed(chr(code_point)) else None
        self[code_point] = value
        return value


def keyed(char: str) -> bool:
    """Whether a character stays in a comparison key: not the space, not punctuation (P*)."""
    return char != " " and not unicodedata.category(char).startswith("P")


_DROP_TABLE = _DropTable()


#: The ASCII characters the comparison key drops: the space and punctuation (P*).
_ASCII_DROP = bytes(c for c in range(128) if not keyed(chr(c)))


def comparison_key(text: str) -> str:
    """Reduce text to the key under which two sentences count as the same.

    The key is ``normalize(text)``, casefolded, with Unicode punctuation
    (categories P*) and whitespace removed. Letters, digits, marks and
    symbols (S*) are kept, so "Tom is here." and "tom is here" share a key
    while "25 is a number" and "26 is a number" do not.

    Args:
        text: Any text.

    Returns:
        The comparison key; empty for text with no letters, digits or symbols.
    """
    return normalized_key(normalize(text))


def normalized_key(text: str) -> str:
    """``comparison_key`` of a text that ``normalize`` returned: the same key, one step less.

    The prefilter computes these keys for a batch at once
    (``pipelines.stages.filter.rules.line_figures``, tested against this function).
    """
    key = text.casefold()
    if key.isascii():
        # The same deletions, as bytes: 0.3 instead of 2 us a line.
        return key.encode("ascii").translate(None, _ASCII_DROP).decode("ascii")
    return key.translate(_DROP_TABLE)


def edit_similarity(a: str, b: str) -> float:
    """Normalized Levenshtein similarity of the comparison keys of two texts.

    Args:
        a: First text.
        b: Second text.

    Returns:
        A value in [0, 1]: 1.0 when the keys are equal (two empty keys
        included), 0.0 when they share nothing.
    """
    return float(Levenshtein.normalized_similarity(comparison_key(a), comparison_key(b)))


_WORD = re.compile(r"\w+")


def inflection_variants(a: str, b: str, max_ending: int = 3) -> bool:
    """Whether two sentences differ only in word endings ("Paliłem." / "Paliłam.").

    True when both have the same words in the same order (casefolded, by
    ``\\w+``), at least one differs, and every differing pair of words shares
    a stem of two or more characters followed by endings of at most
    ``max_ending`` characters: gender, number or person variants of one
    sentence, right as paraphrases but weak for training. Sentences that
    differ only in case or punctuation are not variants (they are equal or
    near-equal, which the post-filter drops anyway).
    """
    words_a, words_b = _WORD.findall(a.casefold()), _WORD.findall(b.casefold())
    if len(words_a) != len(words_b) or words_a == words_b:
        return False
    for x, y in zip(words_a, words_b, strict=True):
        if x == y:
            continue
        shorter = min(len(x), len(y))
        stem = next((i for i in range(shorter) if x[i] != y[i]), shorter)
        if stem < 2 or len(x) - stem > max_ending or len(y) - stem > max_ending:
            return False
    return True


# Stable hashes: ids, samples and splits by hash, cache keys.

# Joins parts so that ("ab", "c") and ("a", "bc") hash differently.
_SEPARATOR = "\x1f"


def stable_hash(*parts: str) -> int:
    """A 64-bit hash of ``parts`` (blake2b), the same on every machine and run."""
    digest = hashlib.blake2b(_SEPARATOR.join(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def hash_fraction(*parts: str) -> float:
    """A stable number in [0, 1) for ``parts``: for samples and splits by hash."""
    return stable_hash(*parts) / 2**64


def sha256_hex(chunks: Iterable[bytes]) -> str:
    """The sha256 hex digest of a stream of byte chunks."""
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def text_digest(text: str, length: int = 16) -> str:
    """The first ``length`` hex digits of the sha256 of ``text``: short names for cache keys."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]
