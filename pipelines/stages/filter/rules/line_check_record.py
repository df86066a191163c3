"""The per-line checks of a run, as the manifest records them and the summary prints them.

``run_record`` turns the run's ``line_checks`` figures (``stages/filter/rules/line_checks.py``)
into one record per side: the scripts it was judged against and where they
came from, the languages present, what each check dropped and the checks
flagged for dropping more than ``FLAG_SHARE`` of the side's lines.
``summary_lines`` is what a finished run prints of that record, read typed
(``schemas/side_checks.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from paramine.pipelines.stages.filter.rules.line_checks import (
    DROP,
    FLAG_SHARE,
    JUDGED,
    LINES,
    NOT_A_LOSS,
    SAMPLES,
    SCRIPT,
    SCRIPTED,
    SideDecision,
    decide,
    figure,
    split_figure,
    with_earlier,
)
from paramine.pipelines.stages.filter.rules.scripts import known_scripts
from paramine.schemas.side_checks import Dropped, Flag, SideChecks


def run_record(
    profile: Mapping[str, int],
    declared: Mapping[str, frozenset[str]] | None = None,
    samples: Iterable[tuple[str, dict[str, Any]]] = (),
    earlier: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The manifest's record of each side: its decisions, what each check dropped, flags.

    Args:
        profile: The run's ``line_checks`` figures.
        declared: As ``decide`` takes it.
        samples: ``(side key and reason, sample)`` pairs: dropped lines.
        earlier: The figures of the lines earlier runs read, which the
            decisions count too (``line_checks.with_earlier``): a refresh's.
    """
    decisions = decide(with_earlier(profile, earlier), declared)
    decided_before = decide(earlier, declared) if earlier else {}
    by_side: dict[str, dict[str, dict[str, int]]] = {}
    for key, n in profile.items():
        side, name, item = split_figure(key)
        by_side.setdefault(side, {}).setdefault(name, {})[item] = n
    kept_samples: dict[str, list[dict[str, Any]]] = {}
    for key, sample in samples:
        kept_samples.setdefault(key, []).append(sample)
    record: dict[str, Any] = {}
    for side, figures in sorted(by_side.items()):
        lines = figures.get(LINES, {}).get("", 0)
        decision = decisions[side]
        known = known_scripts(side.split(":", 1)[1])
        scripted = figures.get(SCRIPTED, {}).get("", 0)
        dropped = {
            reason: Dropped(n, round(n / lines, 4) if lines else 0.0)
            for reason, n in sorted(figures.get(DROP, {}).items(), key=lambda kv: (-kv[1], kv[0]))
            if reason not in NOT_A_LOSS
        }
        flagged = tuple(
            Flag(reason, d.lines, d.share, tuple(_samples(kept_samples, f"{side}|{reason}")))
            for reason, d in dropped.items()
            if d.share > FLAG_SHARE
        )
        scripts = figures.get(SCRIPT, {}).items()
        before = (earlier or {}).get(figure(side, LINES), 0)
        checks = SideChecks(
            lines=lines,
            decided_on_lines=lines + before,
            decided_on_earlier=before,
            judged_against=tuple(sorted(decision.scripts)) if decision.scripts else None,
            source=decision.source,
            known=tuple(sorted(known.primary)) if known else (),
            known_secondary=tuple(sorted(known.secondary)) if known else (),
            learned=decision.learned,
            shares={s: round(n / scripted, 4) for s, n in sorted(scripts, key=lambda kv: -kv[1])}
            if scripted
            else {},
            languages_present=decision.present,
            length_ratio_to=decision.length_scales,
            judged_by_detector=figures.get(JUDGED, {}).get("", 0),
            dropped=dropped,
            flagged=flagged,
            moved=_moved(decided_before.get(side), decision),
        )
        record[side] = checks.to_json()
    return record


def _samples(samples: Mapping[str, list[dict[str, Any]]], key: str) -> list[dict[str, Any]]:
    """A flagged check's dropped lines that the record keeps: ``SAMPLES``, by hash."""
    return sorted(samples.get(key, []), key=lambda s: s["hash"])[:SAMPLES]


