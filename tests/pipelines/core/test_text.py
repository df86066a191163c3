"""Tests for paramine.pipelines.core.text: normalization, comparison keys and offline counting."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paramine.pipelines.core import text
from paramine.pipelines.core.text import (
    canonical_lang,
    comparison_key,
    edit_similarity,
    lang_aliases,
    normalize,
    normalized_key,
    punkt_languages,
    sentence_count,
)
from paramine.schemas.errors import UsageError
from paramine.schemas.languages import (
    canonical_language,
    language_aliases,
    language_name,
    registered,
)

from tests.paths import ROOT

REPO_ROOT = ROOT


@pytest.fixture(autouse=True)
def _no_nltk_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that would download or look up NLTK data files."""
    import nltk

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"NLTK data access attempted: {args!r}")

    monkeypatch.setattr(nltk, "download", refuse)
    monkeypatch.setattr(nltk.data, "find", refuse)
    monkeypatch.setattr(nltk.data, "load", refuse)


# normalize


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ﬁne ﬂower", "fine flower"),  # NFKC ligatures
        ("ＡＢＣ１２３", "ABC123"),  # NFKC full-width forms
        ("a\u00a0b", "a b"),  # NBSP
        ("a\u202fb\u3000c", "a b c"),  # narrow NBSP, ideographic space
        ("a\tb\nc\r\nd", "a b c d"),  # tabs and newlines
        ("a \t \n b", "a b"),  # a run collapses to one space
        ("a\x00b\x85c\u2028d", "a b c d"),  # control chars, NEL, line separator
        ("  padded  ", "padded"),
        ("\ufeffBOM at start", "BOM at start"),
        ("zero\u200bwidth", "zerowidth"),
        (" \t\n ", ""),
        ("", ""),
        ("Zażółć gęślą jaźń.", "Zażółć gęślą jaźń."),  # already normal: unchanged
    ],
)
def test_normalize(raw: str, expected: str) -> None:
    assert normalize(raw) == expected


def test_normalize_composes_decomposed_letters() -> None:
    decomposed = "z\u0307o\u0301łw"  # ż and ó as base + combining mark
    assert normalize(decomposed) == "żółw"


def test_normalize_is_idempotent() -> None:
    once = normalize("  ﬁ\u00a0x\t\ty\u200b ")
    assert normalize(once) == once


def normalize_every_step(text: str) -> str:
    """``normalize`` as specified, with no step skipped."""
    text = unicodedata.normalize("NFKC", text).translate(
        dict.fromkeys(map(ord, "\u200b\u2060\ufeff"))
    )
    return re.sub(r"[\s\x00-\x1f\x7f-\x9f]+", " ", text).strip()


def comparison_key_every_step(text: str) -> str:
    """``comparison_key`` as specified: every punctuation character (P*) and space deleted."""
    return "".join(
        c
        for c in normalize_every_step(text).casefold()
        if c != " " and not unicodedata.category(c).startswith("P")
    )


#: Characters that take the slow paths: whitespace and controls of every kind,
#: invisible ones, NFKC compositions, punctuation, casefold expansions.
ODD = (
    "a Zż \t\n\r\x00\x1c\x85\x7f\u00a0\u2028\u3000\u200b\u2060\ufeff\u0301\u0307ﬁＡ,.!?„”«»–…ßİǄ$€+"
)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(ODD) | st.characters(), max_size=30))
def test_normalize_and_comparison_key_take_shortcuts_to_the_same_result(text: str) -> None:
    assert normalize(text) == normalize_every_step(text)
    assert comparison_key(text) == comparison_key_every_step(text)
    assert normalized_key(normalize(text)) == comparison_key_every_step(text)


def test_shortcuts_agree_on_real_lines(shared_corpora: Path) -> None:
    tatoeba = shared_corpora / "tatoeba_test_v2021-08-07"
    for path in sorted(tatoeba.glob("**/tatoeba-test-v2021-08-07.[a-z][a-z][a-z]"))[:20]:
        for line in path.read_text(encoding="utf-8").splitlines()[:300]:
            assert normalize(line) == normalize_every_step(line), line
            assert comparison_key(line) == comparison_key_every_step(line), line


# comparison_key and edit_similarity


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Tom is here.", "tom is here"),
        ("Tom is here.", "  TOM   is here!!! "),
        ("„Czy on przyjdzie?” – zapytała.", "czy on przyjdzie zapytała"),
        ("Straße", "STRASSE"),  # casefold, not lower
        ("ﬁne", "fine"),
        ("Ahoj, jak se máš?", "ahoj jak se máš"),
    ],
)
def test_comparison_key_equal(a: str, b: str) -> None:
    assert comparison_key(a) == comparison_key(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("25 is a number", "26 is a number"),
        ("It costs $5.", "It costs €5."),  # symbols are kept
        ("5 + 3", "5 = 3"),
        ("Mam kota.", "Mam psa."),
        ("żółw", "zolw"),  # diacritics are letters, not punctuation
    ],
)
def test_comparison_key_different(a: str, b: str) -> None:
    assert comparison_key(a) != comparison_key(b)


