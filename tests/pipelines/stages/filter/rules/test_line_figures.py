"""The batch figures of ``rules.line_figures`` against the per-line functions they stand for."""

from __future__ import annotations

import random

import pytest
from paramine.pipelines.core.text import normalize, normalized_key
from paramine.pipelines.stages.filter.rules.line_figures import LineFigures
from paramine.pipelines.stages.filter.rules.scripts import (
    dominant_script,
    letter_share,
    script_share,
)
from paramine.pipelines.stages.filter.rules.words import length

from tests.paths import TATOEBA
from tests.pipelines.stages.filter.rules.helpers import random_line

#: Scripts a side may be judged against, single and mixed.
SCRIPT_SETS = [
    frozenset({"Latn"}),
    frozenset({"Cyrl", "Latn"}),
    frozenset({"Hani", "Hira", "Kana"}),
    frozenset({"Arab"}),
    frozenset({"Deva", "Thai", "Hebr"}),
]


def _assert_same(texts: list[str]) -> None:
    figures = LineFigures(texts)
    for i, text in enumerate(texts):
        where = f"line {i}: {text!r}"
        assert figures.letter_share[i] == letter_share(text), where
        assert figures.words[i] == length(text), where
        assert figures.main[i] == dominant_script(text), where
        assert figures.keys[i].decode("utf-32-le") == normalized_key(text), where
        for scripts in SCRIPT_SETS:
            assert figures.script_share(i, scripts) == pytest.approx(
                script_share(text, scripts), rel=1e-12, abs=1e-12
            ), (where, scripts)


#: Code points drawn from: ASCII, Latin with marks, Greek, Cyrillic, Hebrew,
#: Arabic, Devanagari, Thai, Khmer, Ethiopic, kana, Han, Hangul, combining
#: marks, spaces and punctuation of several kinds, and astral letters.
_RANGES = [
    (0x20, 0x7E), (0xC0, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF),
    (0x590, 0x5FF), (0x600, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F), (0x1780, 0x17FF),
    (0x1200, 0x137F), (0x2000, 0x206F), (0x3000, 0x30FF), (0x4E00, 0x4FFF),
    (0xAC00, 0xAD00), (0xFF00, 0xFF9F), (0x1D400, 0x1D4FF), (0x20000, 0x2003F),
]  # fmt: skip


def test_figures_equal_the_per_line_functions_on_random_unicode() -> None:
    rng = random.Random(7)
    texts = [random_line(rng, _RANGES) for _ in range(3000)]
    texts += ["", " ", "\u0301abc", "a\u0301\u0302 \u0301", "是。", "我用iPhone拍照。", "ሰላም፡ዓለም"]
    _assert_same(texts)
    _assert_same([normalize(text) for text in texts])


def test_figures_of_one_line_and_of_an_empty_batch() -> None:
    _assert_same(["Tak."])
    figures = LineFigures([])
    assert figures.words == [] and figures.main == [] and figures.letter_share == []
    assert figures.keys == []


@pytest.mark.slow
@pytest.mark.skipif(not TATOEBA.is_dir(), reason="needs ../shared/corpora")
def test_figures_equal_the_per_line_functions_on_every_script_set_of_shared() -> None:
    files = sorted(
        path
        for path in TATOEBA.rglob("tatoeba-test-v2021-08-07.*")
        if not path.name.endswith(".labels")
    )
    assert len(files) > 30
    for path in files:
        lines = _every_character(path.read_text(encoding="utf-8").splitlines())
        _assert_same([normalize(line) for line in lines])


def _every_character(lines: list[str], first: int = 200) -> list[str]:
    """The first ``first`` lines, then each line that holds a character none before it did.

    Every character of the file is met in some line, in about a fifth of the
    lines that the first 2,000 of each file were (24,603 of 114,926 over
    shared/), so the whole of each file is covered in a fifth of the time.
    """
    seen: set[str] = set()
    kept = []
    for i, line in enumerate(lines):
        if i < first or not seen.issuperset(line):
            kept.append(line)
            seen.update(line)
    return kept
