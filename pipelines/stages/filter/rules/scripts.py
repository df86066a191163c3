"""What a line is written in, for every script: its letters and its scripts.

The prefilter's judgments of a line used to assume space-separated European
languages: the vowel signs of Devanagari, Tamil, Thai or Khmer were not
letters (so a plain Hindi line was mostly "symbols"), and ten scripts were
known to the script rule. Here every Unicode script counts:

- ``letter_share``: letters and the combining marks that are parts of them.
- ``expected_scripts`` / ``script_share``: the scripts a language is written
  in (CLDR's likely subtags through ``langcodes``; languages written in
  several scripts on purpose), and a line's share of letters in them, from
  the ``regex`` module's Unicode ``Script`` property.

A line's length in words, in every script, is ``stages.filter.rules.words.length``. The
weights and cuts were chosen by measurement on the Tatoeba and LASER sets of
``shared/corpora`` and the Universal Declaration of Human Rights in 74 more
languages (docs/filters.md, "Every script").

Each character is classified once per process (``str.translate`` tables
filled as characters are met), so a line costs a few microseconds.

Why it is longer than 400 lines: a quarter of it is tables (every Unicode
script's code, the languages written in several scripts, the scripts'
weights), read beside the functions that use them.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import regex
from paramine.schemas.languages import canonical_language

#: ISO 15924 codes of the scripts of Unicode 16, as the ``regex`` module names
#: them; Common (Zyyy) and Inherited (Zinh) last. Those the installed ``regex``
#: does not know (an older Unicode) are left out when the tables are built.
SCRIPT_CODES: tuple[str, ...] = tuple(
    """Adlm Aghb Ahom Arab Armi Armn Avst Bali Bamu Bass Batk Beng Bhks Bopo Brah Brai Bugi
     Buhd Cakm Cans Cari Cham Cher Chrs Copt Cpmn Cprt Cyrl Deva Diak Dogr Dsrt Dupl Egyp
     Elba Elym Ethi Gara Geor Glag Gong Gonm Goth Gran Grek Gujr Gukh Guru Hang Hani Hano
     Hatr Hebr Hira Hluw Hmng Hmnp Hung Ital Java Kali Kana Kawi Khar Khmr Khoj Kits Knda
     Krai Kthi Lana Laoo Latn Lepc Limb Lina Linb Lisu Lyci Lydi Mahj Maka Mand Mani Marc
     Medf Mend Merc Mero Mlym Modi Mong Mroo Mtei Mult Mymr Nagm Nand Narb Nbat Newa Nkoo
     Nshu Ogam Olck Onao Orkh Orya Osge Osma Ougr Palm Pauc Perm Phag Phli Phlp Phnx Plrd
     Prti Rjng Rohg Runr Samr Sarb Saur Sgnw Shaw Shrd Sidd Sind Sinh Sogd Sogo Sora Soyo
     Sund Sunu Sylo Syrc Tagb Takr Tale Talu Taml Tang Tavt Telu Tfng Tglg Thaa Thai Tibt
     Tirh Tnsa Todr Toto Tutg Ugar Vaii Vith Wara Wcho Xpeo Xsux Yezi Yiii Zanb Zyyy Zinh""".split()  # noqa: SIM905 - a table, read as one
)
#: Letters of no script of their own (Common) or marks that take the script
#: of the letter they sit on (Inherited): not counted in a script share.
_NO_SCRIPT = ("Zyyy", "Zinh")

#: ISO 15924 codes that stand for several Unicode scripts.
COMPOSITE_SCRIPTS: dict[str, frozenset[str]] = {
    "Jpan": frozenset({"Hani", "Hira", "Kana"}),
    "Kore": frozenset({"Hang", "Hani"}),
    "Hans": frozenset({"Hani"}),
    "Hant": frozenset({"Hani"}),
    "Hanb": frozenset({"Hani", "Bopo"}),
    "Hrkt": frozenset({"Hira", "Kana"}),
}
#: Languages written in more than one script in real corpora, where the tag
#: names no script. CLDR's likely subtags give one script a language (sr ->
#: Cyrl), which would drop the half of Serbian written in Latin letters; a tag
#: with a script (sr-Latn, pa-Arab, uz-Cyrl) narrows to it. Hindi and Urdu are
#: two codes with a script each (Deva, Arab), as CLDR has them.
MULTI_SCRIPT: dict[str, frozenset[str]] = {
    "sr": frozenset({"Cyrl", "Latn"}),
    "bs": frozenset({"Latn", "Cyrl"}),
    "cnr": frozenset({"Latn", "Cyrl"}),  # Montenegrin
    "az": frozenset({"Latn", "Cyrl", "Arab"}),  # Azerbaijan Latin, Iran Arabic, old Cyrillic
    "uz": frozenset({"Latn", "Cyrl"}),
    "kk": frozenset({"Cyrl", "Latn"}),  # moving to Latin
    "tk": frozenset({"Latn", "Cyrl"}),
    "tt": frozenset({"Cyrl", "Latn"}),
    "ug": frozenset({"Arab", "Cyrl", "Latn"}),
    "mn": frozenset({"Cyrl", "Mong"}),
    "pa": frozenset({"Guru", "Arab"}),  # Gurmukhi (India), Shahmukhi (Pakistan)
    "sd": frozenset({"Arab", "Deva"}),
    "ks": frozenset({"Arab", "Deva"}),
    "ku": frozenset({"Latn", "Arab", "Cyrl"}),  # Kurmanji Latin, Sorani Arabic
    "ms": frozenset({"Latn", "Arab"}),  # Rumi and Jawi
    "ha": frozenset({"Latn", "Arab"}),
    "ff": frozenset({"Latn", "Adlm"}),
    "ro": frozenset({"Latn", "Cyrl"}),  # Moldovan Cyrillic
    "be": frozenset({"Cyrl", "Latn"}),  # Łacinka
    "mni": frozenset({"Beng", "Mtei"}),
    "sat": frozenset({"Olck", "Deva", "Beng", "Latn"}),
    "zgh": frozenset({"Tfng", "Latn", "Arab"}),
    "tzm": frozenset({"Tfng", "Latn", "Arab"}),
    "shi": frozenset({"Tfng", "Latn", "Arab"}),
    "kab": frozenset({"Latn", "Tfng", "Arab"}),
    "iu": frozenset({"Cans", "Latn"}),
    "ja": COMPOSITE_SCRIPTS["Jpan"],
    "ko": COMPOSITE_SCRIPTS["Kore"],
    "zh": frozenset({"Hani", "Bopo"}),
}
#: Serbo-Croatian: langcodes reads ``sh`` and ``hbs`` as sr-Latn, but the
#: corpora (Tatoeba's hbs sets) hold both alphabets.
_BOTH_ALPHABETS = frozenset({"sh", "hbs"})

#: What one letter of a script weighs in a script share, in Latin letters
#: (medians of English letters per letter of the script over aligned lines):
#: ``Bob帮助了我。`` (3 Latin letters, 4 Han characters) is a Chinese line, as
#: its words say. Scripts not listed weigh 1.
SCRIPT_WEIGHT: dict[str, float] = {
    "Hani": 3.0, "Hira": 1.7, "Kana": 1.7, "Hang": 2.5, "Khmr": 2.0, "Deva": 1.8, "Beng": 1.9,
    "Guru": 1.7, "Gujr": 2.0, "Telu": 1.8, "Knda": 1.6, "Mlym": 1.9, "Sinh": 1.5, "Ethi": 1.7,
    "Tibt": 1.4, "Hebr": 1.4, "Taml": 1.25, "Thai": 1.25,
}  # fmt: skip


class _Scripts:
    """The scripts the installed ``regex`` knows, each with a private-use symbol standing for it."""

    def __init__(self) -> None:
        codes = []
        for code in SCRIPT_CODES:
            try:
                regex.compile(f"\\p{{sc={code}}}")
            except regex.error:  # a script newer than the installed regex's Unicode
                continue
            codes.append(code)
        self.symbol = {code: chr(0xF0000 + i) for i, code in enumerate(codes)}
        self.code_of = {symbol: code for code, symbol in self.symbol.items()}
        self.script_of = regex.compile("|".join(f"(?P<{c}>\\p{{sc={c}}})" for c in codes))
        self.extension_of = regex.compile(
            "|".join(f"(?P<{c}>\\p{{scx={c}}})" for c in codes if c not in _NO_SCRIPT)
        )


@functools.cache
def _scripts() -> _Scripts:
    return _Scripts()


_LETTER_OR_MARK = regex.compile(r"[\p{L}\p{M}]")


class _ScriptTable(dict[int, "str | None"]):
    """``str.translate`` table: a letter or mark -> its script's symbol; anything else deleted.

    A letter of the Common or Inherited script takes the first script of its
    Script_Extensions (``ー`` -> Hira, the Arabic tatweel -> Arab); a mark
    with none stays Inherited.
    """

    def __missing__(self, code_point: int) -> str | None:
        char = chr(code_point)
        value = None
        if _LETTER_OR_MARK.match(char):
            scripts = _scripts()
            found = scripts.script_of.match(char)
            script = (found.lastgroup if found else None) or "Zyyy"
            if script in _NO_SCRIPT:
                extension = scripts.extension_of.match(char)
                script = (extension.lastgroup if extension else None) or script
            value = scripts.symbol[script]
        self[code_point] = value
        return value


_SCRIPT_TABLE = _ScriptTable()


def letter_script(code_point: int) -> str | None:
    """The script a letter or mark counts in (``Zyyy``, ``Zinh``: none of its own); else None."""
    symbol = _SCRIPT_TABLE[code_point]
    return None if symbol is None else _scripts().code_of[symbol]


def script_codes() -> tuple[str, ...]:
    """The scripts letters are counted in (Common and Inherited left out), sorted."""
    return tuple(sorted(code for code in _scripts().symbol if code not in _NO_SCRIPT))


#: A combining mark with no letter before it: a line of stray marks is no letters.
_DANGLING_MARK = regex.compile(r"(?<!\p{L}\p{M}*)\p{M}")
_ASCII_LETTERS = bytes(c for c in range(128) if chr(c).isalpha())


@functools.lru_cache(maxsize=1 << 16)
def _scripted(text: str) -> str:
    """The line as one symbol per letter or mark (its script), everything else deleted.

    Cached: the letters and the script rule both ask, and a line recurs once
    per pair it is in (a subtitle's "Yes." tens of thousands of times).
    """
    return text.translate(_SCRIPT_TABLE)


def letter_share(text: str) -> float:
    """Letters among a line's non-space characters, combining marks counted as parts of letters.

    ``str.isalpha`` counts Unicode letters, not the combining marks (Mn, Mc,
    Me) that write vowels and other parts of a syllable in the Brahmic
    scripts (Devanagari ``ि``, Tamil ``ு``), Thai, Khmer and Myanmar: a plain
    Hindi line read as mostly symbols. A mark cannot stand alone in text,
    so counting it with its letter lets no line of symbols pass; a mark with
    no letter before it is not counted.

    Args:
        text: A normalized line (its only whitespace is the space).

    Returns:
        The share, 1.0 for a line with no non-space characters.
    """
    characters = len(text) - text.count(" ")
    if not characters:
        return 1.0
    if text.isascii():
        data = text.encode("ascii")
        return (len(data) - len(data.translate(None, _ASCII_LETTERS))) / characters
    dangling = len(_DANGLING_MARK.findall(text)) if _DANGLING_MARK.search(text) else 0
    return (len(_scripted(text)) - dangling) / characters


class KnownScripts(NamedTuple):
    """The scripts the tables know a language in, before any line is read.

    Attributes:
        primary: The scripts it is written in: CLDR's ``languageData`` scripts,
            its likely script, ``MULTI_SCRIPT``, a script subtag. A line in
            one of these that the language detector was not trained on is not
            the detector's to judge.
        secondary: CLDR's secondary scripts (``alt="secondary"``: Latin for
            Hindi and Chinese, Cyrillic for Romani): lines in them pass the
            script rule and are still judged by the detector.
    """

    primary: frozenset[str]
    secondary: frozenset[str]

    @property
    def all(self) -> frozenset[str]:
        """Both tiers."""
        return self.primary | self.secondary


@functools.cache
def _cldr_language_scripts() -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """CLDR's ``languageData``: per language, its primary and secondary scripts.

    Read from the ``supplementalData.xml`` that the ``language_data`` package
    (langcodes' data, a dependency) ships: nothing is downloaded. Composite
    codes expand (``Jpan`` -> Hani, Hira, Kana; ``Hans`` -> Hani).
    """
    import xml.etree.ElementTree as ElementTree
    from importlib.resources import files

    found: dict[str, tuple[set[str], set[str]]] = {}
    with (files("language_data") / "data" / "supplementalData.xml").open("rb") as xml:
        for element in ElementTree.parse(xml).getroot().iter("language"):
            scripts = element.get("scripts")
            code = element.get("type")
            if not scripts or not code:
                continue
            tier = 1 if element.get("alt") == "secondary" else 0
            for script in scripts.split():
                found.setdefault(code, (set(), set()))[tier].update(_expand(script))
    return {
        code: (frozenset(primary), frozenset(secondary - primary))
        for code, (primary, secondary) in found.items()
    }


def _expand(script: str) -> frozenset[str]:
    return COMPOSITE_SCRIPTS.get(script, frozenset({script}))


@functools.lru_cache(maxsize=4096)
def known_scripts(lang: str) -> KnownScripts | None:
    """The scripts the tables know ``lang`` in, by tier; None where they know none.

    Primary: CLDR's ``languageData`` scripts for the language, the script of
    CLDR's likely subtags (``langcodes``' ``maximize``), ``MULTI_SCRIPT``
    (languages corpora write in several scripts where CLDR lists one) and a
    script subtag (which adds its script and never narrows: corpora's subtags
    describe lines loosely, Tatoeba's ``jpn_Hira`` lines hold kanji too, and
    ``sh``/``hbs`` reach the prefilter as ``sr-latn`` while their files hold
    both alphabets; a run narrows a side to a script only where the user
    names one, ``--tgt-lang tt-Latn``). Secondary: CLDR's ``alt="secondary"``
    scripts. A language the tables do not know (``tlh``, made-up codes: its
    ``maximize`` would silently answer en-Latn-US) gives None; a run learns
    its scripts from its own lines (``stages/filter/rules/line_checks.py``).
    """
    import langcodes
    from langcodes.data_dicts import LIKELY_SUBTAGS

    raw = lang.strip().replace("_", "-")
    if raw.lower() in _BOTH_ALPHABETS:
        return KnownScripts(frozenset({"Latn", "Cyrl"}), frozenset())
    try:
        tag = langcodes.Language.get(raw)
    except (ValueError, langcodes.tag_parser.LanguageTagError):
        return None
    primary: set[str] = set(_expand(tag.script)) if tag.script else set()
    secondary: set[str] = set()
    code = tag.language or ""
    cldr = _cldr_language_scripts().get(code)
    if cldr is not None:
        primary |= cldr[0]
        secondary |= cldr[1]
    primary |= MULTI_SCRIPT.get(code, frozenset())
    language = langcodes.Language.get(code) if code else None
    known = language is not None and any(
        t in LIKELY_SUBTAGS and not t.startswith("und") for t in language.broader_tags()
    )
    likely = language.maximize().script if known and language is not None else None
    if likely:
        primary |= _expand(likely)
    if not primary and not secondary:
        return None
    return KnownScripts(frozenset(primary), frozenset(secondary - primary))


@functools.lru_cache(maxsize=4096)
def expected_scripts(lang: str) -> frozenset[str] | None:
    """Every script the tables know ``lang`` in, primary and secondary; None where unknown."""
    known = known_scripts(lang)
    return None if known is None else known.all


def declared_scripts(tag: str) -> frozenset[str] | None:
    """The scripts a user's tag names for a side: ``tt-Latn`` -> Latn; None without a script.

    A script subtag as typed by a user says which script the side is in; it
    brings the scripts written together with it in the language (``ja-Hira``:
    Japanese mixes kana and kanji, so Hani, Hira, Kana). ``sh`` and ``hbs``,
    which langcodes reads as ``sr-Latn``, name no script: their corpora hold both
    alphabets.
    """
    import langcodes

    raw = tag.strip().replace("_", "-")
    if raw.lower() in _BOTH_ALPHABETS:
        return None
    try:
        parsed = langcodes.Language.get(raw, normalize=False)
    except (ValueError, langcodes.tag_parser.LanguageTagError):
        return None
    if not parsed.script:
        return None
    named = set(_expand(parsed.script))
    known = known_scripts(parsed.language or "")
    primary = known.primary if known is not None else frozenset()
    for composite in COMPOSITE_SCRIPTS.values():
        if named & composite and composite <= primary:
            named |= composite
    return frozenset(named)


def declared_sides(src_lang: str, tgt_lang: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """``(language, scripts)`` of each side whose script the user named (``--tgt-lang tt-Latn``).

    A script subtag typed in ``--tgt-lang`` or ``--src-lang`` (in any language of
    a list) says which script that side is in: its lines are judged against it
    alone (``declared_scripts``).
    """
    typed = [tgt_lang, *(part for part in src_lang.split(",") if part != "auto")]
    found = {canonical_language(tag): named for tag in typed if (named := declared_scripts(tag))}
    return tuple(sorted(found.items()))


@functools.lru_cache(maxsize=1 << 16)
def line_scripts(text: str) -> dict[str, float]:
    """A line's letters (and marks) per script, weighted by ``SCRIPT_WEIGHT``.

    Letters of no script of their own (Common, Inherited) are left out; a line
    without letters gives ``{}``. Cached: the script rule and the run's
    script profile both ask, and a subtitle's "Yes." recurs tens of thousands
    of times.
    """
    if text.isascii():
        return {"Latn": float(sum(map(str.isalpha, text)))} if any(map(str.isalpha, text)) else {}
    mapped = _scripted(text)
    code_of = _scripts().code_of
    weights: dict[str, float] = {}
    for symbol in set(mapped):
        code = code_of[symbol]
        if code not in _NO_SCRIPT:
            weights[code] = mapped.count(symbol) * SCRIPT_WEIGHT.get(code, 1.0)
    return weights


def dominant_script(text: str) -> str | None:
    """The script holding most of a line's weighted letters; None for a line without letters."""
    if text.isascii():  # ASCII letters are Latin
        return "Latn" if any(map(str.isalpha, text)) else None
    weights = line_scripts(text)
    if not weights:
        return None
    return max(sorted(weights), key=weights.__getitem__)


def script_share(text: str, scripts: frozenset[str]) -> float:
    """Share of a line's letters (and marks) written in one of ``scripts`` (ISO 15924 codes).

    Letters are weighted by ``SCRIPT_WEIGHT`` (a Han character as three Latin
    letters); those of no script of their own (Common, Inherited) are left out.

    Returns:
        The share; 1.0 for a line without letters.
    """
    if text.isascii():
        return 1.0 if "Latn" in scripts or not any(map(str.isalpha, text)) else 0.0
    weights = line_scripts(text)
    total = sum(weights.values())
    if not total:
        return 1.0
    return sum(w for code, w in weights.items() if code in scripts) / total
