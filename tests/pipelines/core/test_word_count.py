"""word_count's fast path gives NLTK's Treebank count, and the prefilter decides as before."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from paramine.pipelines.core import text
from paramine.pipelines.core.text import word_count
from paramine.pipelines.stages import prefilter
from paramine.pipelines.stages.prefilter import PrefilterOptions, prefilter_reason
from paramine.schemas.records import AlignedPair


def treebank_count(sentence: str) -> int:
    """The count word_count gave before the fast path: NLTK's tokens with a letter or digit."""
    from nltk.tokenize.destructive import NLTKWordTokenizer

    tokens = NLTKWordTokenizer().tokenize(sentence)
    return sum(1 for token in tokens if re.search(r"[^\W_]", token))


# Each is counted by the pattern alone (no Treebank fallback).
TRICKY = [
    # English contractions: split suffixes and their boundaries.
    "I don't know, do you?",
    "Tom's car isn't here; it's Mary's.",
    "We'll see, they're late and you've won. I'm sure he'd agree.",
    "CAN'T STOP, WON'T STOP!",
    "Can'T and doN't stay whole.",
    "Tom's,5 and I'm-here and we'll_ and it's.x",
    'He said: "I\'m tired."',
    "It's (probably) the dog's.",
    "That's his...",
    "You're--I mean, you've--won!",
    # Words NLTK cuts in two.
    "I cannot go, I gotta go, gimme that, lemme see, gonna rain.",
    "Wanna go? I wanna. You wanna-be.",
    "D'ye think more'n ten came?",
    "x-cannot-y and _cannot and Cannot.",
    "wannabe gonnas cannoted",
    # Leading and trailing apostrophes, quotes.
    "'Tis the season, 'twas the night, 'em all.",
    "The boys' toys and the Joneses' house.",
    "``Quoted`` and “curly” and „Polish” and «French» and ‘single’.",
    "O'Brien and d'Artagnan and l'homme.",
    # Numbers, units, URLs, e-mail, symbols.
    "It costs $3.88 (roughly 3,36 euros), i.e. 25% less.",
    "Call +48 123-456-789 at 10:30 or 22:15.",
    "See https://example.com/a_b?x=1&y=2#top or mail tom@example.com.",
    "Version 2.0.1 - released 2021-08-07 -- finally!",
    "A/B testing, 3×4=12, 20 °C, 5 km/h, C++ and C#.",
    "The U.S.A. and e.g. Mr. Smith.",
    "Wait... what?! Really?!?",
    "First item* second item; third: done.",
    "Figure‒dash, en–dash, em—dash, bar―here.",
    "x,y and x:y and 1,5 and 1:5 and a,,b and a::1",
    "Ends with a period after quotes.\"'",
    # Plain lines (words, single spaces, commas, closing punctuation): spaces + 1.
    "Yes, sir.",
    "No, no, no!",
    "Tak, proszę pana?!",
    "Room 101 at 5 then...",
    "Gonna go, cannot stay",
    "ok",
    "[Brackets] {braces} <angles>",
    # Polish, Czech, Russian, Ukrainian, German diacritics.
    "Zażółć gęślą jaźń, a potem idź spać.",
    "„Gdzie jest ul. Długa?” – zapytał turysta.",
    "Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "Viděl jsem to (např. včera) na vlastní oči.",
    "Я не знаю, що це таке. Він п'ять разів прийшов.",
    "Ich weiß nicht, ob er's schafft.",
    # Scripts without spaces count chunks.
    "私は学生です。",
    "我不知道他在哪里，你知道吗？",
    "これは「ペン」です、たぶん。",
    # Odd whitespace.
    "tabs\tand\nnewlines\u00a0and\u3000ideographic spaces",
    "",
    "   ",
    "... !!! ?",
]


@pytest.mark.parametrize("sentence", TRICKY)
def test_fast_count_equals_treebank_count(sentence: str) -> None:
    assert text._fast_word_count(sentence) == treebank_count(sentence)
    assert word_count(sentence, "en") == treebank_count(sentence)


# Each is one the pattern may miscount, so word_count asks NLTK.
FALLBACK = [
    "rock'n'roll",  # two apostrophes in one chunk
    "'Hello,' she said.",
    "Rock-'n'-roll",
    "She said ''hello''.",
    "x-'tis",  # NLTK's opening-quote rule splits after the apostrophe
    "²'abc",  # a digit to `re` but not a word character to NLTK's `regex` rules
    "cannot'twas",  # the padding of "cannot" makes "'twas" split
    "Cannot's",
    "gonnan't",
    "wanna' go",
    "a\x1cb's",  # a separator to str.split, not whitespace to `regex`
    ",\U00010d40",  # a digit only in the newer Unicode of the `regex` module
]


