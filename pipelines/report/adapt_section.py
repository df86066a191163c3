"""The report's section on a ``paramine adapt`` loop: every round, and why the loop stopped."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paramine.pipelines.report.sections import esc
from paramine.schemas.adapt_record import AdaptRecord, held_out_score


def _cell(value: Any, digits: int | None = None) -> str:
    if value is None:
        return "<td class='n'>&ndash;</td>"
    if digits is not None:
        return f"<td class='n'>{value:,.{digits}f}</td>"
    return f"<td class='n'>{value:,}</td>"


def _gain_cell(gain: Mapping[str, Any] | None) -> str:
    """A round's gain over the best encoder before it, ± its standard error, in points."""
    if not gain:
        return _cell(None)
    return f"<td class='n'>{gain['gain']:+.2f} &plusmn; {gain['standard_error']:.2f}</td>"


def adapt_section(found: Mapping[str, Any] | None) -> str:
    """The loop's rounds as a table: training, held-out retrieval, pairs, cut, time."""
    if not found:
        return ""
    record = AdaptRecord.from_record(dict(found))
    base = next(
        (held_out_score(r.training.held_out_base) for r in record.rounds if r.training), None
    )
    rows = []
    for round_ in record.rounds:
        training, mined = round_.training, round_.mining
        held = (
            held_out_score(training.held_out) if training else (base if round_.round == 0 else None)
        )
        final = " (final)" if round_.round == record.final_round else ""
        rows.append(
            f"<tr><td>{round_.round}{final}</td>"
            + _cell(training.rows if training else None)
            + _cell(training.dropped_mismatched if training else None)
            + _cell(training.steps if training else None)
            + _cell(held, 2)
            + _gain_cell(training.gain if training else None)
            + _cell(mined.pairs if mined else None)
            + _cell(mined.new_pairs if mined else None)
            + _cell(mined.held_out_pairs if mined else None)
            + _cell(mined.cut if mined else None, 4)
            + _cell(training.seconds if training else None, 0)
            + _cell(mined.seconds if mined else None, 0)
            + "</tr>"
        )
    encoder = (
        f"the encoder <code>{esc(record.encoder)}</code>"
        if record.encoder
        else "the base encoder (no round beat it)"
    )
    return (
        "<p>This dataset is the last pass of <code>paramine adapt</code>: round 0 mined with the "
        "base; each later round trained an encoder from the base on every aligned line of the "
        "pass before (except lines that score as mismatched pairs do, and lines of held-out "
        "pivots), then mined again with it. Held-out retrieval is bitext retrieval acc@1 on "
        "the lines of held-out pivots, both ways' mean. A round's gain is read line by line "
        "against the best encoder before it, on the same lines, with its standard error: a "
        "round is kept when its gain, less <code>--min-gain-se</code> standard errors, reaches "
        f"<code>--min-gain</code>. Stopped: {esc(record.stopped)}. It leaves {encoder}.</p>"
        "<table><tr><th>round</th><th>training rows</th><th>left out as mismatched</th>"
        "<th>steps</th><th>held-out retrieval</th><th>gain &plusmn; standard error</th>"
        "<th>pairs</th><th>new pairs</th><th>pairs of held-out pivots</th><th>cut</th>"
        "<th>train s</th><th>mine s</th></tr>" + "".join(rows) + "</table>"
    )
