"""What a run learns about each side's lines before its per-line checks decide on them.

The prefilter's per-line checks (a line's script, its language) used to decide
from tables alone: CLDR's one likely script, a hand-kept list of close
languages. For a small language the tables are often wrong about the corpus
in hand (Tatoeba writes Ladino in Latin letters, CLDR's likely script is
Hebrew), so a run now reads the evidence of its own lines first, and decides
per side (the pivot side and the candidate side, each per declared language):

- **scripts**: a side is judged against the scripts the tables know its
  language in (``stages/filter/rules/scripts.py``: CLDR's primary and secondary scripts,
  its likely script, ``MULTI_SCRIPT``), and against any script that carries at
  least ``LEARN_SHARE`` of the side's lines (and ``LEARN_LINES`` lines) in
  this run, *learned*. A script the user names (``--tgt-lang tt-Latn``) is
  the side's only script, and nothing is learned. A line in a script that is
  neither stays a ``wrong_script`` drop.
- **languages present**: a language the detector finds in a line by strong
  evidence (``stages/filter/rules/language_id.py``) is *present* on the side when at least
  ``PRESENT_SHARE`` of the side's judged lines (and ``PRESENT_LINES``) are
  it. A line the detector leans to another language by weak evidence only is
  dropped only where that language is present.

The prefilter counts what it sees per pair (the ``line_checks`` note of the
run's counts, so the figures are in the manifest and add up across workers),
decides what it can at once, and holds back the few pairs whose fate depends
on the decisions (``Pending``); ``decide`` turns the counts into each side's
decisions, and ``resolve`` settles the held-back pairs, before the duplicate
search. Both run from the counts alone, so the manifest's figures give the
same decisions again (``stages.filter.rules.line_check_record.run_record``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from paramine.pipelines.stages.filter.rules.scripts import KnownScripts, known_scripts, script_share

#: A script is a side's, learned from the run, when it is the main script of
#: at least this share of the side's lines with letters ...
LEARN_SHARE = 0.2
#: ... and of at least this many lines.
LEARN_LINES = 10
#: A language is present on a side when at least this share of the side's
#: judged lines are it by strong evidence ...
PRESENT_SHARE = 0.002
#: ... and at least this many.
PRESENT_LINES = 2
#: A per-line check that drops more than this share of a side's lines is
#: flagged in the summary, stats.json and the report.
FLAG_SHARE = 0.1
#: Sample lines kept per side and drop reason.
SAMPLES = 5

SIDES = ("pivot", "candidate")
#: Reasons that say nothing about one side's lines: duplicates are kept once.
NOT_A_LOSS = ("duplicate_pair",)


def side_key(side: str, lang: str) -> str:
    """The key of a side's figures: ``candidate:pl``, ``pivot:en``."""
    return f"{side}:{lang}"


# The figures a side's key carries in the ``line_checks`` note, as
# ``<side>:<lang>:<figure>``: lines (every pair), scripted (lines the script
# rule read, with letters), script:<S> (of them, main script S), judged
# (lines the detector judged), strong:<T> (of them, T by strong evidence),
# drop:<reason> (lines of the side dropped, by reason), and on a candidate
# side ratio:<pivot language>/<bin> (pairs by length ratio, ``ratio_bin``).
LINES, SCRIPTED, SCRIPT, JUDGED, STRONG, DROP, RATIO = (
    "lines",
    "scripted",
    "script",
    "judged",
    "strong",
    "drop",
    "ratio",
)
#: Width of a length-ratio bin, in natural log: bins of about 5%.
RATIO_BIN = 0.05
#: A side's typical length ratio to a pivot language is learned from at
#: least this many pairs.
RATIO_PAIRS = 50


def figure(key: str, name: str, item: str = "") -> str:
    """A figure's key in the ``line_checks`` note."""
    return f"{key}:{name}:{item}" if item else f"{key}:{name}"


def split_figure(key: str) -> tuple[str, str, str]:
    """``candidate:pl:script:Latn`` -> (``candidate:pl``, ``script``, ``Latn``)."""
    side, lang, name, *item = key.split(":", 3)
    return f"{side}:{lang}", name, item[0] if item else ""


