"""benchmarks/quality/noisy_corpus.py: the lexical noise of one pair, in every script."""

from __future__ import annotations

from benchmarks.quality.noisy_corpus import lexical_donors, words_of


def test_lexical_noise_finds_similar_lines_in_scripts_without_spaces():
    # One WORD each: without character pairs no line would share a word with another.
    assert words_of("今日は日曜日だ。") == {"今日", "日は", "は日", "日曜", "曜日", "日だ"}
    assert words_of("Today is Sunday.") == {"today", "is", "sunday"}
    pivots = ["今日は日曜日だ。", "猫が好きです。", "今日は月曜日。", "犬が好きです。"]
    assert lexical_donors(pivots, [0, 1]) == {0: 2, 1: 3}
