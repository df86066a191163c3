"""WriteSummary: what a refresh's Beam job hands its launcher, as one JSON file.

The launcher (refresh/update.py) reads it once the job has run: the counts
it checks and records, the threshold, the files written to both tables and
the rejects, and the prefilter's record of each side's lines.
"""

from __future__ import annotations

import json
from typing import Any

import apache_beam as beam
import fsspec


class WriteSummary(beam.PTransform):
    """Writes the job's summary once everything it names is written.

    Args:
        url: Where the summary goes (``_paramine/runs/<run>/summary.json``).
        counts: The job's count rows.
        threshold: One record: the cut and how it was chosen.
        reject_files: The rejects files written.
        written_rejects: ``(reason, rows)`` written to them.
        state_files: The state table's new files.
        pair_files: The pairs table's new files.
        sides: One dict: the prefilter's record of each side
            (``stages.filter.rules.line_check_record.run_record``).
    """

    def __init__(
        self,
        url: str,
        counts: beam.PCollection,
        threshold: beam.PCollection,
        reject_files: beam.PCollection,
        written_rejects: beam.PCollection,
        state_files: beam.PCollection,
        pair_files: beam.PCollection,
        sides: beam.PCollection,
    ) -> None:
        super().__init__()
        self.url = url
        self.side = {
            "counts": beam.pvalue.AsList(counts),
            "threshold": beam.pvalue.AsSingleton(threshold),
            "rejects": beam.pvalue.AsList(reject_files),
            "written": beam.pvalue.AsList(written_rejects),
            "state": beam.pvalue.AsList(state_files),
            "pairs": beam.pvalue.AsList(pair_files),
            "line_checks": beam.pvalue.AsSingleton(sides),
        }

    def expand(self, pbegin: beam.pvalue.PBegin) -> beam.PCollection:
        url = self.url

        def write_summary(_: None, **side: Any) -> str:
            record = {
                "counts": [list(row) for row in side["counts"]],
                "threshold": side["threshold"],
                "rejects": {
                    "files": sorted(side["rejects"]),
                    "written": dict(sorted(side["written"])),
                },
                "files": {"state": sorted(side["state"]), "pairs": sorted(side["pairs"])},
                "line_checks": side["line_checks"],
            }
            with fsspec.open(url, "w", encoding="utf-8") as handle:
                json.dump(record, handle, sort_keys=True)
            return url

        return (
            pbegin | "Once" >> beam.Create([None]) | "Write" >> beam.Map(write_summary, **self.side)
        )
