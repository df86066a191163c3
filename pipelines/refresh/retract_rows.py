"""RetractRows: the state rows of shards that changed or left the inputs leave the state.

A refresh keeps every aligned pair it has seen as a state row, with the shard
it came from. When a shard changes or is removed, its rows are retracted:
they leave the state, and their pivots are mined again (``AffectedPivots``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import apache_beam as beam
from paramine.pipelines.core.accounting import DROPPED, Dropper, StageResult
from paramine.pipelines.refresh.state_files import StateRow
from paramine.schemas.stages import Stage

#: The unit of the state's books: one aligned pair the table has seen.
STATE_ROW = "state row"
RETRACT_ROWS = Stage(
    "RetractRows",
    STATE_ROW,
    ("retracted",),
    "the table's state, every aligned pair seen before: rows of shards that changed or left "
    "the inputs are retracted",
)


class _RetractFn(beam.DoFn):
    """Drops state rows of retracted shards; their pairs go to ``retracted``."""

    def __init__(self, retracted: frozenset[str]) -> None:
        self.retracted = retracted
        self.drop = Dropper(RETRACT_ROWS)

    def process(self, row: StateRow) -> Iterator:
        if row.pair.shard in self.retracted:
            yield self.drop("retracted")
            yield beam.pvalue.TaggedOutput("retracted", row.pair)
        else:
            yield row


class RetractedRows(NamedTuple):
    """The state that stays (books), and the aligned pairs retracted from it."""

    books: StageResult
    retracted: beam.PCollection


class RetractRows(beam.PTransform):
    """Takes the rows of ``retracted`` shards (``AlignedPair.shard``) out of the state.

    Args:
        retracted: The shards whose rows leave: changed or removed since the last commit.
    """

    def __init__(self, retracted: frozenset[str]) -> None:
        super().__init__()
        self.retracted = retracted

    def expand(self, rows: beam.PCollection) -> RetractedRows:
        split = rows | "Retract" >> beam.ParDo(_RetractFn(self.retracted)).with_outputs(
            DROPPED, "retracted", main="kept"
        )
        return RetractedRows(StageResult(split["kept"], split[DROPPED]), split["retracted"])
