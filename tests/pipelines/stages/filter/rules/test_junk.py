"""The heuristic rules against the junk of real dumps, each on real-looking bad lines."""

from __future__ import annotations

import re

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from paramine.pipelines.core.text import normalize
from paramine.pipelines.stages.filter.rules.junk import (
    RULES,
    Limits,
    Sides,
    failures,
    line_verdicts,
    numbers,
    repeats,
)
from paramine.pipelines.stages.filter.rules.scripts import (
    expected_scripts,
    letter_share,
    script_share,
)

from tests.paths import TATOEBA


def first_failure(
    rules: tuple[str, ...], pivot: str, candidate: str, pivot_lang: str, lang: str, limits: Limits
) -> str | None:
    """The drop reason of the first of ``rules`` the pair fails, through ``failures`` as a run.

    The script rule is given its answer as a run gives it when the tables
    decide: a side is in the wrong script when its language has known
    scripts and too few of its letters are in them.
    """

    def script() -> Sides:
        return tuple(  # type: ignore[return-value]
            (known := expected_scripts(code)) is not None
            and script_share(text, known) < limits.min_script_share
            for text, code in ((pivot, pivot_lang), (candidate, lang))
        )

    return next((reason for reason, _ in failures(rules, pivot, candidate, limits, script)), None)


@pytest.mark.parametrize(
    ("rule", "pivot", "candidate", "reason"),
    [
        ("urls", "Subtitles by www.addic7ed.com", "Napisy: www.addic7ed.com", "url_or_email"),
        ("urls", "Write to me at tom@example.org.", "Napisz do mnie.", "url_or_email"),
        ("urls", "Download: https://bit.ly/3xYz", "Pobierz", "url_or_email"),
        ("markup", "<i>Where are you going?</i>", "<i>Dokąd idziesz?</i>", "markup"),
        ("markup", "{\\an8}Previously on Lost", "Poprzednio w Zagubionych", "markup"),
        ("markup", "Tom &amp; Mary", "Tom i Mary", "markup"),
        ("letters", "♪ ♪ ♪", "♪ ♪", "few_letters"),
        ("letters", "- 23:14:05,120 -->", "23:14:07", "few_letters"),
        ("script", "Where are you?", "Где ты?", "wrong_script"),
        ("numbers", "I have 25 cats.", "Mam 26 kotów.", "numbers_differ"),
        ("question", "Are you coming?", "Przyjdę jutro.", "question_mismatch"),
        ("repeats", "Nooooooo!", "Nieeeeee!", "repeated_text"),
        ("repeats", "Go go go go!", "Naprzód!", "repeated_text"),
    ],
)
def test_each_rule_drops_its_bad_line(rule: str, pivot: str, candidate: str, reason: str) -> None:
    assert first_failure((rule,), pivot, candidate, "en", "pl", Limits()) == reason


@pytest.mark.parametrize(
    ("pivot", "candidate"),
    [
        ("It costs 1,000 dollars.", "To kosztuje 1000 dolarów."),
        ("He left home at 8:00.", "Wyszedł z domu o 8.00"),
        ("Is it true?", "Czy to prawda?"),
        ("Is it true? ", "Czy to prawda?\u201d"),
        ("Zażółć gęślą jaźń.", "Zażółć gęślą jaźń."),
        ("Γεια σου;", "Cześć?"),
    ],
)
def test_good_lines_pass_every_rule(pivot: str, candidate: str) -> None:
    pivot_lang = "el" if pivot.startswith("Γ") else "en"
    assert first_failure(tuple(RULES), pivot, candidate, pivot_lang, "pl", Limits()) is None


def test_numbers_ignore_zeros_separators_and_order() -> None:
    assert numbers("8:00 and 1,500") == numbers("1.500 i 8.00") == "158"


def test_structural_rules_drop_next_to_nothing_of_curated_bitext() -> None:
    text = (TATOEBA / "eng-pol" / "test.txt").read_text(encoding="utf-8")
    rows = [
        fields for fields in (line.split("\t") for line in text.splitlines()) if len(fields) == 4
    ]
    assert len(rows) > 10_000
    structural = ("urls", "markup", "letters", "script", "repeats")
    dropped = [r for r in rows if first_failure(structural, r[2], r[3], "en", "pl", Limits())]
    assert len(dropped) <= 2, dropped[:5]  # measured: 1 of 10,099 (a line of digits)


def repeats_by_words(text: str) -> bool:
    """The repeats rule as defined: five equal characters, or three equal lowercased words.

    Python's ``re``, as the rule: the ``regex`` module counts combining marks as word characters.
    """
    if re.search(r"(.)\1{4}", text):
        return True
    words = re.split(r"\W+", text.lower())
    return any(words[i] == words[i + 1] == words[i + 2] != "" for i in range(len(words) - 2))


@pytest.mark.parametrize(
    "text",
    [
        "Go go GO!",
        "No, no, no.",
        "ha-ha-ha",
        "Nie, nie, nie!",
        "Да да да",
        "नमस्ते नमस्ते नमस्ते",
        "Tak tak, tak i nie.",
        "nono no no",
        "no no non",
        "ano no no",
        "So so good, so.",
        "a_a a_a a_a",
        "Zzzzz...",
        "AaAaA",
        "",
    ],
)
def test_repeats_is_its_definition(text: str) -> None:
    assert repeats(text) is repeats_by_words(text)


