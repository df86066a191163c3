"""rules/words.py: a line's length in words, in every script."""

from __future__ import annotations

import pytest
from paramine.pipelines.core.text import normalize
from paramine.pipelines.stages.filter.rules.words import length


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
