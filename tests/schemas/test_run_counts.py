"""The manifest's counts, typed: ledgers and notes read, written and asked."""

from __future__ import annotations

import json

import pytest
from paramine.schemas.run_counts import NOTES, RunCounts, StageCounts

#: As a manifest of this layout holds them (keys as ``json.dumps(sort_keys=True)`` writes them).
WRITTEN = {
    "ReadBitext": {"in": 12, "kept": 10, "dropped": {"column_count": 2}},
    "Prefilter": {"in": 10, "kept": 7, "dropped": {"duplicate_pair": 1, "empty": 2}},
    "GroupByPivot": {"in": 7, "kept": 5, "dropped": {"single_candidate": 2}},
    "encoding": {"texts_encoded": 9},
    "repairs": {},
    "unchecked": {"language_unchecked.bo": 3},
}


def test_ledgers_and_notes_are_told_apart_and_written_back_as_read() -> None:
    counts = RunCounts.read(WRITTEN)
    assert set(counts.stages) == {"ReadBitext", "Prefilter", "GroupByPivot"}
    assert set(counts.notes) == {"encoding", "repairs", "unchecked"} <= set(NOTES)
    assert counts.stage("Prefilter") == StageCounts(10, 7, {"duplicate_pair": 1, "empty": 2})
    assert counts.note("encoding") == {"texts_encoded": 9}
    assert counts.to_json() == WRITTEN
    assert json.dumps(counts.to_json(), sort_keys=True) == json.dumps(WRITTEN, sort_keys=True)


def test_a_stage_without_in_takes_in_what_it_kept_and_dropped() -> None:
    books = StageCounts.read({"kept": 3, "dropped": {"b": 1, "a": 2}})
    assert books == StageCounts(taken_in=6, kept=3, dropped={"a": 2, "b": 1})
    assert books.dropped_total == 3
    assert list(books.to_json()["dropped"]) == ["a", "b"]


def test_a_stage_not_counted_is_named_with_those_that_were() -> None:
    counts = RunCounts.read(WRITTEN)
    assert counts.get("PostFilter") is None
    with pytest.raises(KeyError, match=r"'PostFilter'.*ReadBitext, Prefilter, GroupByPivot"):
        counts.stage("PostFilter")
    assert counts.note("table") == {}


def test_a_reason_is_summed_over_the_stages_asked() -> None:
    counts = RunCounts.read(
        {
            "A": {"in": 4, "kept": 2, "dropped": {"near_duplicate": 2}},
            "B": {"in": 2, "kept": 1, "dropped": {"near_duplicate": 1}},
        }
    )
    assert counts.dropped("near_duplicate") == 3
    assert counts.dropped("near_duplicate", ["B", "Missing"]) == 1
    assert counts.dropped("empty") == 0


def test_an_empty_or_absent_record_reads_as_no_counts() -> None:
    assert RunCounts.read(None) == RunCounts()
    assert RunCounts.read({}).to_json() == {}
