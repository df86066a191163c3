"""rules/scripts.py: a line's letters and scripts, in every script."""

from __future__ import annotations

import pytest
from paramine.pipelines.core.text import normalize
from paramine.pipelines.stages.filter.rules.scripts import (
    declared_scripts,
    declared_sides,
    dominant_script,
    expected_scripts,
    known_scripts,
    letter_share,
    script_share,
)

from tests.paths import TATOEBA


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
    ("lang", "primary", "secondary"),
    [
        ("pl", {"Latn"}, set()),
        ("pol", {"Latn"}, set()),
        ("ru", {"Cyrl"}, set()),
        ("hi", {"Deva"}, {"Latn", "Mahj"}),  # CLDR's secondary: romanized Hindi
        ("ur", {"Arab"}, set()),  # Hindi and Urdu: two codes, one script each
        ("ta", {"Taml"}, set()),
        ("si", {"Sinh"}, set()),
        ("am", {"Ethi"}, set()),
        ("ka", {"Geor"}, set()),
        ("my", {"Mymr"}, set()),
        ("km", {"Khmr"}, set()),
        ("ja", {"Hani", "Hira", "Kana"}, set()),
        ("ko", {"Hang", "Hani"}, set()),
        ("zh", {"Hani", "Bopo"}, {"Latn", "Phag"}),
        ("zh-Hant", {"Hani", "Bopo"}, {"Latn", "Phag"}),
        ("ja-Hira", {"Hani", "Hira", "Kana"}, set()),  # a subtag never narrows: jpn_Hira
        ("sr", {"Cyrl", "Latn"}, set()),  # Serbian in both alphabets
        ("sr-Latn", {"Cyrl", "Latn"}, set()),  # what sh and hbs become
        ("uz-Arab", {"Latn", "Cyrl", "Arab"}, set()),
        ("fr-Brai", {"Latn", "Brai"}, {"Dupl"}),  # a subtag adds its script
        ("hbs", {"Latn", "Cyrl"}, set()),
        ("pa", {"Guru", "Arab"}, set()),
        ("tt", {"Cyrl", "Latn"}, set()),
        ("ota", {"Arab"}, set()),  # CLDR's likely script; Tatoeba also writes it in Latin
        ("lad", {"Hebr"}, set()),  # ... and Ladino mostly in Latin: the run learns those
        ("grc", {"Grek", "Cprt"}, set()),  # languageData's Greek beside the likely Cypriot
        ("hoc", {"Deva"}, {"Wara"}),
        ("tok", {"Latn"}, set()),  # in CLDR, not yet in the registry
    ],
)
def test_known_scripts_by_tier(lang: str, primary: set[str], secondary: set[str]) -> None:
    known = known_scripts(lang)
    assert known is not None
    assert (known.primary, known.secondary) == (frozenset(primary), frozenset(secondary))
    assert expected_scripts(lang) == frozenset(primary | secondary)


@pytest.mark.parametrize("lang", ["tlh", "xx"])
def test_a_language_no_table_knows_has_no_scripts(lang: str) -> None:
    # No likely script: its scripts are learned from the run's lines.
    assert known_scripts(lang) is None and expected_scripts(lang) is None


@pytest.mark.parametrize(
    ("tag", "scripts"),
    [
        ("tt-Latn", {"Latn"}),
        ("sr-Latn", {"Latn"}),  # typed by a user: Latin only
        ("ja-Hira", {"Hani", "Hira", "Kana"}),  # kana and kanji go together
        ("zh-Hant", {"Hani", "Bopo"}),
        ("uz-Cyrl", {"Cyrl"}),
        ("pl", None),
        ("sh", None),  # langcodes reads it as sr-Latn; its corpora hold both alphabets
        ("hbs", None),
    ],
)
def test_a_script_the_user_names_is_the_sides_script(tag: str, scripts: set[str] | None) -> None:
    assert declared_scripts(tag) == (None if scripts is None else frozenset(scripts))


def test_each_side_a_script_subtag_names_is_judged_against_it_alone() -> None:
    # Both sides, any language of a pivot list, by canonical code (the subtag kept: the
    # side's lines are declared so); sides without a subtag left out.
    assert declared_sides("auto", "tt-Latn") == (("tt-latn", frozenset({"Latn"})),)
    assert declared_sides("de,uz-Cyrl", "sr-Latn") == (
        ("sr-latn", frozenset({"Latn"})),
        ("uz-cyrl", frozenset({"Cyrl"})),
    )
    assert declared_sides("en", "pl") == ()


def test_a_lines_main_script_weighs_its_letters() -> None:
    assert dominant_script("Mam kota.") == "Latn"
    assert dominant_script("Bob帮助了我。") == "Hani"
    assert dominant_script("Как дела, Tom?") == "Cyrl"
    assert dominant_script("123 ...") is None


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
