"""NotInTable: a new pair that an old pair staying in the table already is, is not written again."""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, StageResult
from paramine.schemas.stages import PARAPHRASE_PAIR, Stage

NOT_IN_TABLE = Stage(
    "NotInTable",
    PARAPHRASE_PAIR,
    ("already_in_table",),
    "a new pair whose pair_id an old pair that stays in the table already has is not written "
    "again (the same two candidates under another pivot)",
)


class _CheckFn(beam.DoFn):
    def __init__(self) -> None:
        self.drop = Dropper(NOT_IN_TABLE)

    def process(self, joined: tuple[str, dict[str, list]]) -> Iterator:
        _, sides = joined
        for pair in sides["new"]:
            yield self.drop("already_in_table") if sides["old"] else pair


class NotInTable(beam.PTransform):
    """Drops a new pair whose ``pair_id`` an old pair that stays in the table already has.

    Args:
        staying: The old pairs that stay in the table (``ParaphrasePair``).
    """

    def __init__(self, staying: beam.PCollection) -> None:
        super().__init__()
        self.staying = staying

    def expand(self, pairs: beam.PCollection) -> StageResult:
        checked = (
            {
                "new": pairs | "NewById" >> beam.Map(lambda r: (r.pair_id, r)),
                "old": self.staying | "OldById" >> beam.Map(lambda r: (r.pair_id, None)),
            }
            | "JoinIds" >> beam.CoGroupByKey()
            | "Check" >> beam.ParDo(_CheckFn()).with_outputs(DROPPED, main="kept")
        )
        return StageResult(checked["kept"], checked[DROPPED])
