"""schemas/side_checks.py: each side's per-line checks read typed, from any layout written."""

from __future__ import annotations

import json

from paramine.pipelines.stages.filter.rules.line_check_record import run_record
from paramine.pipelines.stages.filter.rules.line_checks import DROP, LINES, SCRIPT, SCRIPTED, figure
from paramine.schemas.manifest import Manifest
from paramine.schemas.side_checks import Dropped, Flag, SideChecks, read_sides


def _record() -> dict:
    side = "candidate:pl"
    profile = {
        figure(side, LINES): 200,
        figure(side, SCRIPTED): 200,
        figure(side, SCRIPT, "Latn"): 200,
        figure(side, DROP, "wrong_language_candidate"): 30,
        figure(side, DROP, "empty"): 2,
    }
    sample = {"file": "a.tsv", "line": 7, "pivot": "Hi.", "candidate": "Ahoj.", "hash": "0a"}
    return run_record(profile, samples=[(f"{side}|wrong_language_candidate", sample)])


def test_every_key_of_a_record_the_filter_writes_is_read() -> None:
    record = json.loads(json.dumps(_record()))  # as manifest.json holds it
    found = SideChecks.read(record["candidate:pl"])
    written = record["candidate:pl"]
    assert (found.lines, found.decided_on_lines, found.decided_on_earlier) == (200, 200, 0)
    assert found.judged_against == tuple(written["scripts"]["judged_against"]) == ("Latn",)
    assert found.source == written["scripts"]["source"] == "tables"
    assert found.known == tuple(written["scripts"]["known"])
    assert found.shares == {"Latn": 1.0}
    assert found.dropped == {
        "wrong_language_candidate": Dropped(30, 0.15),
        "empty": Dropped(2, 0.01),
    }
    assert list(found.dropped) == list(written["dropped"])  # most first, as written
    [flag] = found.flagged
    assert (flag.reason, flag.lines, flag.share) == ("wrong_language_candidate", 30, 0.15)
    assert flag.samples[0]["line"] == 7
    assert found.moved == {}


def test_an_older_smaller_record_reads_with_empty_attributes() -> None:
    # Before decided_on, known_secondary, length_ratio_to and moved were written.
    older = {"lines": 5, "scripts": {"judged_against": None, "source": "none"}, "dropped": {}}
    found = SideChecks.read(older)
    assert found.decided_on_lines == 5 and found.judged_against is None
    assert found.known_secondary == () and found.length_ratio_to == {} and found.flagged == ()


def test_the_manifest_reads_its_sides_and_a_run_without_them_has_none() -> None:
    manifest = Manifest(
        created_at="t", code_version="v", options={}, model={}, threshold={}, inputs=[],
        counts={}, files={}, rows={}, extra={"line_checks": _record()},
    )  # fmt: skip
    assert list(manifest.line_checks) == ["candidate:pl"]
    assert manifest.line_checks == read_sides(_record())
    assert Manifest.from_json(manifest.to_json()).line_checks == manifest.line_checks
    manifest.extra = manifest.extra.with_facts(line_checks=None)
    assert manifest.line_checks == {}


def test_a_side_built_and_written_reads_back_the_same() -> None:
    checks = SideChecks(
        lines=10,
        decided_on_lines=14,
        decided_on_earlier=4,
        judged_against=("Latn",),
        source="tables",
        known=("Latn",),
        learned={"Latn": 1.0},
        shares={"Latn": 0.9, "Cyrl": 0.1},
        languages_present={"pl": 9},
        length_ratio_to={"en": 0.82},
        judged_by_detector=8,
        dropped={"wrong_language_candidate": Dropped(3, 0.3)},
        flagged=(Flag("wrong_language_candidate", 3, 0.3, ({"line": 1, "hash": "a"},)),),
        moved={"scripts": (["Latn"], ["Cyrl", "Latn"])},
    )
    record = json.loads(json.dumps(checks.to_json()))
    assert SideChecks.read(record) == checks
    assert record["scripts"]["judged_against"] == ["Latn"] and record["decided_on"]["earlier"] == 4
    assert record["flagged"][0] == {
        "reason": "wrong_language_candidate",
        "lines": 3,
        "share": 0.3,
        "samples": [{"line": 1, "hash": "a"}],
    }
    assert SideChecks(lines=0, decided_on_lines=0).to_json()["scripts"]["judged_against"] is None
