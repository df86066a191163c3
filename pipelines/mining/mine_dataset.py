"""MineDataset: ``paramine mine``'s whole graph, the dataset it writes included.

shards | "MineParaphrases" (pipelines/mining/mine_paraphrases.py)
       | "WriteDataset" (pipelines/stages/write/write_dataset.py: Parquet, then the manifest)

The launcher (``run/mine.py``) applies this one transform and runs it, as
``paramine refresh`` applies ``RefreshParaphrases``, its writers included.
A user who wants the pairs as PCollections applies ``MineParaphrases``.
"""

from __future__ import annotations

from collections.abc import Sequence

import apache_beam as beam
from paramine.encoders.inference.handler import EncoderHandler
from paramine.pipelines.formats import Shard
from paramine.pipelines.formats.base import DEFAULT_SPLIT_BYTES
from paramine.pipelines.mining.mine_groups import MineGroups
from paramine.pipelines.mining.mine_paraphrases import MineParaphrases
from paramine.pipelines.mining.pair_groups import PairGroups
from paramine.pipelines.mining.read_and_prefilter import ReadAndPrefilter
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.write.write_dataset import WriteDataset
from paramine.schemas.manifest import RunHeader


class MineDataset(beam.PTransform):
    """Mines the shards and writes the dataset: pairs, rejects, scored, the manifest last.

    Applied to a pipeline; yields the written manifest (one element).

    Args:
        settings: What decides the pairs.
        shards: The shards to read.
        output: The folder the dataset is written into, any fsspec URL (the
            launcher's staging folder, swapped in when the run has finished).
        header: The manifest's fields known before the run.
        encoder: The run's encoder; by default the settings' model on this
            machine's device.
        split_bytes: Read uncompressed text files in spans of about this many bytes.
        write_scored: Also score and write every prefiltered pair.
        excluded: Normalized evaluation sentences that no pair may hold.
        num_shards: Parquet files per table; 0 lets the runner decide.
    """

    def __init__(
        self,
        settings: MiningSettings,
        shards: Sequence[Shard],
        output: str,
        header: RunHeader,
        *,
        encoder: EncoderHandler | None = None,
        split_bytes: int = DEFAULT_SPLIT_BYTES,
        write_scored: bool = False,
        excluded: frozenset[str] = frozenset(),
        num_shards: int = 0,
    ) -> None:
        super().__init__()
        self.mine = MineParaphrases(
            settings,
            shards,
            encoder=encoder,
            split_bytes=split_bytes,
            write_scored=write_scored,
            excluded=excluded,
        )
        self.write = WriteDataset(output, header, num_shards)

    def expand(self, pbegin: beam.pvalue.PBegin) -> beam.PCollection:
        mined = pbegin | "MineParaphrases" >> self.mine
        tables = {
            "pairs": mined.pairs,
            "rejects": mined.rejects,
            "counts": mined.counts,
            "threshold": mined.threshold,
            "sides": mined.sides,
        }
        if mined.scored is not None:
            tables["scored"] = mined.scored
        return tables | "WriteDataset" >> self.write


#: The composites that hold the stages, labelled by their class names: the
#: report times each step under the first label of its path that is none of these.
COMPOSITES: tuple[str, ...] = tuple(
    composite.__name__
    for composite in (MineDataset, MineParaphrases, ReadAndPrefilter, MineGroups, PairGroups)
)
