"""Language codes and names, from the ``langcodes`` library's copy of the IANA/ISO tables.

Corpora name languages in several ways: Tatoeba names files by ISO 639-3
(``corpus.pol``), OPUS by ISO 639-1 (``corpus.pl``), MARC-era data by ISO
639-2/B (``cze``), and users type English names (``Polish``). paramine keeps
one spelling, the canonical code: ISO 639-1 where the language has one,
otherwise its ISO 639-3 code. A macrolanguage's principal member maps to the
macrolanguage (``cmn`` -> ``zh``, ``arb`` -> ``ar``), as corpora use them
interchangeably.

``langcodes`` is imported on first use: it loads tables of every language
(~50 ms), which a ``--help`` should not pay for.
"""

from __future__ import annotations

import functools
import re

from paramine.schemas.errors import UsageError

__all__ = ["canonical_language", "language_aliases", "language_name", "registered"]

# A language tag as users and file names spell it: letters and digits in
# subtags joined by '-' or '_' ("pl", "pt_BR", "sr-Latn").
_TAG = re.compile(r"[a-z]{2,8}([-_][a-z0-9]{1,8})*", re.IGNORECASE)
#: An ISO 639-3 code's shape. 639-3 grows every year (Toki Pona, ``tok``,
#: came in 2022), so a well-formed code the installed registry lacks is
#: still a language; 639-1's two-letter codes are a closed set.
_ISO_639_3 = re.compile(r"[a-z]{3}")


def _unknown(code: str) -> UsageError:
    return UsageError(
        f"unknown language {code!r}: give an ISO 639-1 or 639-3 code (pl, pol), a BCP 47 tag "
        "(sr-Latn) or an English name (Polish)"
    )


# Bounded: codes also come from records (a TSV's language columns), and a
# corrupt shard must not grow the cache without limit.
@functools.lru_cache(maxsize=1024)
def canonical_language(code: str) -> str:
    """Return the canonical code of a language: ISO 639-1 where one exists.

    Accepts ISO 639-1 (``pl``), ISO 639-3 and 639-2/B codes (``pol``,
    ``ces``, ``cze``), English names (``Polish``), in any letter case, and
    BCP 47 tags with region or script subtags (``pt_BR`` -> ``pt-br``: the
    primary subtag is mapped, the rest kept, lowercased). A well-formed ISO
    639-3 code that the installed registry lacks (``tok``) is taken as it
    is (``registered`` tells which); two letters must be an ISO 639-1 code.

    Raises:
        UsageError: The code names no known language.
    """
    import langcodes
    from langcodes.data_dicts import NORMALIZED_MACROLANGUAGES

    key = code.strip()
    if _TAG.fullmatch(key):
        try:
            tag = langcodes.standardize_tag(key.replace("_", "-"), macro=True)
        except ValueError:
            tag = ""
        primary, _, rest = tag.lower().partition("-")
        if primary and (
            langcodes.Language.get(primary).is_valid() or _ISO_639_3.fullmatch(primary)
        ):
            return f"{primary}-{rest}" if rest else primary
    if len(key) > 3:
        # Three letters or fewer is a code, never a name: `find` would take
        # "pol" for a language called "Pol" in some other language's tables.
        try:
            found = langcodes.find(key, language="en").language or ""
        except LookupError:
            found = ""
        if found:
            return NORMALIZED_MACROLANGUAGES.get(found, found)
    raise _unknown(code)


@functools.lru_cache(maxsize=1024)
def registered(code: str) -> bool:
    """Whether the installed language registry (langcodes') knows ``code``'s language.

    Raises:
        UsageError: The code names no language at all (as ``canonical_language``).
    """
    import langcodes

    primary = canonical_language(code).partition("-")[0]
    return bool(langcodes.Language.get(primary).is_valid())


def language_aliases(code: str) -> frozenset[str]:
    """The codes a corpus file name may carry for a language, lowercase.

    The canonical code, its ISO 639-3 (terminology) and 639-2/B codes, and
    the principal member of a macrolanguage: ``pl`` -> ``{pl, pol}``,
    ``cs`` -> ``{cs, ces, cze}``, ``zh`` -> ``{zh, zho, chi, cmn}``.
    A tag with subtags (``pt-br``) has just itself.

    Raises:
        UsageError: The code names no known language.
    """
    return _aliases(canonical_language(code))


@functools.lru_cache(maxsize=1024)
def _aliases(canonical: str) -> frozenset[str]:
    from langcodes.data_dicts import (
        LANGUAGE_ALPHA3,
        LANGUAGE_ALPHA3_BIBLIOGRAPHIC,
        NORMALIZED_MACROLANGUAGES,
    )

    if "-" in canonical:
        return frozenset({canonical})
    found = {canonical}
    for table in (LANGUAGE_ALPHA3, LANGUAGE_ALPHA3_BIBLIOGRAPHIC):
        if canonical in table:
            found.add(table[canonical])
    found.update(m for m, macro in NORMALIZED_MACROLANGUAGES.items() if macro == canonical)
    return frozenset(found)


def language_name(code: str) -> str:
    """The English name of a language: ``pol`` -> ``Polish``.

    Raises:
        UsageError: The code names no known language.
    """
    import langcodes

    return str(langcodes.Language.get(canonical_language(code)).display_name("en"))
