"""The sections of ``report.html``: each a piece of HTML drawn from the run's stats.

``paramine.pipelines.report.html`` puts them in one page, in the order of
its ``SECTIONS``; the charts come from ``paramine.pipelines.report.charts``.

Why it is longer than 400 lines: it holds every section of the page, one
function each, with the number formatting they share (``esc`` is
``plot``'s); ``html.py`` assembles them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from paramine.pipelines.formats.pivot_languages import several
from paramine.pipelines.report.charts import (
    PALETTE,
    bar_chart,
    funnel_chart,
    score_chart,
)
from paramine.pipelines.report.plot import esc
from paramine.pipelines.stages.filter.rules.line_check_record import sample_file
from paramine.schemas.side_checks import read_sides


def _num(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return esc(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}"
    return esc(value)


def funnel_section(funnel: Mapping[str, Any]) -> str:
    rows = []
    for stage in funnel["stages"]:
        dropped = stage["dropped"]
        reasons = "<br>".join(f"{esc(k)}: {_num(v)}" for k, v in dropped.items() if v) or "&ndash;"
        rows.append(
            f"<tr><td>{esc(stage['stage'])}</td><td class='n'>{_num(stage['in'])}</td>"
            f"<td class='n'>{_num(stage['kept'])}</td>"
            f"<td class='n'>{_num(sum(dropped.values()))}</td><td>{reasons}</td></tr>"
        )
    repaired = funnel.get("repaired") or {}
    repairs = (
        "<p>Repaired and kept: "
        + ", ".join(f"{esc(k)} {_num(v)}" for k, v in repaired.items())
        + "</p>"
        if repaired
        else ""
    )
    not_judged = funnel.get("unchecked") or {}
    unchecked = (
        "<p>Kept without a judgment (a check that cannot judge a line's language; "
        "docs/filters.md): "
        + "; ".join(
            f"{esc(check.replace('_', ' '))} check: "
            + ", ".join(f"{esc(lang)} {_num(n)} lines" for lang, n in langs.items())
            for check, langs in not_judged.items()
        )
        + "</p>"
        if not_judged
        else ""
    )
    return (
        f"<p>Pairs read: <b>{_num(funnel['read'])}</b>; pairs written: "
        f"<b>{_num(funnel['written'])}</b>; rejected records kept in <code>rejects/</code>: "
        f"{_num(funnel['rejected_rows'])}.</p>"
        + funnel_chart(funnel)
        + "<table><tr><th>stage</th><th>in</th><th>kept</th><th>dropped</th>"
        "<th>dropped by reason</th></tr>"
        + "".join(rows)
        + "</table>"
        + repairs
        + unchecked
        + "<p class='muted'>Up to <i>MakePairs</i> a record is one aligned (pivot, candidate) "
        "pair; <i>GroupByPivot</i> keeps, before anything is encoded, the pivots with two or "
        "more distinct candidates; <i>RegroupByPivot</i> keeps the groups that still have two "
        "after the cut; from <i>PostFilter</i> on a record is one paraphrase pair.</p>"
    )


def first_pass_note(found: Mapping[str, Any] | None) -> str:
    """A second pass's pairs against its first pass's, and the drops that changed."""
    if not found:
        return ""
    if "error" in found:
        return f"<p>First pass {esc(found['dataset'])}: {esc(found['error'])}</p>"
    rows = "".join(
        f"<tr><td>{esc(stage)}</td><td>{esc(reason)}</td>"
        f"<td class='n'>{_num(n['first_pass'])}</td><td class='n'>{_num(n['this_pass'])}</td></tr>"
        for stage, reasons in found["dropped"].items()
        for reason, n in reasons.items()
    )
    return (
        f"<p><b>Second pass</b>, with a model trained on the first pass "
        f"<code>{esc(found['dataset'])}</code>: {_num(found['pairs'])} pairs, "
        f"{_num(found['also_in_first_pass'])} of them in the first pass too, "
        f"<b>{_num(found['new'])} new</b>; {_num(found['first_pass_pairs_not_found_again'])} of "
        f"the first pass's {_num(found['first_pass_pairs'])} not found again.</p>"
        "<table><tr><th>stage</th><th>dropped as</th><th>first pass</th><th>this pass</th></tr>"
        + rows
        + "</table>"
    )


def checks_section(record: Mapping[str, Any]) -> str:
    """Each side: the scripts its lines were judged against, languages present, drops, flags.

    ``record``: the stats' ``line_checks`` (the manifest's, as written), read
    typed (``schemas/side_checks.py``).
    """
    sides = read_sides(record)
    if not sides:
        return "<p class='muted'>This run recorded no per-line figures (an older run).</p>"
    rows, flags = [], []
    for side, found in sides.items():
        judged, shares = found.judged_against, found.shares
        shown = (
            ", ".join(
                f"{esc(s)}"
                + (
                    f" <b>learned</b> ({shares.get(s, 0):.0%} of lines)"
                    if s in found.learned
                    else (f" ({shares[s]:.0%})" if s in shares else "")
                )
                for s in judged
            )
            if judged
            else "none known or learned: not judged"
        )
        ratios = "".join(
            f"<br><span class='muted'>length {scale:.2f}&times; the {esc(pivot)} side's</span>"
            for pivot, scale in found.length_ratio_to.items()
        )
        present = found.languages_present
        rows.append(
            f"<tr><td>{esc(side)}</td><td class='n'>{_num(found.lines)}</td>"
            f"<td>{shown}<br><span class='muted'>from {esc(found.source)}</span>{ratios}</td>"
            f"<td>{', '.join(f'{esc(t)} ({_num(n)})' for t, n in present.items()) or '&ndash;'}"
            "</td><td>"
            + (
                "<br>".join(
                    f"{esc(r)}: {_num(d.lines)} ({d.share:.1%})" for r, d in found.dropped.items()
                )
                or "&ndash;"
            )
            + "</td></tr>"
        )
        for flag in found.flagged:
            text_side = "candidate" if side.startswith("candidate") else "pivot"
            samples = "".join(
                f"<li><code>{esc(sample_file(sample))}:{esc(sample['line'])}</code> "
                f"{esc(sample[text_side])}</li>"
                for sample in flag.samples
            )
            flags.append(
                f"<div class='flag'><p><b>{esc(flag.reason)}</b> dropped "
                f"{flag.share:.1%} of the {esc(side)} side's lines ({_num(flag.lines)}): "
                "more than a check should drop of a side; if these lines are right, the check "
                'does not fit the language (docs/filters.md, "When a check does not fit").</p>'
                f"<ul>{samples}</ul></div>"
            )
    return (
        "".join(flags) + "<table><tr><th>side</th><th>lines</th><th>scripts judged against</th>"
        "<th>languages present (strong lines)</th><th>dropped by the prefilter</th></tr>"
        + "".join(rows)
        + "</table><p class='muted'>A script is learned when it is the main script of at "
        "least a fifth of a side's lines; a language is present when the detector finds it by "
        "strong evidence in enough of the side's lines, and only then does it drop lines for "
        "leaning to it (docs/filters.md).</p>"
    )


def _pairs_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    if not rows:
        return "<p class='muted'>none</p>"
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='n'>{_num(r.get(c))}</td>"
            if isinstance(r.get(c), (int, float))
            else f"<td>{esc(r.get(c, ''))}</td>"
            for c in columns
        )
        + "</tr>"
        for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def scores_section(cuts: Sequence[Mapping[str, Any]], samples: Mapping[str, Any]) -> str:
    parts = []
    for index, cut in enumerate(cuts):
        mode = cut.get("mode") or "?"
        facts = [f"mode <b>{esc(mode)}</b>", f"cut <b>{_num(cut.get('value'))}</b>"]
        if cut.get("max_false_accept") is not None:
            facts.append(f"target false-accept share {_num(cut['max_false_accept'])}")
        if cut.get("expected_false_accept") is not None:
            facts.append(
                "mismatched pairs at or above the cut (expected false accepts): "
                f"<b>{100 * cut['expected_false_accept']:.2f}%</b>"
            )
        if cut.get("aligned_sample_kept") is not None:
            facts.append(f"aligned sample kept: {100 * cut['aligned_sample_kept']:.1f}%")
        note = ""
        if cut.get("fallback"):
            note = f"<p><b>Fallback:</b> {esc(cut['fallback'])}</p>"
        if "mismatched" not in cut.get("histograms", {}):
            note += (
                "<p class='muted'>No calibration null: this cut was fixed, not calibrated "
                "(<code>--threshold auto</code> scores a sample against shifted, mismatched "
                "pairs and draws them here).</p>"
            )
        chart = score_chart(cut, index) if cut.get("edges") else "<p>no scores</p>"
        summaries = cut.get("summaries") or {}
        summary_rows = "".join(
            f"<tr><td>{esc(name)}</td>"
            + "".join(
                f"<td class='n'>{_num(s.get(k))}</td>"
                for k in ("n", "mean", "q05", "q25", "q50", "q75", "q95")
            )
            + "</tr>"
            for name, s in summaries.items()
        )
        summary_table = (
            "<table><tr><th>scores</th><th>n</th><th>mean</th><th>q05</th><th>q25</th>"
            f"<th>q50</th><th>q75</th><th>q95</th></tr>{summary_rows}</table>"
            if summary_rows
            else ""
        )
        border = cut.get("borderline") or {}
        columns = ["score", "pivot", "candidate", "shard", "line"]
        above = border.get("above") or (samples.get("just_above_cut") if index == 0 else [])
        parts.append(
            f"<h3>{esc(cut.get('name', 'cut'))} (stage {esc(cut.get('stage', '?'))})</h3>"
            f"<p>{'; '.join(facts)}.</p>{note}{chart}{summary_table}"
            "<div class='grid'><div><h4>Just below the cut</h4>"
            + (
                _pairs_table(border.get("below", []), columns)
                if border
                else "<p class='muted'>Not recorded: pairs below a fixed cut are dropped "
                "unseen; a calibrated run records them from its sample.</p>"
            )
            + "</div><div><h4>Just above the cut</h4>"
            + _pairs_table(above or [], columns)
            + "</div></div>"
        )
    return "".join(parts)


def _inflection_note(variants: Mapping[str, Any] | None) -> str:
    if not variants:
        return ""
    return (
        f"{_num(variants['pairs'])} pairs ({variants['share']:.1%}) differ only in word "
        "endings (gender, number, person: right, but weak for training; "
        "<code>--drop-inflection-pairs</code> drops them)."
    )


def near_duplicates_note(found: Mapping[str, Any] | None) -> str:
    """The written pairs that repeat another one nearly, with a few examples."""
    if not found:
        return ""
    dropped = (
        f" The run dropped {_num(found['dropped'])} of them "
        f"(<code>--near-duplicates {found['similarity']}</code>)."
        if found["dropped"]
        else " <code>--near-duplicates SIMILARITY</code> drops them."
    )
    note = (
        f"<p>{_num(found['pairs'])} written pairs ({found['share']:.1%}) are near-duplicates "
        f"of another written pair (character 3-grams overlapping by "
        f"{found['similarity']} or more).{dropped}</p>"
    )
    rows = [
        {
            "pair": " / ".join(example["pair"]),
            "repeats": " / ".join(example["repeats"]),
        }
        for example in found["examples"]
    ]
    return note + (_pairs_table(rows, ["pair", "repeats"]) if rows else "")


def groups_section(groups: Mapping[str, Any]) -> str:
    if not groups["groups"]:
        return "<p>No groups: no pairs were written.</p>"
    return (
        f"<p>{_num(groups['groups'])} groups (pivots with pairs written); mean size "
        f"{_num(groups['mean_size'])} distinct candidates, mean {_num(groups['mean_pairs'])} "
        "pairs per group. "
        + _inflection_note(groups.get("inflection_variants"))
        + "</p><div class='grid'><div>"
        + bar_chart(
            groups["size_histogram"],
            "group-sizes",
            "distinct candidates in the group",
            PALETTE["bar"],
        )
        + "</div><div>"
        + bar_chart(
            groups["pairs_histogram"],
            "pairs-per-group",
            "pairs written from the group",
            PALETTE["kept"],
        )
        + "</div></div>"
    )


def samples_section(samples: Mapping[str, Any]) -> str:
    rejects = samples.get("rejects") or {}
    reject_parts = "".join(
        f"<h4>{esc(reason)}</h4>" + _pairs_table(rows, ["shard", "line", "record"])
        for reason, rows in rejects.items()
    )
    return (
        "<h3>Random written pairs</h3>"
        + _pairs_table(
            samples.get("random", []),
            ["sentence_a", "sentence_b", "pivot", "score_a", "score_b"],
        )
        + "<h3>Rejected records, by reason</h3>"
        + (reject_parts or "<p class='muted'>No record was rejected.</p>")
    )


def _definition_table(mapping: Mapping[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{esc(k)}</th><td class='mono'>"
        f"{esc(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v)}</td></tr>"
        for k, v in mapping.items()
    )
    return f"<table>{rows}</table>"


def run_section(stats: Mapping[str, Any]) -> str:
    timing = stats.get("timing") or {}
    if timing:
        head = (
            f"<p>Wall time {_num(timing.get('seconds'))} s"
            + (
                f", {_num(timing['pairs_read_per_second'])} pairs read per second"
                if "pairs_read_per_second" in timing
                else ""
            )
            + ".</p>"
        )
        stage_rows = timing.get("stages") or []
        time_part = head + (
            _pairs_table(stage_rows, ["stage", "seconds", "per_second"]) if stage_rows else ""
        )
    else:
        time_part = (
            "<p class='muted'>Time was not recorded: this report was built from the files "
            "alone.</p>"
        )
    inputs = []
    for shard in stats.get("inputs", []):
        for f in shard.get("files", []):
            inputs.append(
                {
                    "format": shard.get("format"),
                    "corpus": shard.get("corpus"),
                    "file": f.get("url"),
                    "size": f.get("size"),
                    "mtime": f.get("mtime", ""),
                    "checksum": f.get("checksum", ""),
                }
            )
    return (
        "<h3>Time and throughput</h3>"
        + time_part
        + "<h3>Model</h3>"
        + _definition_table(stats.get("model", {}))
        + f"<h3>Inputs ({_num(stats.get('input_bytes', 0))} bytes)</h3>"
        + _pairs_table(inputs, ["format", "corpus", "file", "size", "mtime", "checksum"])
        + "<h3>Options</h3>"
        + _definition_table(stats.get("options", {}))
        + "<h3>Versions</h3>"
        + _definition_table({"code": stats.get("code_version"), **stats.get("schema_versions", {})})
    )


def pivots_note(languages: Mapping[str, Any]) -> str:
    """Pairs and groups per pivot language, where the run read several."""
    option = str(languages.get("pivot"))
    by_language = languages.get("pivots") or {}
    if not several(option):
        return ""
    listed = ", ".join(
        f"{esc(lang)} {_num(n['pairs'])} ({_num(n['groups'])})" for lang, n in by_language.items()
    )
    return (
        f"<p>Pivots in {_num(len(by_language))} languages "
        f"(<code>--src-lang {esc(option)}</code>); a pivot is a sentence in one language, "
        "so pivots in different languages never share a group. "
        f"Pairs (groups) written per pivot language: {listed or 'none'}.</p>"
    )


def pivots_heading(languages: Mapping[str, Any]) -> str:
    if not several(str(languages.get("pivot"))):
        return esc(languages.get("pivot"))
    return f"{_num(len(languages.get('pivots') or {}))} languages of"