def test_comparison_key_strips_punctuation_and_spaces() -> None:
    assert comparison_key(" Tom, is here... ") == "tomishere"
    assert comparison_key("?!… — «»") == ""


def test_edit_similarity_bounds() -> None:
    assert edit_similarity("Tom is here.", "tom is here") == 1.0
    assert edit_similarity("", "") == 1.0
    assert edit_similarity("abc", "xyz") == 0.0
    assert edit_similarity("abc", "") == 0.0
    near = edit_similarity("I have a cat.", "I have a car.")
    assert 0.8 < near < 1.0
    far = edit_similarity("I have a cat.", "She left yesterday.")
    assert 0.0 <= far < near


def test_edit_similarity_is_symmetric() -> None:
    a, b = "Mieszkam w Krakowie.", "Mieszkał w Krakowie od lat."
    assert edit_similarity(a, b) == edit_similarity(b, a)


# sentence_count


def _naive_split_count(passage: str) -> int:
    return len(re.split(r"(?<=[.!?]) ", passage))


@pytest.mark.parametrize(
    ("passage", "lang"),
    [
        # "ul.", "tzw.", "m.in." are in the Polish model's abbreviation list.
        ("Mieszka przy ul. Marszałkowskiej. Ma kota.", "pl"),
        ("To jest tzw. efekt motyla. Znasz go?", "pl"),
        ("Pracował m.in. w Krakowie. Potem wyjechał.", "pol"),
        # "tzv.", "např.", "mudr." are in the Czech model's abbreviation list.
        ("Je to tzv. zlatý řez. Znáš ho?", "cs"),
        ("Viz např. kapitola dvě. Je zajímavá.", "ces"),
        ("Navštívil MUDr. Nováka. Byl nemocný.", "cze"),
    ],
)
def test_sentence_count_respects_abbreviations(passage: str, lang: str) -> None:
    assert _naive_split_count(passage) == 3
    assert sentence_count(passage, lang) == 2


def test_sentence_count_polish_passage() -> None:
    passage = (
        "Urodził się w 1990 r. w Warszawie. Studiował m.in. fizykę i matematykę. "
        "Czy wiesz, gdzie teraz mieszka? Chyba przy ul. Marszałkowskiej! "
        "Nie jestem pewien."
    )
    assert sentence_count(passage, "pl") == 5


def test_sentence_count_czech_passage() -> None:
    passage = (
        "Přednášel prof. Novák. Mluvil o tzv. zlatém řezu a o dalších tématech. "
        "Bylo to zajímavé? Ano, velmi! Příště přijde Ing. Dvořák."
    )
    assert sentence_count(passage, "cs") == 5


def test_sentence_count_real_tatoeba_polish(shared_corpora: Path) -> None:
    path = shared_corpora / "tatoeba_test_v2021-08-07/eng-pol/tatoeba-test-v2021-08-07.pol"
    lines = path.read_text(encoding="utf-8").splitlines()[:500]
    # A line with no terminal mark before its end is a single sentence.
    single = [ln for ln in lines if not re.search(r"[.!?…]\s", ln.strip())]
    assert len(single) > 400
    assert all(sentence_count(ln, "pl") == 1 for ln in single)
    # Three single sentences in a row are three sentences.
    joined = " ".join(ln for ln in single[:60] if re.search(r"[.!?]$", ln))
    expected = sum(1 for ln in single[:60] if re.search(r"[.!?]$", ln))
    assert sentence_count(joined, "pl") == expected


def test_sentence_count_empty() -> None:
    assert sentence_count("", "pl") == 0
    assert sentence_count(" \n\t", "cs") == 0
    assert sentence_count("Bez kropki na końcu", "pl") == 1


def test_sentence_count_fallback_warns_once_per_language(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The warning is cached per process; start from a clean cache so the
    # test sees the first call for this language.
    text._punkt_model_name.cache_clear()
    text._sentence_tokenizer.cache_clear()
    passage = "Dr. Smith is here. He came yesterday."  # English rules for "Dr."
    with caplog.at_level(logging.WARNING, logger="paramine.pipelines.core.text"):
        counts = [sentence_count(passage, code) for code in ("hu", "hun", "HU", "hu")]
    assert counts == [2, 2, 2, 2]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "'hu'" in warnings[0].getMessage()


def test_sentence_count_no_warning_for_modelled_language(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text._punkt_model_name.cache_clear()
    text._sentence_tokenizer.cache_clear()
    with caplog.at_level(logging.WARNING, logger="paramine.pipelines.core.text"):
        assert sentence_count("Ma kota. Ma psa.", "polish") == 2
    assert not caplog.records


def test_punkt_languages() -> None:
    langs = punkt_languages()
    assert langs == sorted(langs)
    assert {"cs", "de", "en", "pl", "ru"} <= set(langs)
    assert "sk" not in langs
    assert all(len(code) == 2 for code in langs)


@pytest.mark.parametrize("lang", punkt_languages())
def test_every_punkt_model_loads(lang: str) -> None:
    assert sentence_count("One. Two.", lang) == 2


# canonical_lang and lang_aliases


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("eng", "en"),
        ("en", "en"),
        ("pol", "pl"),
        ("ces", "cs"),
        ("cze", "cs"),
        ("slk", "sk"),
        ("deu", "de"),
        ("ger", "de"),
        ("fra", "fr"),
        ("fre", "fr"),
        ("rus", "ru"),
        ("ukr", "uk"),
        ("swe", "sv"),
        ("spa", "es"),
        ("ell", "el"),
        ("gre", "el"),
        ("nor", "no"),
        ("nob", "nb"),
        ("zho", "zh"),
        ("cmn", "zh"),
        ("POL", "pl"),
        (" Polish ", "pl"),
        ("czech", "cs"),
        ("pt_BR", "pt-br"),
        ("por-BR", "pt-br"),
        ("XYZ", "xyz"),
        ("tlh", "tlh"),
    ],
)
def test_canonical_lang(code: str, expected: str) -> None:
    assert canonical_lang(code) == expected


