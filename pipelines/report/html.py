"""``report.html``: the stats of a run, drawn in one self-contained file.

One HTML file with inline SVG charts (matplotlib), inline CSS, no JavaScript
and no reference to anything outside the file, so it opens offline years
later. A Content-Security-Policy in the page forbids every request, so a
browser would also refuse (and report) one that slipped in.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from paramine.pipelines.formats.pivot_languages import several
from paramine.pipelines.report.charts import (
    PALETTE,
    bar_chart,
    funnel_chart,
    lengths_chart,
    score_chart,
)

#: Sections of the report, in order: (id, title).
SECTIONS = (
    ("funnel", "Funnel: what each stage kept and dropped"),
    ("checks", "Per-line checks: each side's scripts, languages and drops"),
    ("scores", "Scores and cuts"),
    ("groups", "Group sizes"),
    ("lengths", "Sentence lengths"),
    ("samples", "Samples"),
    ("run", "Run: time, model, options, inputs"),
)

#: Forbids every request: the report must be readable with no network.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #1d1d1f; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { border-bottom: 2px solid #d0d7de; padding-bottom: .2em; margin-top: 2em; }
h3 { margin-bottom: .3em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; }
th, td { border: 1px solid #d0d7de; padding: .25em .6em; text-align: left;
         vertical-align: top; }
th { background: #f6f8fa; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: #57606a; }
.figure svg { max-width: 100%; height: auto; }
.grid { display: flex; flex-wrap: wrap; gap: 1em; }
.grid > div { flex: 1 1 480px; }
code, .mono { font-family: ui-monospace, monospace; font-size: .92em; }
nav a { margin-right: 1em; }
.flag { border-left: 4px solid #bf8700; background: #fff8c5; padding: .3em .8em;
        margin: .6em 0; }
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return _esc(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}"
    return _esc(value)


def _funnel_section(funnel: Mapping[str, Any]) -> str:
    rows = []
    for stage in funnel["stages"]:
        dropped = stage["dropped"]
        reasons = "<br>".join(f"{_esc(k)}: {_num(v)}" for k, v in dropped.items() if v) or "&ndash;"
        rows.append(
            f"<tr><td>{_esc(stage['stage'])}</td><td class='n'>{_num(stage['in'])}</td>"
            f"<td class='n'>{_num(stage['kept'])}</td>"
            f"<td class='n'>{_num(sum(dropped.values()))}</td><td>{reasons}</td></tr>"
        )
    repaired = funnel.get("repaired") or {}
    repairs = (
        "<p>Repaired and kept: "
        + ", ".join(f"{_esc(k)} {_num(v)}" for k, v in repaired.items())
        + "</p>"
        if repaired
        else ""
    )
    not_judged = funnel.get("unchecked") or {}
    unchecked = (
        "<p>Kept without a judgment (a check that cannot judge a line's language; "
        "docs/filters.md): "
        + "; ".join(
            f"{_esc(check.replace('_', ' '))} check: "
            + ", ".join(f"{_esc(lang)} {_num(n)} lines" for lang, n in langs.items())
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


def _first_pass_note(found: Mapping[str, Any] | None) -> str:
    """A second pass's pairs against its first pass's, and the drops that changed."""
    if not found:
        return ""
    if "error" in found:
        return f"<p>First pass {_esc(found['dataset'])}: {_esc(found['error'])}</p>"
    rows = "".join(
        f"<tr><td>{_esc(stage)}</td><td>{_esc(reason)}</td>"
        f"<td class='n'>{_num(n['first_pass'])}</td><td class='n'>{_num(n['this_pass'])}</td></tr>"
        for stage, reasons in found["dropped"].items()
        for reason, n in reasons.items()
    )
    return (
        f"<p><b>Second pass</b>, with a model trained on the first pass "
        f"<code>{_esc(found['dataset'])}</code>: {_num(found['pairs'])} pairs, "
        f"{_num(found['also_in_first_pass'])} of them in the first pass too, "
        f"<b>{_num(found['new'])} new</b>; {_num(found['first_pass_pairs_not_found_again'])} of "
        f"the first pass's {_num(found['first_pass_pairs'])} not found again.</p>"
        "<table><tr><th>stage</th><th>dropped as</th><th>first pass</th><th>this pass</th></tr>"
        + rows
        + "</table>"
    )


def _checks_section(sides: Mapping[str, Any]) -> str:
    """Each side: the scripts its lines were judged against, languages present, drops, flags."""
    if not sides:
        return "<p class='muted'>This run recorded no per-line figures (an older run).</p>"
    rows, flags = [], []
    for side, found in sides.items():
        scripts = found["scripts"]
        learned = scripts.get("learned") or {}
        judged = scripts.get("judged_against")
        shares = scripts.get("shares") or {}
        shown = (
            ", ".join(
                f"{_esc(s)}"
                + (
                    f" <b>learned</b> ({shares.get(s, 0):.0%} of lines)"
                    if s in learned
                    else (f" ({shares[s]:.0%})" if s in shares else "")
                )
                for s in judged
            )
            if judged
            else "none known or learned: not judged"
        )
        present = found.get("languages_present") or {}
        dropped = found.get("dropped") or {}
        ratios = "".join(
            f"<br><span class='muted'>length {scale:.2f}&times; the {_esc(pivot)} side's</span>"
            for pivot, scale in (found.get("length_ratio_to") or {}).items()
        )
        rows.append(
            f"<tr><td>{_esc(side)}</td><td class='n'>{_num(found['lines'])}</td>"
            f"<td>{shown}<br><span class='muted'>from {_esc(scripts['source'])}</span>{ratios}</td>"
            f"<td>{', '.join(f'{_esc(t)} ({_num(n)})' for t, n in present.items()) or '&ndash;'}"
            "</td><td>"
            + (
                "<br>".join(
                    f"{_esc(r)}: {_num(d['lines'])} ({d['share']:.1%})" for r, d in dropped.items()
                )
                or "&ndash;"
            )
            + "</td></tr>"
        )
        for flag in found.get("flagged", []):
            text_side = "candidate" if side.startswith("candidate") else "pivot"
            samples = "".join(
                f"<li><code>{_esc(sample['shard'])}:{_esc(sample['line'])}</code> "
                f"{_esc(sample[text_side])}</li>"
                for sample in flag["samples"]
            )
            flags.append(
                f"<div class='flag'><p><b>{_esc(flag['reason'])}</b> dropped "
                f"{flag['share']:.1%} of the {_esc(side)} side's lines ({_num(flag['lines'])}): "
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
    head = "".join(f"<th>{_esc(c)}</th>" for c in columns)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class='n'>{_num(r.get(c))}</td>"
            if isinstance(r.get(c), (int, float))
            else f"<td>{_esc(r.get(c, ''))}</td>"
            for c in columns
        )
        + "</tr>"
        for r in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _scores_section(cuts: Sequence[Mapping[str, Any]], samples: Mapping[str, Any]) -> str:
    parts = []
    for index, cut in enumerate(cuts):
        mode = cut.get("mode") or "?"
        facts = [f"mode <b>{_esc(mode)}</b>", f"cut <b>{_num(cut.get('value'))}</b>"]
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
            note = f"<p><b>Fallback:</b> {_esc(cut['fallback'])}</p>"
        if "mismatched" not in cut.get("histograms", {}):
            note += (
                "<p class='muted'>No calibration null: this cut was fixed, not calibrated "
                "(<code>--threshold auto</code> scores a sample against shifted, mismatched "
                "pairs and draws them here).</p>"
            )
        chart = score_chart(cut, index) if cut.get("edges") else "<p>no scores</p>"
        summaries = cut.get("summaries") or {}
        summary_rows = "".join(
            f"<tr><td>{_esc(name)}</td>"
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
            f"<h3>{_esc(cut.get('name', 'cut'))} (stage {_esc(cut.get('stage', '?'))})</h3>"
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


def _near_duplicates_note(found: Mapping[str, Any] | None) -> str:
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


def _groups_section(groups: Mapping[str, Any]) -> str:
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


def _samples_section(samples: Mapping[str, Any]) -> str:
    rejects = samples.get("rejects") or {}
    reject_parts = "".join(
        f"<h4>{_esc(reason)}</h4>" + _pairs_table(rows, ["shard", "line", "record"])
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
        f"<tr><th>{_esc(k)}</th><td class='mono'>"
        f"{_esc(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v)}</td></tr>"
        for k, v in mapping.items()
    )
    return f"<table>{rows}</table>"


def _run_section(stats: Mapping[str, Any]) -> str:
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


def _pivots_note(languages: Mapping[str, Any]) -> str:
    """Pairs and groups per pivot language, where the run read several."""
    option = str(languages.get("pivot"))
    by_language = languages.get("pivots") or {}
    if not several(option):
        return ""
    listed = ", ".join(
        f"{_esc(lang)} {_num(n['pairs'])} ({_num(n['groups'])})" for lang, n in by_language.items()
    )
    return (
        f"<p>Pivots in {_num(len(by_language))} languages "
        f"(<code>--src-lang {_esc(option)}</code>); a pivot is a sentence in one language, "
        "so pivots in different languages never share a group. "
        f"Pairs (groups) written per pivot language: {listed or 'none'}.</p>"
    )


def _pivots_heading(languages: Mapping[str, Any]) -> str:
    if not several(str(languages.get("pivot"))):
        return _esc(languages.get("pivot"))
    return f"{_num(len(languages.get('pivots') or {}))} languages of"


def render_html(stats: Mapping[str, Any], title: str) -> str:
    """The report page of a run's stats (``gather_stats``), as one HTML string."""
    languages = stats.get("languages", {})
    bodies = {
        "funnel": _funnel_section(stats["funnel"]) + _first_pass_note(stats.get("first_pass")),
        "checks": _checks_section(stats.get("line_checks") or {}),
        "scores": _scores_section(stats["cuts"], stats["samples"]),
        "groups": _pivots_note(languages)
        + _groups_section(stats["groups"])
        + _near_duplicates_note(stats.get("near_duplicates")),
        "lengths": lengths_chart(stats["lengths"]),
        "samples": _samples_section(stats["samples"]),
        "run": _run_section(stats),
    }
    nav = "".join(f"<a href='#{sid}'>{_esc(t.split(':')[0])}</a>" for sid, t in SECTIONS)
    sections = "".join(
        f"<section id='{sid}'><h2>{_esc(title_)}</h2>{bodies[sid]}</section>"
        for sid, title_ in SECTIONS
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>paramine report: {_esc(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>paramine run report</h1><p class='muted'>{_esc(title)} &middot; "
        f"{_pivots_heading(languages)} pivots, {_esc(languages.get('candidate'))} "
        f"candidates &middot; mined {_esc(stats.get('created_at'))} &middot; "
        f"{_esc(stats.get('code_version'))}</p><nav>{nav}</nav>{sections}"
        "<p class='muted'>Every figure here is in <code>stats.json</code> beside this file.</p>"
        "</body></html>\n"
    )