def test_repeats_agrees_with_its_definition_on_many_lines() -> None:
    """Tatoeba's curated lines (none repeats) and synthetic subtitles (some do)."""
    from benchmarks.lib.synthetic import Bitext

    text = (TATOEBA / "eng-pol" / "test.txt").read_text(encoding="utf-8")
    lines = [normalize(field) for line in text.splitlines() for field in line.split("\t")[2:4]]
    lines += [normalize(line) for pair in Bitext(5_000, 0).pairs() for line in pair]
    assert len(lines) > 30_000
    assert sum(map(repeats_by_words, lines)) > 10
    assert [line for line in lines if repeats(line) is not repeats_by_words(line)] == []


def letter_share_by_character(text: str) -> float:
    """Letters (L*) and the marks (M*) that sit on a letter, over the non-space characters.

    The ``regex`` module's Unicode, as paramine's: Python's own ``unicodedata``
    may be older (U+1DFCD is a Latin letter since Unicode 15).
    """
    counted, after_letter = 0, False
    for char in text:
        if regex.match(r"\p{L}", char):
            counted, after_letter = counted + 1, True
        elif regex.match(r"\p{M}", char) and after_letter:
            counted += 1
        else:
            after_letter = False
    characters = len(text) - text.count(" ")
    return counted / characters if characters else 1.0


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from("aZ1 ,.żółЖжαβ\u00aaǅ٣\u0915\u093f\u0e01\u0e34\u17d2\u0301")
        | st.characters()
    )
)
def test_letter_share_counts_letters_and_the_marks_on_them(text: str) -> None:
    line = normalize(text)
    assert letter_share(line) == pytest.approx(letter_share_by_character(line))


@pytest.mark.parametrize(
    ("candidate", "lang", "fails"),
    [
        ("நான் வீட்டுக்குப் போகிறேன்.", "hi", True),  # Tamil declared Hindi
        ("नमस्ते, आप कैसे हैं?", "hi", False),
        ("Здраво, како си?", "sr", False),  # Serbian in either alphabet
        ("Zdravo, kako si?", "sr", False),
        ("こんにちは、元気ですか。", "ja", False),
        ("안녕하세요, 잘 지내세요?", "ko", False),
        ("Привет!", "ja", True),
        ("ሰላም፣ እንዴት ነህ?", "am", False),
        ("გამარჯობა, როგორ ხარ?", "ka", False),
        ("Hello!", "ka", True),
        ("qaStaH nuq?", "tlh", False),  # Klingon: no known script, not judged here
    ],
)
def test_the_script_rule_knows_every_script(candidate: str, lang: str, fails: bool) -> None:
    reason = first_failure(("script",), "Hello, how are you?", candidate, "en", lang, Limits())
    assert (reason == "wrong_script") is fails


def test_link_and_markup_anchors_do_not_hide_a_match() -> None:
    for line in (
        "Visit WWW.Example.COM now",
        "tom@x.pl",
        "ftp://a.b",
        "<I>Yes</I>",
        "a &amp; b",
        "{\\an8}Hej",
    ):
        assert first_failure(("urls", "markup"), line, "x", "en", "pl", Limits())
    assert (
        first_failure(("urls", "markup"), "www and @ and < alone", "x", "en", "pl", Limits())
        is None
    )


def test_the_batch_tests_find_the_lines_the_line_tests_find() -> None:
    # Anchors at a line's start and end (where the joined batch puts a
    # line break beside them), anchors without a match, and clean lines.
    lines = [
        "www.example.com",
        "write to tom@",
        "@tom.pl",
        "<i>",
        "x <",
        "&amp;",
        "a & b",
        "",
        "{\\an8}",
        "Visit WWW.Example.COM now",
        "ftp://a.b",
        "Tom ma kota.",
        "",
    ]
    with_lines = [*lines, *(f"{a} {b}" for a in lines for b in lines[:5])]
    limits = Limits()
    for name in ("urls", "markup"):
        rule = RULES[name]
        assert rule.lines is not None and rule.line is not None
        expected = [rule.line(text, limits) for text in with_lines]
        assert rule.lines(with_lines, limits) == expected
        assert any(expected) and not all(expected)
        assert rule.lines([], limits) == []
    shares = [letter_share(text) for text in with_lines]
    found = line_verdicts(tuple(RULES), with_lines, shares, limits)
    assert set(found) == {"urls", "markup", "letters", "repeats"}  # the per-line rules
    assert found["letters"] == [share < limits.min_letter_share for share in shares]
    assert found["repeats"] == [repeats(text) for text in with_lines]


def test_failures_read_the_batch_verdicts_as_it_judges_them_itself() -> None:
    pairs = [("<i>Hej</i>", "Cześć"), ("♪ ♪", "♪"), ("Go go go go!", "Naprzód!"), ("Tak.", "Yes.")]
    lines = [text for pair in pairs for text in pair]
    limits = Limits()
    found = line_verdicts(tuple(RULES), lines, [letter_share(t) for t in lines], limits)
    for i, (pivot, candidate) in enumerate(pairs):
        rows = (2 * i, 2 * i + 1)

        def sides(name: str, rows: tuple[int, int] = rows) -> Sides:
            return found[name][rows[0]], found[name][rows[1]]

        alone = list(failures(tuple(RULES), pivot, candidate, limits, lambda: (False, False)))
        batched = failures(tuple(RULES), pivot, candidate, limits, lambda: (False, False), sides)
        assert list(batched) == alone
