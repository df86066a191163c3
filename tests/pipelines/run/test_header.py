"""run/header.py: the manifest's header that mine and refresh both record."""

from __future__ import annotations

from paramine.pipelines.mining.mine_paraphrases import MINE_STAGES
from paramine.pipelines.run.header import run_header
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import RunSettings
from paramine.schemas.run_parts import FileRecord, InputRecord, ModelRecord, RunExtra


def test_the_header_holds_both_kinds_of_settings_and_every_runs_facts() -> None:
    mining, running = MiningSettings(min_words=2), RunSettings(output="out")
    header = run_header(
        mining,
        running,
        model=ModelRecord(id="m"),
        inputs=[InputRecord(files=(FileRecord("a.tsv", 3),))],
        stages=MINE_STAGES,
        unchecked={"language": ["kab"]},
        runner="DirectRunner",
        options_extra={"refresh": {"buckets": 4}},
        extra=RunExtra(eval_exclusion={"sentences": 3}),
    )
    assert header.options == {
        **mining.to_record(),
        **running.to_record(),
        "refresh": {"buckets": 4},
    }
    assert header.options["min_words"] == 2 and header.options["output"] == "out"
    assert header.extra == RunExtra(
        unchecked_languages={"language": ["kab"]},
        filters=mining.filters,
        runner="DirectRunner",
        eval_exclusion={"sentences": 3},
    )
    assert header.model == ModelRecord(id="m") and header.inputs[0].size == 3
    assert [stage["name"] for stage in header.stages] == [stage.name for stage in MINE_STAGES]
    # What only one command records is only in its header.
    plain = run_header(
        mining,
        running,
        model=ModelRecord(),
        inputs=[],
        stages=[],
        unchecked={},
        runner="DirectRunner",
    )
    assert "refresh" not in plain.options and set(plain.extra.to_json()) == {
        "unchecked_languages",
        "filters",
        "runner",
    }
