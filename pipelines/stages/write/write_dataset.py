"""WriteDataset: Parquet with explicit schemas, then the manifest, last.

The books it checks are the run's stage list (``RunHeader.stages``): the first
stage reads (its drops are the rejects), the last one keeps the pairs that
are written.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

import apache_beam as beam
import fsspec
import pyarrow.parquet as pq
from paramine.pipelines.core.accounting import counts_from_rows, encoding_figures
from paramine.pipelines.core.rejects import WriteRejects
from paramine.schemas.dataset import PAIRS_SCHEMA, SCORED_SCHEMA, pair_row, scored_row
from paramine.schemas.manifest import (
    AccountingError,
    Manifest,
    RunHeader,
    accounting_errors,
    write_manifest,
)
from paramine.schemas.run_counts import RunCounts
from paramine.schemas.run_parts import RunExtra
from paramine.schemas.written import RejectCounts, WrittenFiles, WrittenRows


def _num_rows(url: str) -> int:
    fs, path = fsspec.core.url_to_fs(url)
    with fs.open(path, "rb") as f:
        return pq.ParquetFile(f).metadata.num_rows


def finish_manifest(
    output: str,
    base: RunHeader,
    count_rows: list[tuple[str, str, int]],
    pair_files: list[str],
    reject_files: list[str],
    threshold: dict[str, Any],
    scored_files: list[str] | None = None,
    written_rejects: Mapping[str, int] | None = None,
    scored_handed: int | None = None,
    sides: dict[str, Any] | None = None,
) -> Manifest:
    """Check the run's books and write its manifest.

    The row counts in the Parquet footers are checked against the stages'
    counts too, so a sink that lost rows fails the run. Rejects are counted
    in full but written up to a cap per (reason, shard), so ``rejects/`` is
    checked against the rows handed to its sink (``written_rejects``), and
    those against the counts: no reason written more often than counted.

    Args:
        written_rejects: Reject rows handed to the sink, per reason; ``None``
            when every counted reject was written.
        scored_handed: Rows handed to the ``scored/`` sink (``--write-scored``).
        sides: What the prefilter decided about each side's lines
            (``extra.line_checks``).

    Raises:
        AccountingError: The counts do not add up; no manifest is written,
            so the dataset stays marked incomplete.
    """
    counts = counts_from_rows(count_rows)
    tables = {"pairs": pair_files, "rejects": reject_files}
    if scored_files is not None:
        tables["scored"] = scored_files
    rows = {name: sum(_num_rows(f) for f in files) for name, files in tables.items()}
    stages = [stage["name"] for stage in base.stages]
    first = counts.get(stages[0]) if stages else None
    counted = dict(first.dropped) if first is not None else {}
    written = dict(sorted((written_rejects if written_rejects is not None else counted).items()))
    errors = accounting_errors(counts, base.stages or None)
    errors += _file_errors(counts, stages, rows, counted, written, scored_handed)
    if errors:
        raise AccountingError(
            f"the counts of the run writing {output} do not add up; no manifest was written:\n  "
            + "\n  ".join(errors)
        )
    root = output.rstrip("/")
    manifest = base.manifest(
        threshold=threshold,
        counts=counts,
        files=WrittenFiles.read(
            {
                name: sorted(posixpath.relpath(f, root) for f in files)
                for name, files in tables.items()
            }
        ),
        rows=WrittenRows.read(rows),
        rejects=RejectCounts(counted=counted, written=written),
        extra=RunExtra(encoding=encoding_figures(counts, stages), line_checks=sides),
    )
    write_manifest(output, manifest)
    return manifest


def _file_errors(
    counts: RunCounts,
    stages: list[str],
    rows: dict[str, int],
    counted: dict[str, int],
    written: dict[str, int],
    scored_handed: int | None,
) -> list[str]:
    """Where the rows in the written files disagree with the stages' counts."""
    errors = []
    last = stages[-1] if stages else ""
    books = counts.get(last)
    if books is not None and rows["pairs"] != books.kept:
        errors.append(f"{last} kept {books.kept} pairs but the Parquet files hold {rows['pairs']}")
    if rows["rejects"] != sum(written.values()):
        errors.append(
            f"{sum(written.values())} reject rows were written but rejects/ holds {rows['rejects']}"
        )
    for reason, n in written.items():
        if n > counted.get(reason, 0):
            errors.append(f"{n} {reason} rejects written but read counted {counted.get(reason, 0)}")
    if "scored" in rows and rows["scored"] != scored_handed:
        errors.append(
            f"{scored_handed} scored rows were written but scored/ holds {rows['scored']}"
        )
    return errors


