"""Heuristic rules against the junk of real dumps: each a name, a test and a drop reason.

Curated bitext (Tatoeba, WMT references) has none of this; OpenSubtitles and
web-crawled corpora (CCMatrix) have much: URLs and e-mail addresses, HTML
and markup, lines of symbols or digits, lines in another script, numbers
that disagree between the two sides, a question answered by a statement,
and repeated characters or words. Each rule below looks at one aligned pair
and returns its drop reason or ``None``; the prefilter applies the ones the
run's profile (or ``--junk-rules``) names and counts each reason on its own.

The rules are the kind peer tools apply before scoring (OpusFilter's
heuristic filters, bicleaner's hard rules), written as a few compiled
patterns so that they cost a few microseconds per pair. The letters and the
script of a line are ``stages/filter/rules/scripts.py``'s, for every Unicode script.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from paramine.pipelines.stages.filter.rules.language_id import DEFAULT_RATIO
from paramine.pipelines.stages.filter.rules.scripts import letter_share

#: A link or an address: a scheme, ``www.``, or ``name@host.tld`` (public: the peers' comparison
#: gives OpusFilter this pattern).
URL = re.compile(
    r"(?:\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+\.\S+|\b[\w.+-]+@[\w-]+\.[\w.-]+\b)", re.IGNORECASE
)
#: A tag (``<i>``, ``</font>``, ``<br/>``), an entity (``&amp;``, ``&#39;``) or a
#: subtitle's override block (``{\an8}``).
_MARKUP = re.compile(
    r"</?[a-z][a-z0-9]*(?:\s[^<>]*)?/?>|&(?:[a-z]+|#\d+|#x[0-9a-f]+);|\{\\[^}]*\}", re.I
)
#: What every link or address holds (``www.`` in any case).
_URL_ANCHOR = re.compile(r"@|://|www\.", re.IGNORECASE)
_MARKUP_ANCHOR = re.compile(r"[<&{]")
_DIGITS = re.compile(r"[1-9]")
_REPEATED_CHAR = re.compile(r"(.)\1{4}")
#: A word three times in a row, in any case: one scan of the line, where
#: splitting it into lowercased words and walking them cost twice as long.
_REPEATED_WORD = re.compile(r"(?<!\w)(\w+)\W+\1\W+\1(?!\w)", re.IGNORECASE)
_QUESTION = frozenset("?？؟;;⸮")  # Greek writes its question mark as a semicolon


@dataclass(frozen=True)
class Limits:
    """The rules' thresholds (documented defaults)."""

    #: Least share of letters among a line's non-space characters.
    min_letter_share: float = 0.5
    #: Least share of a line's letters in its language's script.
    min_script_share: float = 0.8


def numbers(text: str) -> str:
    """The line's non-zero digits, sorted: ``8:00``, ``8.00`` and ``8 o'clock`` agree.

    OpusFilter's non-zero numerals rule: zeros, separators and the order of
    numbers vary between languages' ways of writing the same numbers.
    """
    return "".join(sorted(_DIGITS.findall(text)))


def _ends_with_question(text: str) -> bool:
    stripped = text.rstrip(" \"'»«”“)]")
    return bool(stripped) and stripped[-1] in _QUESTION


def repeats(text: str) -> bool:
    """A character five times in a row (``!!!!!``, ``aaaaa``), or a word three times in any case."""
    return _REPEATED_CHAR.search(text) is not None or _REPEATED_WORD.search(text) is not None


def _has_url(text: str) -> bool:
    # The pattern backtracks on every word; most lines have none of its anchors.
    return bool(_URL_ANCHOR.search(text)) and bool(URL.search(text))


def _has_markup(text: str) -> bool:
    # Every tag, entity and override block holds one of these characters.
    return bool(_MARKUP_ANCHOR.search(text)) and bool(_MARKUP.search(text))


def _anchored(anchor: re.Pattern[str], pattern: re.Pattern[str]) -> LinesTest:
    """A rule's batch test: one search for its ``anchor`` over all the lines, then its ``pattern``.

    Only the lines that hold an anchor are searched with the pattern; no
    anchor spans two lines, so the joined batch finds the same lines.
    """

    def test(texts: Sequence[str], limits: Limits) -> list[bool]:
        found = [False] * len(texts)
        joined = "\n".join(texts)
        hits = [m.start() for m in anchor.finditer(joined)]
        if not hits:
            return found
        starts = list(itertools.accumulate((len(t) + 1 for t in texts[:-1]), initial=0))
        for row in sorted({bisect.bisect_right(starts, at) - 1 for at in hits}):
            found[row] = pattern.search(texts[row]) is not None
        return found

    return test


#: A per-line rule over a batch of lines: ``(texts, limits) -> fails``, one per line.
LinesTest = Callable[[Sequence[str], "Limits"], list[bool]]


class Rule(NamedTuple):
    """A heuristic rule: its drop reason, and how it judges a pair.

    Attributes:
        reason: The drop reason.
        line: Judges each line on its own: ``(text, limits) -> fails``.
        pair: Compares the two lines: ``(pivot, candidate) -> fails``.
        share: Judges a line by its letter share (``stages.filter.rules.line_figures``,
            computed for a batch at once): ``(share, limits) -> fails``.
        lines: ``line`` for a batch of lines at once (``line_verdicts``),
            where one pass over the batch beats one per line.
            The script rule has none of these: a line is judged against the
            scripts of its side, which the run decides (``stages/filter/rules/line_checks.py``).
    """

    reason: str
    line: Callable[[str, Limits], bool] | None = None
    pair: Callable[[str, str], bool] | None = None
    share: Callable[[float, Limits], bool] | None = None
    lines: LinesTest | None = None


