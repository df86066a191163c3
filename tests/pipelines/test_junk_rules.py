"""The heuristic rules against the junk of real dumps, each on real-looking bad lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.pipelines.core.junk import RULES, Limits, first_failure, numbers

TATOEBA = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "tatoeba_test_v2021-08-07"


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