def test_lang_aliases() -> None:
    assert lang_aliases("pl") == {"pl", "pol"}
    assert lang_aliases("pol") == {"pl", "pol"}
    assert lang_aliases("cs") == {"cs", "ces", "cze"}
    assert lang_aliases("German") == {"de", "deu", "ger"}
    assert lang_aliases("xx") == {"xx"}


def test_lang_aliases_returns_a_fresh_set() -> None:
    aliases = lang_aliases("pl")
    aliases.add("mutated")
    assert lang_aliases("pl") == {"pl", "pol"}


def test_old_table_rows_keep_their_codes() -> None:
    """Spellings the hand-written table knew still map where they did."""
    rows = {
        "ar": ("ara", "arb", "arabic"),
        "et": ("est", "ekk", "estonian"),
        "fa": ("fas", "per", "pes", "persian"),
        "lv": ("lav", "lvs", "latvian"),
        "nb": ("nob", "bokmål"),
        "nl": ("nld", "dut", "dutch", "flemish"),
        "ro": ("ron", "rum", "moldavian"),
        "zh": ("zho", "chi", "cmn", "chinese", "mandarin"),
    }
    for code, spellings in rows.items():
        assert {canonical_lang(s) for s in spellings} == {code}
    assert lang_aliases("zh") == {"zh", "zho", "chi", "cmn"}
    assert lang_aliases("fa") == {"fa", "fas", "per", "pes"}


class TestLanguagesModule:
    """paramine.schemas.languages: langcodes behind three functions."""

    @pytest.mark.parametrize(
        ("code", "expected"),
        [("pol", "pl"), ("ces", "cs"), ("cze", "cs"), ("Polish", "pl"), ("tlh", "tlh")],
    )
    def test_canonical_language(self, code: str, expected: str) -> None:
        assert canonical_language(code) == expected

    @pytest.mark.parametrize("code", ["xq", "x1z", "not a language", ""])
    def test_unknown_language_is_a_usage_error_naming_it(self, code: str) -> None:
        with pytest.raises(UsageError, match=f"unknown language {code!r}"):
            canonical_language(code)
        with pytest.raises(UsageError):
            language_aliases(code)

    @pytest.mark.parametrize(
        ("code", "canonical"), [("tok", "tok"), ("XYZ", "xyz"), ("tok-Latn", "tok-latn")]
    )
    def test_a_well_formed_code_the_registry_lacks_is_taken_as_it_is(
        self, code: str, canonical: str
    ) -> None:
        # ISO 639-3 grows every year: Toki Pona (tok) came in 2022.
        assert canonical_language(code) == canonical
        assert not registered(code) and registered("pol")
        assert language_aliases(code) == frozenset({canonical})

    def test_aliases_and_names(self) -> None:
        assert language_aliases("cze") == frozenset({"cs", "ces", "cze"})
        assert language_aliases("eng") == frozenset({"en", "eng"})
        assert language_name("pol") == "Polish"
        assert language_name("nb") == "Norwegian Bokmål"

    def test_tatoeba_and_opus_file_names_pair(self, tmp_path: Path) -> None:
        """Tatoeba names files by 639-3, OPUS by 639-1: both resolve for an en-pl run."""
        from paramine.pipelines.formats import resolve_inputs

        (tmp_path / "t.eng").write_text("Cat.\n")
        (tmp_path / "t.pol").write_text("Kot.\n")
        (tmp_path / "o.en-pl.en").write_text("Dog.\n")
        (tmp_path / "o.en-pl.pl").write_text("Pies.\n")
        shards = resolve_inputs([str(tmp_path)], "English", "pol")
        assert sorted((Path(s.url).name, Path(s.companion).name) for s in shards) == [
            ("o.en-pl.en", "o.en-pl.pl"),
            ("t.eng", "t.pol"),
        ]
        assert {(s.pivot_lang, s.lang) for s in shards} == {("en", "pl")}


# import cost


@pytest.mark.pipeline
def test_import_does_not_load_nltk_or_models() -> None:
    code = (
        "import sys, paramine.pipelines.core.text; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'nltk', 'punkt'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