def sample_file(sample: Mapping[str, Any]) -> str:
    """The file that holds a sample's dropped line (records made before ``file``: its shard)."""
    return sample.get("file") or sample["shard"]


def _moved(then: SideDecision | None, now: SideDecision) -> dict[str, tuple[list[str], list[str]]]:
    """What the run's lines moved of what the earlier lines alone decided: before, after.

    A refresh judges its new lines by the decisions over every line its
    table has read (``with_earlier``), while the lines of earlier commits
    were judged by the decisions of their day and are not judged again.
    Compared: what moves whole classes of lines, the scripts a side is
    judged against and the pivot languages it has a typical length ratio
    to. Not the languages present: one or two strong lines more or less move
    them, and they decide only the lines with weak evidence.
    """
    if then is None:  # no earlier line was on the side: none was judged the old way
        return {}
    moved = {}
    if then.scripts != now.scripts:
        moved["scripts"] = (sorted(then.scripts or ()), sorted(now.scripts or ()))
    if then.length_scales.keys() != now.length_scales.keys():
        moved["length_ratio_to"] = (sorted(then.length_scales), sorted(now.length_scales))
    return moved


def summary_lines(sides: Mapping[str, SideChecks]) -> list[str]:
    """What a finished run prints of its sides: scripts, languages present, drops, flags.

    ``sides``: ``Manifest.line_checks`` (``schemas/side_checks.py``).
    """
    lines = []
    flagged = []
    for side, found in sides.items():
        parts = []
        if found.judged_against is None:
            parts.append("no script known or learned (not judged)")
        else:
            # CLDR's secondary scripts (Deseret for English) are in the record, not here.
            secondary = set(found.known_secondary)
            tables = [
                s for s in found.judged_against if s not in found.learned and s not in secondary
            ]
            shown = ", ".join(tables)
            if found.learned:
                shown += (", " if shown else "") + ", ".join(
                    f"{s} (learned: {share:.0%} of lines)" for s, share in found.learned.items()
                )
            parts.append(f"scripts {shown} ({found.source})")
        if found.languages_present:
            parts.append(
                "present: "
                + ", ".join(f"{t} ({n:,} lines)" for t, n in found.languages_present.items())
            )
        if found.length_ratio_to:
            parts.append(
                "length "
                + ", ".join(
                    f"{scale:.2f}x the {pivot} side's"
                    for pivot, scale in found.length_ratio_to.items()
                )
            )
        if found.decided_on_earlier:
            parts.append(
                f"decided on {found.decided_on_lines:,} lines, {found.decided_on_earlier:,} of "
                "them read by the table's earlier commits"
            )
        if found.dropped:
            parts.append(
                "dropped "
                + ", ".join(f"{reason} {d.share:.1%}" for reason, d in found.dropped.items())
            )
        lines.append(f"    {side.replace(':', ' ')}: " + "; ".join(parts))
        flagged += _flag_lines(side, found)
    if not lines:
        return []
    return ["  per-line checks by side:", *lines, *flagged]


def _flag_lines(side: str, found: SideChecks) -> list[str]:
    """The lines a side's flags and moved decisions add under the summary's table."""
    shown_side = side.replace(":", " ")
    flagged = []
    for flag in found.flagged:
        example = flag.samples[0] if flag.samples else None
        shown = ""
        if example is not None:
            text = example["candidate" if side.startswith("candidate") else "pivot"]
            shown = f"; e.g. {sample_file(example)}:{example['line']}: {text!r}"
        flagged.append(
            f"  check flagged: {flag.reason} dropped {flag.share:.1%} of the "
            f"{shown_side} lines (over {FLAG_SHARE:.0%}){shown}"
        )
    if found.moved:
        changes = "; ".join(
            f"{what.replace('_', ' ')} {', '.join(old) or 'none'} -> {', '.join(new) or 'none'}"
            for what, (old, new) in found.moved.items()
        )
        flagged.append(
            f"  decisions moved: {shown_side} {changes} with this run's lines; "
            "lines of earlier commits were judged the old way (refresh --mine-all judges "
            "them again)"
        )
    return flagged
