"""ReadAndPrefilter: shards (or a bitext PCollection) read, normalized and prefiltered, with books.

shards | "ReadBitext" | "Prefilter" -> clean aligned pairs (entries; records where asked)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import apache_beam as beam
from paramine.pipelines.core.accounting import CountStage, StageResult
from paramine.pipelines.core.origins import Origins
from paramine.pipelines.formats import Shard
from paramine.pipelines.formats.base import DEFAULT_SPLIT_BYTES
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.filter.prefilter import PREFILTER, Prefilter, Prefiltered
from paramine.pipelines.stages.read.read_bitext import READ_BITEXT, ReadBitext, ReadOutput
from paramine.schemas.stages import Stage


class CleanBitext(NamedTuple):
    """What ``ReadAndPrefilter`` yields.

    Attributes:
        read: The readers' output: pairs, drops, rejects and repairs.
        prefiltered: The prefilter's kept pairs (entries; records where asked) and drops.
        origins: How the entries name their shards (``Prefiltered.entries``).
        counts: Count rows of both stages' books, the readers' repairs, the
            lines the prefilter's checks could not judge (``unchecked``) and
            its figures of each side's lines (``line_checks``).
    """

    read: ReadOutput
    prefiltered: Prefiltered
    origins: Origins
    counts: beam.PCollection


class _AsRead(beam.PTransform):
    """A bitext PCollection given by the user, as if read: nothing rejected or repaired."""

    def expand(self, bitext: beam.PCollection) -> ReadOutput:
        pipeline = bitext.pipeline
        return ReadOutput(
            kept=bitext,
            dropped=pipeline | "NoDrops" >> beam.Create([]),
            rejected=pipeline | "NoRejects" >> beam.Create([]),
            repairs=pipeline | "NoRepairs" >> beam.Create([]),
        )


class ReadAndPrefilter(beam.PTransform):
    """Reads shards (applied to a pipeline) or takes a bitext PCollection, and prefilters it.

    Args:
        settings: What decides the pairs (the readers' policies, the filters).
        shards: The shards to read when applied to a pipeline (``PBegin``);
            leave out when applied to a PCollection of ``AlignedPair``.
        split_bytes: Read uncompressed text files in spans of about this many bytes.
        records: Make a record of every kept pair (``Prefiltered.kept``), for
            a caller that reads them all: ``--write-scored``, ``paramine refresh``.
        earlier: The ``line_checks`` figures of lines earlier runs read, which
            the sides' decisions count too (``Prefilter``): a refresh's table.
    """

    #: The stages whose books this keeps, in order.
    STAGES: tuple[Stage, ...] = (READ_BITEXT, PREFILTER)

    def __init__(
        self,
        settings: MiningSettings,
        shards: Sequence[Shard] = (),
        *,
        split_bytes: int = DEFAULT_SPLIT_BYTES,
        records: bool = False,
        earlier: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.shards = list(shards)
        self.split_bytes = split_bytes
        self.records = records
        self.earlier = earlier

    def expand(self, source: beam.pvalue.PBegin | beam.PCollection) -> CleanBitext:
        if isinstance(source, beam.pvalue.PBegin):
            options = self.settings.reader_options(self.split_bytes)
            read = source | "ReadBitext" >> ReadBitext(self.shards, options)
        else:
            read = source | "Bitext" >> _AsRead()
        prefilter = Prefilter(
            self.settings.prefilter_options, self.shards, self.records, self.earlier
        )
        prefiltered = read.kept | "Prefilter" >> prefilter
        counts = (
            StageResult(read.kept, read.dropped) | "CountReadBitext" >> CountStage(READ_BITEXT),
            StageResult(prefiltered.entries, prefiltered.dropped)
            | "CountPrefilter" >> CountStage(PREFILTER, taken_in=read.kept),
            read.repairs,
            prefiltered.notes,
        ) | "Counts" >> beam.Flatten()
        return CleanBitext(read, prefiltered, prefilter.origins, counts)
