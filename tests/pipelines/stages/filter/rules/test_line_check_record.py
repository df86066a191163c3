"""rules/line_check_record.py: the manifest's record of each side's checks, and its summary."""

from __future__ import annotations

import pytest
from paramine.pipelines.stages.filter.rules.line_check_record import run_record, summary_lines
from paramine.schemas.side_checks import read_sides

from tests.pipelines.stages.filter.rules.helpers import figures


def test_the_record_flags_a_check_that_drops_a_tenth_of_a_side() -> None:
    side = figures("candidate:pl", lines=100, scripted=100, script_Latn=100, judged=100)
    side |= {"candidate:pl:drop:wrong_language_candidate": 31, "candidate:pl:drop:too_long": 2}
    side |= {"candidate:pl:drop:duplicate_pair": 50}  # kept once: no loss
    sample = {"hash": 7, "line": 12, "shard": "x.pl", "pivot": "Hi.", "candidate": "Hi there."}
    record = run_record(side, samples=[("candidate:pl|wrong_language_candidate", sample)])
    found = record["candidate:pl"]
    assert found["dropped"] == {
        "wrong_language_candidate": {"lines": 31, "share": 0.31},
        "too_long": {"lines": 2, "share": 0.02},
    }
    [flag] = found["flagged"]
    assert (flag["reason"], flag["share"], flag["samples"]) == (
        "wrong_language_candidate",
        0.31,
        [sample],
    )
    printed = "\n".join(summary_lines(read_sides(record)))
    assert "check flagged: wrong_language_candidate dropped 31.0% of the candidate pl" in printed
    assert "x.pl:12: 'Hi there.'" in printed


def test_a_sample_is_shown_at_the_file_that_holds_its_line() -> None:
    side = figures("candidate:pl", lines=10, scripted=10, script_Latn=10)
    side |= {"candidate:pl:drop:wrong_language_candidate": 5}
    # A Moses pair's shard is its pivot file; the candidate line is in the other.
    sample = {
        "hash": 7,
        "line": 3,
        "shard": "c.en",
        "file": "c.pl",
        "pivot": "Hi.",
        "candidate": "Hej.",
    }
    record = run_record(side, samples=[("candidate:pl|wrong_language_candidate", sample)])
    printed = "\n".join(summary_lines(read_sides(record)))
    assert "e.g. c.pl:3: 'Hej.'" in printed and "c.en" not in printed


@pytest.mark.parametrize("lang", ["pl", "lad", "tlh"])
def test_the_record_says_which_scripts_and_where_from(lang: str) -> None:
    side = figures(f"candidate:{lang}", lines=40, scripted=40, script_Latn=40)
    scripts = run_record(side)[f"candidate:{lang}"]["scripts"]
    assert scripts["judged_against"] is not None and "Latn" in scripts["judged_against"]
    assert scripts["shares"] == {"Latn": 1.0}
    expected = {"pl": "tables", "lad": "tables+run", "tlh": "run"}[lang]
    assert scripts["source"] == expected


def test_earlier_lines_count_in_the_decisions_not_in_the_runs_figures() -> None:
    """A refresh's four Latin Ladino lines: too few to learn Latin alone, not with its table's."""
    run = figures("candidate:lad", lines=4, scripted=4, script_Latn=4)
    assert run_record(run)["candidate:lad"]["scripts"]["judged_against"] == ["Hebr"]
    earlier = figures("candidate:lad", lines=30, scripted=30, script_Latn=30)
    found = run_record(run, earlier=earlier)["candidate:lad"]
    assert found["scripts"]["judged_against"] == ["Hebr", "Latn"]
    assert found["scripts"]["learned"] == {"Latn": 1.0}
    # What the run's own lines were and what the decisions were made on.
    assert found["lines"] == 4 and found["scripts"]["shares"] == {"Latn": 1.0}
    assert found["decided_on"] == {"lines": 34, "earlier": 30}
    assert "decided on 34 lines, 30 of them read by the table's earlier commits" in "\n".join(
        summary_lines(read_sides({"candidate:lad": found}))
    )


def test_the_record_says_what_the_runs_lines_moved_of_the_earlier_decisions() -> None:
    earlier = figures("candidate:lad", lines=4, scripted=4, script_Latn=4)
    run = figures("candidate:lad", lines=30, scripted=30, script_Latn=30)
    found = run_record(run, earlier=earlier)["candidate:lad"]
    assert found["moved"] == {"scripts": [["Hebr"], ["Hebr", "Latn"]]}
    printed = "\n".join(summary_lines(read_sides({"candidate:lad": found})))
    assert "decisions moved: candidate lad scripts Hebr -> Hebr, Latn" in printed
    # Nothing earlier (paramine mine), or the same decisions: nothing moved.
    assert run_record(run)["candidate:lad"]["moved"] == {}
    assert run_record(run, earlier=run)["candidate:lad"]["moved"] == {}
