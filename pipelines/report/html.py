"""``report.html``: the stats of a run, drawn in one self-contained file.

One HTML file with inline SVG charts (``report.plot``), inline CSS, no JavaScript
and no reference to anything outside the file, so it opens offline years
later. A Content-Security-Policy in the page forbids every request, so a
browser would also refuse (and report) one that slipped in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paramine.pipelines.report.adapt_section import adapt_section
from paramine.pipelines.report.charts import lengths_chart
from paramine.pipelines.report.sections import (
    checks_section,
    esc,
    first_pass_note,
    funnel_section,
    groups_section,
    near_duplicates_note,
    pivots_heading,
    pivots_note,
    run_section,
    samples_section,
    scores_section,
)

#: Sections of the report, in order: (id, title); a section with nothing to say is left out.
SECTIONS = (
    ("adapt", "Rounds: the paramine adapt loop that made this dataset"),
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


def render_html(stats: Mapping[str, Any], title: str) -> str:
    """The report page of a run's stats (``gather_stats``), as one HTML string."""
    languages = stats.get("languages", {})
    bodies = {
        "adapt": adapt_section(stats.get("adapt")),
        "funnel": funnel_section(stats["funnel"]) + first_pass_note(stats.get("first_pass")),
        "checks": checks_section(stats.get("line_checks") or {}),
        "scores": scores_section(stats["cuts"], stats["samples"]),
        "groups": pivots_note(languages)
        + groups_section(stats["groups"])
        + near_duplicates_note(stats.get("near_duplicates")),
        "lengths": lengths_chart(stats["lengths"]),
        "samples": samples_section(stats["samples"]),
        "run": run_section(stats),
    }
    shown = [(sid, title_) for sid, title_ in SECTIONS if bodies[sid]]
    nav = "".join(f"<a href='#{sid}'>{esc(t.split(':')[0])}</a>" for sid, t in shown)
    sections = "".join(
        f"<section id='{sid}'><h2>{esc(title_)}</h2>{bodies[sid]}</section>"
        for sid, title_ in shown
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>paramine report: {esc(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>paramine run report</h1><p class='muted'>{esc(title)} &middot; "
        f"{pivots_heading(languages)} pivots, {esc(languages.get('candidate'))} "
        f"candidates &middot; mined {esc(stats.get('created_at'))} &middot; "
        f"{esc(stats.get('code_version'))}</p><nav>{nav}</nav>{sections}"
        "<p class='muted'>Every figure here is in <code>stats.json</code> beside this file.</p>"
        "</body></html>\n"
    )