def with_earlier(profile: Mapping[str, int], earlier: Mapping[str, int] | None) -> dict[str, int]:
    """A run's figures and those of the lines earlier runs read, summed.

    A refresh decides on every line its table's commits have read
    (``refresh/plan.py``), not on its new shards alone: a shard of four
    Ladino lines in Latin letters is judged as one run over the whole input
    would judge it.
    """
    total = dict(profile)
    for key, n in (earlier or {}).items():
        total[key] = total.get(key, 0) + n
    return total


def ratio_bin(ratio: float) -> int:
    """The bin of a pair's length ratio, (candidate + 1) / (pivot + 1) words."""
    return round(math.log(ratio) / RATIO_BIN)


def length_band(scale: float, max_length_ratio: float) -> tuple[float, float]:
    """The length ratios a side's pairs may have: the fixed band, widened towards its scale.

    A pair passes when (candidate + 1) / (pivot + 1) is within
    ``max_length_ratio`` of 1 or of the side's typical ratio (``scale``, the
    median of the run's pairs): a language whose sentences run to twice the
    pivot's words (Toki Pona to English) keeps its long renderings, and the
    band never narrows.
    """
    return min(1.0, scale) / max_length_ratio, max(1.0, scale) * max_length_ratio


@dataclass(frozen=True)
class SideDecision:
    """What a run decided about one side's lines.

    Attributes:
        scripts: The scripts the side's lines are judged against; None where
            none is known or learned (its lines are counted as script_unchecked).
        learned: The scripts learned from the run, with their share of the side's lines.
        present: The languages present on the side, with their strong lines.
        source: Where the scripts came from: ``declared`` (the user's tag),
            ``tables`` (CLDR and MULTI_SCRIPT), ``tables+run`` or ``run``.
        length_scales: A candidate side's typical length ratio to each pivot
            language, the median of the run's pairs (``length_band``).
    """

    scripts: frozenset[str] | None
    learned: dict[str, float] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)
    source: str = "tables"
    length_scales: dict[str, float] = field(default_factory=dict)


def decide(
    profile: Mapping[str, int], declared: Mapping[str, frozenset[str]] | None = None
) -> dict[str, SideDecision]:
    """Each side's decisions from the run's figures.

    Args:
        profile: The ``line_checks`` figures (any others are ignored).
        declared: Per language, the scripts the user named for it (``tt-Latn``).
    """
    sides: dict[str, dict[str, dict[str, int]]] = {}
    for key, n in profile.items():
        side, name, item = split_figure(key)
        sides.setdefault(side, {}).setdefault(name, {})[item] = n
    decisions = {}
    for side, figures in sorted(sides.items()):
        lang = side.split(":", 1)[1]
        known = known_scripts(lang)
        named = (declared or {}).get(lang)
        scripted = figures.get(SCRIPTED, {}).get("", 0)
        learned: dict[str, float] = {}
        if named is None and scripted:
            for script, n in sorted(figures.get(SCRIPT, {}).items()):
                share = n / scripted
                if known is not None and script in known.all:
                    continue
                if share >= LEARN_SHARE and n >= LEARN_LINES:
                    learned[script] = round(share, 4)
        judged = figures.get(JUDGED, {}).get("", 0)
        needed = max(PRESENT_LINES, PRESENT_SHARE * judged)
        present = {t: n for t, n in sorted(figures.get(STRONG, {}).items()) if n >= needed}
        scripts, source = _scripts_of(named, known, learned)
        scales = _length_scales(figures.get(RATIO, {}))
        decisions[side] = SideDecision(scripts, learned, present, source, scales)
    return decisions


def _length_scales(bins: Mapping[str, int]) -> dict[str, float]:
    """Per pivot language, the median length ratio of the side's pairs (enough of them)."""
    by_pivot: dict[str, list[tuple[int, int]]] = {}
    for item, n in bins.items():
        pivot, _, bin_ = item.rpartition("/")
        by_pivot.setdefault(pivot, []).append((int(bin_), n))
    scales = {}
    for pivot, counts in sorted(by_pivot.items()):
        total = sum(n for _, n in counts)
        if total < RATIO_PAIRS:
            continue
        seen = 0
        for at, n in sorted(counts):
            seen += n
            if 2 * seen >= total:
                scales[pivot] = round(math.exp(at * RATIO_BIN), 4)
                break
    return scales


