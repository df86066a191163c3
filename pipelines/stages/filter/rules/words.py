"""A line's length in words, in units that mean the same in every script.

The prefilter's length rules assumed space-separated European languages: a
Japanese or Chinese line was one "word", so nearly every such pair failed the
length ratio. ``length`` counts words where the script separates words
(spaces; Ethiopic's wordspace) and weighted characters where it does not
(Han, kana, Thai, Lao, Khmer, Myanmar, Tibetan ...). For space-separated
languages it is the number of whitespace tokens holding a letter or digit, so
``--min-words``, ``--max-words`` and ``--max-length-ratio`` keep their meaning.

The weights were fitted on aligned Tatoeba lines and the Universal
Declaration of Human Rights (docs/filters.md, "Every script";
``benchmarks/studies/bench_length.py``). Each character is classified once per
process (a ``str.translate`` table filled as characters are met), so a line
costs a few microseconds.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import regex

#: What one character of a script written without spaces is worth in words:
#: fitted on aligned Tatoeba lines against the English side's words (Chinese
#: Han 0.71, Japanese kanji 0.66, kana 0.36, Thai 0.31, Khmer 0.40; Lao,
#: Myanmar, Tibetan 0.23-0.29 on the UDHR). Their combining marks (Thai vowel
#: signs, Khmer subscripts) are not counted: about one count per syllable.
HAN_WEIGHT = 0.7
OTHER_UNSPACED_WEIGHT = 1 / 3
#: Scripts written without spaces between words (Unicode script names).
UNSPACED_SCRIPTS: tuple[str, ...] = (
    "Han", "Hiragana", "Katakana", "Bopomofo", "Thai", "Lao", "Khmer", "Myanmar", "Tibetan",
    "Yi", "Tai_Le", "New_Tai_Lue", "Tai_Tham", "Tai_Viet", "Javanese", "Balinese", "Buginese",
)  # fmt: skip

#: The Unicode blocks of those scripts: only a line holding one of their
#: characters takes the slower path, where each character's script decides.
_UNSPACED_BLOCKS = re.compile(
    "[\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff\u1950-\u1aaf\u1b00-\u1b7f"
    "\u19e0-\u19ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3040-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua980-\ua9ff\uaa60-\uaadf\uf900-\ufaff"
    "\uff66-\uff9f\U00016fe0-\U00016fff\U0001b000-\U0001b16f\U00020000-\U0003ffff]"
)
_HAN_MARK = "\x01"  # one Han character
_UNSPACED_MARK = "\x02"  # one letter of another unspaced script
#: A word: a whitespace token holding a letter or digit, counted from its first
#: one ("--" and "…" are none). Ethiopic's wordspace U+1361 separates words.
_WORD = re.compile(r"[^\W_][^\s\u1361]*")
_RUN = re.compile("[\x01\x02]+")


class _UnspacedTable(dict[int, "str | None"]):
    """``str.translate`` table: Han -> \\x01, other unspaced letters -> \\x02, their marks deleted.

    Filled as characters are met; each is classified once per process with
    the ``regex`` module's ``Script_Extensions`` (so that the prolonged sound
    mark ``ー``, of no script of its own, is kana).
    """

    def __missing__(self, code_point: int) -> str | None:
        han, letter, mark = _unspaced_classes()
        char = chr(code_point)
        value: str | None = char
        if han.match(char):
            value = _HAN_MARK
        elif letter.match(char):
            value = _UNSPACED_MARK
        elif mark.match(char):
            value = None
        self[code_point] = value
        return value


@functools.cache
def _unspaced_classes() -> tuple[Any, Any, Any]:
    scripts = "".join(f"\\p{{scx={s}}}" for s in UNSPACED_SCRIPTS)
    return (
        regex.compile(r"[\p{scx=Han}&&\p{L}]", regex.V1),
        regex.compile(f"[[{scripts}]&&\\p{{L}}]", regex.V1),
        regex.compile(f"[[{scripts}]&&\\p{{M}}]", regex.V1),
    )


_UNSPACED = _UnspacedTable()


def in_unspaced_block(char: str) -> bool:
    """Whether ``char`` is in a block of an unspaced script (``length``'s slow path)."""
    return _UNSPACED_BLOCKS.match(char) is not None


def length(text: str) -> float:
    """A line's length in words, in units that mean the same in every script.

    Where the script separates words, a word is a whitespace token holding a
    letter or digit. Where it does not, each character counts
    ``HAN_WEIGHT`` (Han) or ``OTHER_UNSPACED_WEIGHT`` (kana, Thai, Lao, Khmer,
    Myanmar, Tibetan ...) of a word, its combining marks nothing, and each
    run of them at least one word (``是。`` is one word, as ``Yes.`` is).
    Mixed lines add both (``我用iPhone拍照。`` = 1 + 1.4 + 1.4).

    Args:
        text: A normalized line.

    Returns:
        Its length in words; 0.0 for a line without letters or digits.
    """
    if not _UNSPACED_BLOCKS.search(text):
        return float(len(_WORD.findall(text)))
    mapped = text.translate(_UNSPACED)
    total = float(len(_WORD.findall(_RUN.sub(" ", mapped))))
    for run in _RUN.findall(mapped):
        han = run.count(_HAN_MARK)
        total += max(1.0, HAN_WEIGHT * han + OTHER_UNSPACED_WEIGHT * (len(run) - han))
    return total