#: Every rule by its name, in the order they are applied.
RULES: dict[str, Rule] = {
    "urls": Rule(
        "url_or_email",
        line=lambda text, limits: _has_url(text),
        lines=_anchored(_URL_ANCHOR, URL),
    ),
    "markup": Rule(
        "markup",
        line=lambda text, limits: _has_markup(text),
        lines=_anchored(_MARKUP_ANCHOR, _MARKUP),
    ),
    "letters": Rule("few_letters", share=lambda share, limits: share < limits.min_letter_share),
    "script": Rule("wrong_script"),
    "numbers": Rule("numbers_differ", pair=lambda a, b: numbers(a) != numbers(b)),
    "question": Rule(
        "question_mismatch", pair=lambda a, b: _ends_with_question(a) != _ends_with_question(b)
    ),
    "repeats": Rule("repeated_text", line=lambda text, limits: repeats(text)),
}
#: Every drop reason a rule may give.
REASONS = tuple(rule.reason for rule in RULES.values())
SCRIPT_REASON = RULES["script"].reason

#: Which lines of a pair fail a rule: (pivot, candidate).
Sides = tuple[bool, bool]


def line_verdicts(
    rules: tuple[str, ...], texts: Sequence[str], shares: Sequence[float], limits: Limits
) -> dict[str, list[bool]]:
    """Every per-line rule of ``rules`` on every line of a batch: which lines fail it.

    ``shares`` are the lines' letter shares (``stages.filter.rules.line_figures``). A rule
    with a batch test (``Rule.lines``) reads the batch at once; the others
    judge each line once, however many pairs hold it.
    """
    found = {}
    for name in rules:
        rule = RULES[name]
        if rule.lines is not None:
            found[name] = rule.lines(texts, limits)
        elif rule.line is not None:
            found[name] = [rule.line(text, limits) for text in texts]
        elif rule.share is not None:
            found[name] = [rule.share(share, limits) for share in shares]
    return found


def failures(
    rules: tuple[str, ...],
    pivot: str,
    candidate: str,
    limits: Limits,
    script: Callable[[], Sides],
    lines: Callable[[str], Sides] | None = None,
) -> Iterator[tuple[str, Sides]]:
    """Each of ``rules`` that the pair fails, in order: its reason and the lines that fail it.

    Lazy: a caller that stops at the first failure judges no rule after it.
    ``script`` judges the script rule (the prefilter's sides decide it);
    ``lines(name)`` gives a per-line rule's sides where the caller judged the
    batch's lines already (``line_verdicts``), else they are judged here.
    """
    for name in rules:
        rule = RULES[name]
        if rule.pair is not None:
            fails = rule.pair(pivot, candidate)
            sides = (fails, fails)
        elif rule.line is None and rule.share is None:
            sides = script()
        elif lines is not None:
            sides = lines(name)
        elif rule.line is not None:
            sides = (rule.line(pivot, limits), rule.line(candidate, limits))
        else:
            assert rule.share is not None
            sides = (
                rule.share(letter_share(pivot), limits),
                rule.share(letter_share(candidate), limits),
            )
        if sides[0] or sides[1]:
            yield rule.reason, sides


@dataclass(frozen=True)
class Profile:
    """The prefilter's defaults for one kind of corpus; every setting can be overridden.

    Attributes:
        rules: The heuristic rules applied, by name (``RULES``).
        language_ratio: The language check's ratio (``stages.filter.rules.language_id``);
            ``None``: no language check.
        limits: The rules' thresholds.
    """

    rules: tuple[str, ...]
    language_ratio: float | None
    limits: Limits


#: ``--profile``: curated bitext (Tatoeba, WMT references, CzEng), subtitles
#: (OpenSubtitles) and web crawls (CCMatrix, ParaCrawl). Curated data keeps the
#: rules that drop next to nothing good there (1 of Tatoeba eng-pol's 10,099
#: pairs, a line of digits); the numbers and question rules drop real
#: translations there (55 and 9: "two percent" / "2 proc.") but catch
#: misaligned lines in dumps, where misalignment is common.
PROFILES: dict[str, Profile] = {
    "curated": Profile(("urls", "markup", "letters", "script"), DEFAULT_RATIO, Limits()),
    "subtitles": Profile(tuple(RULES), DEFAULT_RATIO, Limits()),
    "web": Profile(tuple(RULES), DEFAULT_RATIO, Limits(min_letter_share=0.6, min_script_share=0.9)),
}
DEFAULT_PROFILE = "curated"


def parse_rules(value: Any) -> tuple[str, ...]:
    """``urls,markup`` (or a list) as rule names; ``none`` for no rule."""
    names = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    names = [name.strip() for name in names if name.strip()]
    if names == ["none"]:
        return ()
    unknown = [name for name in names if name not in RULES]
    if unknown:
        raise ValueError(f"{', '.join(unknown)}: rules are {', '.join(RULES)}, or none")
    return tuple(dict.fromkeys(names))