def _scripts_of(
    named: frozenset[str] | None, known: KnownScripts | None, learned: Mapping[str, float]
) -> tuple[frozenset[str] | None, str]:
    """A side's scripts and where they came from."""
    if named is not None:
        return named, "declared"
    scripts = (known.all if known is not None else frozenset()) | frozenset(learned)
    source = "+".join(s for s, used in (("tables", known), ("run", learned)) if used)
    return (scripts or None), source or "none"


class LanguageNeed(NamedTuple):
    """What the detector found against one line of a held-back pair.

    Attributes:
        side: The side's key.
        reason: The drop reason (``wrong_language_candidate`` or ``_pivot``).
        strong: The languages it is by strong evidence (dropped wherever).
        weak: Those it leans to (dropped where present on the side).
    """

    side: str
    reason: str
    strong: tuple[str, ...]
    weak: tuple[str, ...]


class LengthNeed(NamedTuple):
    """A pair outside the fixed length band, by its sides and ratio."""

    pivot_side: str
    side: str
    pivot_lang: str
    ratio: float
    max_length_ratio: float


class Pending(NamedTuple):
    """A pair whose fate waits for its sides' decisions.

    Attributes:
        texts: The normalized pivot and candidate.
        scripts: ``(side key, 0 pivot | 1 candidate)`` of each line outside
            its side's known scripts: it must be in the side's decided ones.
        after: The reason of a rule after the script rule that the pair
            fails ("" for none): the pair's reason if its scripts pass.
        languages: What the detector found against each line, candidate first.
        notes: The checks that could not judge its lines, if it is kept.
        length: A pair outside the fixed length band: it must be in its side's.
        after_sides: The sides ``after`` drops.
    """

    texts: tuple[str, str]
    scripts: tuple[tuple[str, int], ...] = ()
    after: str = ""
    languages: tuple[LanguageNeed, ...] = ()
    notes: tuple[str, ...] = ()
    length: LengthNeed | None = None
    after_sides: tuple[str, ...] = ()

    def row(self) -> tuple:
        """The pair's needs as plain tuples, its texts left out (the prefilter's key holds them).

        What the prefilter sends to the stage that settles it: pickled, plain
        tuples carry no class paths. A held-back element of bench_scale's
        input measured 193 bytes and 2.2 + 2.5 us to encode and decode this
        way, against 412 bytes and 8.3 + 7.5 us with the named tuples.
        """
        length = None if self.length is None else tuple(self.length)
        languages = tuple(tuple(need) for need in self.languages)
        return (self.scripts, self.after, languages, self.notes, length, self.after_sides)

    @classmethod
    def from_row(cls, texts: tuple[str, str], row: tuple) -> Pending:
        """The ``Pending`` that ``row`` was made of, with its texts."""
        scripts, after, languages, notes, length, after_sides = row
        return cls(
            texts,
            scripts,
            after,
            tuple(LanguageNeed(*need) for need in languages),
            notes,
            None if length is None else LengthNeed(*length),
            after_sides,
        )


class Resolved(NamedTuple):
    """A held-back pair settled: its reason ("" kept), the sides it is dropped for, its notes."""

    reason: str
    sides: tuple[str, ...]
    notes: tuple[str, ...]


def resolve(
    pending: Pending, decisions: Mapping[str, SideDecision], min_script_share: float
) -> Resolved:
    """Settle a held-back pair with its sides' decisions, rule by rule in the prefilter's order."""
    length = pending.length
    if length is not None:
        decision = decisions.get(length.side)
        scale = decision.length_scales.get(length.pivot_lang, 1.0) if decision else 1.0
        low, high = length_band(scale, length.max_length_ratio)
        if not low <= length.ratio <= high:
            return Resolved("length_ratio", (length.pivot_side, length.side), ())
    notes = list(pending.notes)
    failing = []
    for side, which in pending.scripts:
        decision = decisions.get(side)
        scripts = decision.scripts if decision is not None else None
        if scripts is None:
            notes.append(f"script_unchecked.{side.split(':', 1)[1].partition('-')[0]}")
        elif script_share(pending.texts[which], scripts) < min_script_share:
            failing.append(side)
    if failing:
        return Resolved("wrong_script", tuple(failing), ())
    if pending.after:
        return Resolved(pending.after, pending.after_sides, ())
    for need in pending.languages:
        decision = decisions.get(need.side)
        present = decision.present if decision is not None else {}
        if need.strong or any(label in present for label in need.weak):
            return Resolved(need.reason, (need.side,), ())
    return Resolved("", (), tuple(notes))
