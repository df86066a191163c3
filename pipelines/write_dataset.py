"""WriteDataset: Parquet with explicit schemas, then the manifest, last."""

from __future__ import annotations

import posixpath
from typing import Any

import apache_beam as beam
import fsspec
import pyarrow.parquet as pq

from pipelines.accounting import counts_from_rows
from schemas.dataset import PAIRS_SCHEMA, REJECTS_SCHEMA, pair_row, reject_row
from schemas.manifest import AccountingError, Manifest, accounting_errors, write_manifest


def _num_rows(url: str) -> int:
    fs, path = fsspec.core.url_to_fs(url)
    with fs.open(path, "rb") as f:
        return pq.ParquetFile(f).metadata.num_rows


def finish_manifest(
    output: str,
    base: dict[str, Any],
    count_rows: list[tuple[str, str, int]],
    pair_files: list[str],
    reject_files: list[str],
    threshold: dict[str, Any],
) -> Manifest:
    """Check the run's books and write its manifest.

    The row counts in the Parquet footers are checked against the stages'
    counts too, so a sink that lost rows fails the run.

    Raises:
        AccountingError: The counts do not add up; no manifest is written,
            so the dataset stays marked incomplete.
    """
    counts = counts_from_rows(count_rows)
    rows = {
        "pairs": sum(_num_rows(f) for f in pair_files),
        "rejects": sum(_num_rows(f) for f in reject_files),
    }
    errors = accounting_errors(counts)
    written = counts.get("postfilter", {}).get("kept")
    if written is not None and rows["pairs"] != written:
        errors.append(f"postfilter kept {written} pairs but the Parquet files hold {rows['pairs']}")
    rejected = sum(counts.get("read", {}).get("dropped", {}).values())
    if rows["rejects"] != rejected:
        errors.append(f"read rejected {rejected} records but rejects/ holds {rows['rejects']}")
    if errors:
        raise AccountingError(
            f"the counts of the run writing {output} do not add up; no manifest was written:\n  "
            + "\n  ".join(errors)
        )
    root = output.rstrip("/")
    manifest = Manifest(
        created_at=base["created_at"],
        code_version=base["code_version"],
        options=base["options"],
        model=base["model"],
        threshold=threshold,
        inputs=base["inputs"],
        counts=counts,
        files={
            "pairs": sorted(posixpath.relpath(f, root) for f in pair_files),
            "rejects": sorted(posixpath.relpath(f, root) for f in reject_files),
        },
        rows=rows,
    )
    write_manifest(output, manifest)
    return manifest


class WriteDataset(beam.PTransform):
    """Writes pairs and rejects as Parquet, then ``manifest.json`` once both are complete.

    Applied to a dict with ``pairs`` (ParaphrasePair), ``rejects`` (Rejected),
    ``counts`` (``(stage, key, n)`` rows) and ``threshold`` (one dict).

    Args:
        output: The dataset directory, any fsspec URL.
        base: Manifest fields known when the pipeline is built (options,
            model, inputs, code version, creation time).
        num_shards: Parquet files per table; 0 lets the runner decide.
    """

    def __init__(self, output: str, base: dict[str, Any], num_shards: int = 0) -> None:
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
        reject_files = (
            inputs["rejects"]
            | "RejectRows" >> beam.Map(reject_row)
            | "WriteRejects"
            >> beam.io.WriteToParquet(
                f"{self.output}/rejects/part",
                REJECTS_SCHEMA,
                file_name_suffix=".parquet",
                num_shards=self.num_shards,
            )
        )
        output, base = self.output, self.base
        # Side inputs are complete only when their producers are: the
        # manifest is written after every Parquet file is final.
        return (
            inputs["counts"].pipeline
            | "Once" >> beam.Create([None])
            | "WriteManifest"
            >> beam.Map(
                lambda _, counts, pairs, rejects, threshold: finish_manifest(
                    output, base, counts, pairs, rejects, threshold
                ),
                counts=beam.pvalue.AsList(inputs["counts"]),
                pairs=beam.pvalue.AsList(pair_files),
                rejects=beam.pvalue.AsList(reject_files),
                threshold=beam.pvalue.AsSingleton(inputs["threshold"]),
            )
        )
