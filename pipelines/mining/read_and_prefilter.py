"""ReadAndPrefilter: shards (or a bitext PCollection) read, normalized and prefiltered, with books.

shards | "ReadBitext" | "Prefilter" -> clean aligned pairs (entries; records where asked)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import apache_beam as beam
from paramine.pipelines.checks.junk import Limits
from paramine.pipelines.checks.pair_judge import PrefilterOptions
from paramine.pipelines.core.accounting import CountStage, StageResult
from paramine.pipelines.core.origins import Origins
from paramine.pipelines.formats import ReaderOptions, Shard
from paramine.pipelines.formats.base import DEFAULT_SPLIT_BYTES
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.filter.prefilter import PREFILTER, Prefilter, Prefiltered
from paramine.pipelines.stages.read_bitext import READ_BITEXT, ReadBitext, ReadOutput
from paramine.schemas.stages import Stage


def reader_options(
    settings: MiningSettings, split_bytes: int = DEFAULT_SPLIT_BYTES
) -> ReaderOptions:
    """The readers' settings of a run; ``split_bytes`` is how the run spreads its reading."""
    return ReaderOptions(
        invalid_utf8=settings.invalid_utf8,
        max_line_chars=settings.max_line_chars,
        on_length_mismatch=settings.on_length_mismatch,
        xces_links=settings.xces_links,
        on_malformed_xml=settings.on_malformed_xml,
        tsv_columns=settings.tsv_columns,
        split_bytes=split_bytes,
        max_rejects_per_reason=settings.max_rejects_per_reason,
        min_adequacy=settings.min_adequacy,
        min_language_score=settings.min_language_score,
        score_column=settings.score_column,
        score_property=settings.score_property,
        min_score=settings.min_score,
    )


def prefilter_options(settings: MiningSettings) -> PrefilterOptions:
    """The prefilter's settings of a run: the profile's rules with the run's overrides."""
    filters = settings.filters
    return PrefilterOptions(
        min_words=settings.min_words,
        max_words=settings.max_words,
        max_length_ratio=settings.max_length_ratio,
        sentence_count_filter=settings.sentence_count_filter,
        junk_rules=tuple(filters["junk_rules"]),
        limits=Limits(filters["min_letter_share"], filters["min_script_share"]),
        language_ratio=filters["language_check"],
        language_id=settings.language_id,
        declared_scripts=settings.declared_scripts,
    )


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
    ) -> None:
        super().__init__()
        self.settings = settings
        self.shards = list(shards)
        self.split_bytes = split_bytes
        self.records = records

    def expand(self, source: beam.pvalue.PBegin | beam.PCollection) -> CleanBitext:
        if isinstance(source, beam.pvalue.PBegin):
            options = reader_options(self.settings, self.split_bytes)
            read = source | "ReadBitext" >> ReadBitext(self.shards, options)
        else:
            read = source | "Bitext" >> _AsRead()
        prefilter = Prefilter(prefilter_options(self.settings), self.shards, self.records)
        prefiltered = read.kept | "Prefilter" >> prefilter
        counts = (
            StageResult(read.kept, read.dropped) | "CountReadBitext" >> CountStage(READ_BITEXT),
            StageResult(prefiltered.entries, prefiltered.dropped)
            | "CountPrefilter" >> CountStage(PREFILTER, taken_in=read.kept),
            read.repairs,
            prefiltered.notes,
        ) | "Counts" >> beam.Flatten()
        return CleanBitext(read, prefiltered, prefilter.origins, counts)
