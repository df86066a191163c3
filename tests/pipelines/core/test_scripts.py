"""core/scripts.py: a line's length, letters and scripts, in every script."""

from __future__ import annotations

import pytest
from paramine.pipelines.core.scripts import (
    expected_scripts,
    length,
    letter_share,
    script_share,
)
from paramine.pipelines.core.text import normalize

from tests.paths import TATOEBA


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Where is the station?", 4),
        ("I'm doing the cooking.", 4),  # whitespace tokens: "I'm" is one word
        ("Yes, sir -- right away!", 4),  # "--" holds no letter: no word
        ("Zażółć gęślą jaźń.", 3),
        ("Я тебя люблю.", 3),
        ("मैं घर जा रहा हूँ।", 5),  # Devanagari words, their vowel signs inside
        ("ሰላም፡ነው።", 2),  # Ethiopic's wordspace separates words
        ("是。", 1),  # a run of an unspaced script is at least one word
        ("我喜欢猫。", 0.7 * 4),
        ("私は猫が好きです。", 0.7 * 3 + 5 / 3),  # kanji 0.7, kana a third
        ("ฉันรักแมว", 7 / 3),  # Thai: letters a third, vowel marks nothing
        ("我用iPhone拍照。", 1 + 1.4 + 1.4),  # mixed: both add up
        ("", 0),
        ("... !!!", 0),
    ],
)
def test_length_counts_words_or_weighted_characters(text: str, words: float) -> None:
    assert length(normalize(text)) == pytest.approx(words)


def test_length_ratio_keeps_true_japanese_and_chinese_pairs() -> None:
    # Text without spaces was one "word": nearly every pair failed the ratio.
    pairs = [
        ("Where do you live?", "どこに住んでいますか。"),
        ("Tom didn't want to go there alone.", "トムは一人でそこに行きたくなかった。"),
        ("I don't know what to do.", "我不知道该怎么办。"),
    ]
    for pivot, candidate in pairs:
        a, b = sorted((length(pivot), length(candidate)))
        assert (b + 1) / (a + 1) <= 2.5, (pivot, candidate, a, b)


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("Ala ma kota.", 9 / 10),
        ("मैं घर जा रहा हूँ।", 13 / 14),  # vowel signs are parts of letters
        ("ฉันรักแมว", 1.0),
        ("ស្រឡាញ់", 1.0),  # Khmer subscripts and vowel signs
        ("00:01:02,000 --> 00:01:04,500", 0.0),
        ("ि ि ि ि", 0.0),  # marks with no letter are no letters
        ("♪ ♪ ♪", 0.0),
        ("   ", 1.0),
    ],
)
def test_letter_share_counts_combining_marks_with_their_letters(text: str, share: float) -> None:
    assert letter_share(text) == pytest.approx(share)


@pytest.mark.parametrize(
    ("lang", "scripts"),
    [
        ("pl", {"Latn"}),
        ("pol", {"Latn"}),
        ("ru", {"Cyrl"}),
        ("hi", {"Deva"}),
        ("ur", {"Arab"}),  # Hindi and Urdu: two codes, one script each
        ("ta", {"Taml"}),
        ("si", {"Sinh"}),
        ("am", {"Ethi"}),
        ("ka", {"Geor"}),
        ("my", {"Mymr"}),
        ("km", {"Khmr"}),
        ("ja", {"Hani", "Hira", "Kana"}),
        ("ko", {"Hang", "Hani"}),
        ("zh", {"Hani", "Bopo"}),
        ("zh-Hant", {"Hani", "Bopo"}),
        ("ja-Hira", {"Hani", "Hira", "Kana"}),  # a subtag never narrows: Tatoeba's jpn_Hira
        ("sr", {"Cyrl", "Latn"}),  # Serbian in both alphabets
        ("sr-Latn", {"Cyrl", "Latn"}),  # what sh and hbs become
        ("uz-Arab", {"Latn", "Cyrl", "Arab"}),
        ("fr-Brai", {"Latn", "Brai"}),  # a subtag adds its script
        ("hbs", {"Latn", "Cyrl"}),
        ("pa", {"Guru", "Arab"}),
        ("tlh", None),  # no likely script: the line is counted unchecked
        ("xx", None),
    ],
)
def test_expected_scripts(lang: str, scripts: set[str] | None) -> None:
    assert expected_scripts(lang) == (None if scripts is None else frozenset(scripts))


def test_script_share_weighs_letters_by_script() -> None:
    assert script_share("Mam kota.", frozenset({"Latn"})) == 1.0
    assert script_share("Mam kota.", frozenset({"Cyrl"})) == 0.0
    # A Chinese line with a Latin name is a Chinese line.
    assert script_share("Bob帮助了我。", frozenset({"Hani", "Bopo"})) > 0.79
    # A Tamil line declared Hindi is not in Devanagari.
    tamil = "நான் வீட்டுக்குப் போகிறேன்."
    assert script_share(tamil, frozenset({"Deva"})) == 0.0
    assert script_share(tamil, frozenset({"Taml"})) == 1.0
    # Japanese kana's prolonged sound mark counts as kana.
    assert script_share("コーヒー", frozenset({"Hani", "Hira", "Kana"})) == 1.0
    assert script_share("123 ...", frozenset({"Deva"})) == 1.0  # no letters


def test_every_shared_script_set_keeps_its_lines_in_their_scripts() -> None:
    """No real line of the seven script sets fails the script or letters rule's default."""
    sets = {"eng-mar": "mr", "eng-tha": "th", "eng-khm": "km", "eng-kat": "ka", "eng-urd": "ur"}
    for folder, lang in sets.items():
        path = TATOEBA / "scripts" / folder / f"tatoeba-test-v2021-08-07.{folder[4:]}"
        if not path.is_file():
            pytest.skip(f"{path} is not here (../shared/corpora)")
        lines = [normalize(line) for line in path.read_text(encoding="utf-8").splitlines()][:500]
        scripts = expected_scripts(lang)
        assert scripts is not None
        low_script = [line for line in lines if script_share(line, scripts) < 0.8]
        low_letters = [line for line in lines if letter_share(line) < 0.5]
        # Tatoeba's Khmer file holds 11 Latin transliterations ("Baəy !"): right to drop.
        assert len(low_script) <= 0.025 * len(lines), (folder, low_script[:3])
        assert low_letters == [], (folder, low_letters[:3])