@pytest.mark.parametrize("sentence", FALLBACK)
def test_uncertain_texts_fall_back_to_treebank(sentence: str) -> None:
    assert text._fast_word_count(sentence) is None
    assert word_count(sentence, "en") == treebank_count(sentence)


def test_random_texts_of_tricky_pieces_count_as_treebank() -> None:
    pieces = [
        *"anmtsdNTMSDıİéąЖ中²_05 \t\n\xa0'\"`«»“”‘’„;@#$%&–—?!*[](){}<>.,:-/+…\u0301\u200d",
        *["can", "not", "gon", "na", "wan", "more", "'n", "d'ye", "'s", "'m", "'d", "n't"],
        *["N'T", "'ll", "'re", "'VE", "'tis", "'twas", "gim", "me", "lem", "got", "ta"],
        *["..", "--", "cannot", "Gonna", "wanna", "''", "don", "Tom", "3,5", "e.g."],
    ]
    rng = random.Random(30)
    checked = 0
    for _ in range(3000):
        sentence = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert word_count(sentence, "en") == treebank_count(sentence), repr(sentence)
        checked += text._fast_word_count(sentence) is not None
    # Most of them took the fast path, or the test would prove little.
    assert checked > 1500


def test_character_classes_the_patterns_rely_on() -> None:
    """Where Python's `re` and NLTK's `regex` engine disagree, the guard sends text to NLTK."""
    regex = pytest.importorskip("regex")
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    spaces = set(re.findall(r"\s", every)) ^ set(regex.findall(r"\s", every))
    assert spaces <= set("\x1c\x1d\x1e\x1f")
    digits = set(re.findall(r"\d", every)) ^ set(regex.findall(r"\d", every))
    assert all(ord(c) > 0xFFFF for c in digits)
    letters = re.findall(f"[{text._LETTER_BEFORE_APOSTROPHE}]", every)
    assert all(re.fullmatch(r"[^\W_]", c) and regex.fullmatch(r"\w", c) for c in letters)
    # The contraction hints are found in lowercased text: these letters match
    # nothing but their ASCII pair under re.IGNORECASE.
    for letter in "nmtoaey":
        assert set(re.findall(f"(?i){letter}", every)) == {letter, letter.upper()}


def test_shared_corpus_sentences_count_as_treebank(shared_corpora: Path) -> None:
    folder = shared_corpora / "tatoeba_test_v2021-08-07" / "eng-pol"
    sentences = {
        line
        for suffix in ("eng", "pol")
        for line in (folder / f"tatoeba-test-v2021-08-07.{suffix}")
        .read_text(encoding="utf-8")
        .splitlines()[:1500]
    }
    fast = 0
    for sentence in sentences:
        count = text._fast_word_count(sentence)
        if count is not None:
            fast += 1
            assert count == treebank_count(sentence), sentence
    assert fast >= 0.99 * len(sentences)


# The prefilter near its bounds


def pair(pivot: str, candidate: str) -> AlignedPair:
    return AlignedPair(
        pivot=pivot,
        candidate=candidate,
        pivot_lang="en",
        lang="pl",
        corpus="t",
        shard="s",
        line=0,
    )


# Word counts (Treebank) from 1 to 7, each with tokens the fast path must get right.
NEAR_BOUNDS = [
    "Can't!",  # 2
    "I'm here.",  # 3
    "U.S. isn't 3,5 km.",  # 5
    "I cannot, won't go.",  # 6
    "Don't-stop (it's) fine.",  # 4: no split before "-"
    "He's gonna see tom@example.com",  # 7
    "'Tis 'twas they'd",  # 4
    "Hi.",  # 1
    "Zażółć gęślą jaźń.",  # 3
    "Nie wiem, czy on przyjdzie.",  # 5
    "Půjdeš tam?",  # 2
    "To jest 10,5 kg — dużo!",  # 5
    "Ja... nie—wiem.",  # 3
    "x-y z/w 1:30 4.5",  # 4
]


@pytest.mark.parametrize(
    "options",
    [
        PrefilterOptions(min_words=3, max_words=5, max_length_ratio=1.5),
        PrefilterOptions(min_words=2, max_words=6, max_length_ratio=2.0),
        PrefilterOptions(min_words=1, max_words=4, max_length_ratio=1.2),
        PrefilterOptions(),
    ],
)
def test_prefilter_decides_as_with_treebank_counts(
    options: PrefilterOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    pairs = [pair(a, b) for a in NEAR_BOUNDS for b in NEAR_BOUNDS if a != b]
    new = [prefilter_reason(p, options) for p in pairs]
    monkeypatch.setattr(prefilter, "word_count", lambda sentence, lang: treebank_count(sentence))
    old = [prefilter_reason(p, options) for p in pairs]
    assert new == old
    # The bounds were in play: some pairs kept, some dropped for length.
    assert "" in new and {"too_short", "too_long", "length_ratio"} & set(new)