class WriteDataset(beam.PTransform):
    """Writes pairs and rejects as Parquet, then ``manifest.json`` once both are complete.

    Applied to a dict with ``pairs`` (ParaphrasePair), ``rejects`` (Rejected),
    ``counts`` (``(stage, key, n)`` rows), ``threshold`` (one dict), ``sides``
    (one dict, or None) and, with ``--write-scored``, ``scored``
    (``(ScoredPair, passed)``).

    Args:
        output: The dataset directory, any fsspec URL.
        base: The manifest's fields known when the pipeline is built
            (``RunHeader``: options, model, inputs, stages, code version,
            creation time).
        num_shards: Parquet files per table; 0 lets the runner decide.
    """

    def __init__(self, output: str, base: RunHeader, num_shards: int = 0) -> None:
        super().__init__()
        self.output = output.rstrip("/")
        self.base = base
        self.num_shards = num_shards

    def expand(self, inputs: dict[str, beam.PCollection]) -> beam.PCollection:
        pair_files = (
            inputs["pairs"]
            | "PairRows" >> beam.Map(pair_row)
            | "WritePairs"
            >> beam.io.WriteToParquet(
                f"{self.output}/pairs/part",
                PAIRS_SCHEMA,
                file_name_suffix=".parquet",
                num_shards=self.num_shards,
            )
        )
        rejects = inputs["rejects"] | "WriteRejects" >> WriteRejects(
            f"{self.output}/rejects", self.num_shards
        )
        scored = inputs.get("scored")
        scored_files = None
        if scored is not None:
            scored_files = (
                scored
                | "ScoredRows" >> beam.Map(scored_row)
                | "WriteScored"
                >> beam.io.WriteToParquet(
                    f"{self.output}/scored/part",
                    SCORED_SCHEMA,
                    file_name_suffix=".parquet",
                    num_shards=self.num_shards,
                )
            )
        output, base = self.output, self.base
        side = {
            "counts": beam.pvalue.AsList(inputs["counts"]),
            "pairs": beam.pvalue.AsList(pair_files),
            "rejects": beam.pvalue.AsList(rejects.files),
            "threshold": beam.pvalue.AsSingleton(inputs["threshold"]),
            "written": beam.pvalue.AsList(rejects.written),
        }
        if inputs.get("sides") is not None:
            side["sides"] = beam.pvalue.AsSingleton(inputs["sides"])
        if scored_files is not None:
            side["scored"] = beam.pvalue.AsList(scored_files)
            side["scored_handed"] = beam.pvalue.AsSingleton(
                scored | "CountScored" >> beam.combiners.Count.Globally()
            )

        def write_manifest(_: None, **tables: Any) -> Manifest:
            return finish_manifest(
                output,
                base,
                tables["counts"],
                tables["pairs"],
                tables["rejects"],
                tables["threshold"],
                tables.get("scored"),
                dict(tables["written"]),
                tables.get("scored_handed"),
                tables.get("sides"),
            )

        # Side inputs are complete only when their producers are: the
        # manifest is written after every Parquet file is final.
        return (
            inputs["counts"].pipeline
            | "Once" >> beam.Create([None])
            | "WriteManifest" >> beam.Map(write_manifest, **side)
        )
