"""The dataset manifest: what a run read, kept, dropped and wrote.

``manifest.json`` is written last, after every Parquet file is complete, so a
directory without one is an incomplete dataset and readers refuse it.

Counts are kept per stage as ``{"in": n, "kept": k, "dropped": {reason: d}}``,
under the stage's name, which is also its composite's and its label's
(``PostFilter``); ``Manifest.books`` reads them typed (``schemas/run_counts.py``).
The stages themselves (name, unit, declared drop reasons) are recorded in the
manifest as the pipeline declared them (``schemas/stages.py``), and the
accounting identity is checked against that list: ``in == kept +
sum(dropped)`` for every stage, and what one stage keeps is what the next
takes in, where both count the same unit.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import fsspec
from paramine.schemas.cut_record import CutRecord
from paramine.schemas.dataset import PAIRS_SCHEMA_VERSION, REJECTS_SCHEMA_VERSION
from paramine.schemas.errors import AccountingError, DatasetError
from paramine.schemas.run_counts import RunCounts, StageCounts
from paramine.schemas.run_parts import InputRecord, ModelRecord, RunExtra
from paramine.schemas.side_checks import SideChecks, read_sides
from paramine.schemas.stages import ALIGNED_PAIR, PARAPHRASE_PAIR, Stage
from paramine.schemas.stages import accounting_errors as stage_accounting_errors
from paramine.schemas.storage import atomic_write
from paramine.schemas.written import RejectCounts, WrittenFiles, WrittenRows, present

__all__ = [
    "MANIFEST_NAME",
    "MANIFEST_VERSION",
    "AccountingError",
    "IncompleteDatasetError",
    "Manifest",
    "RunHeader",
    "accounting_errors",
    "code_version",
    "read_manifest",
    "stage_counts",
    "write_manifest",
]

MANIFEST_VERSION = "paramine.manifest/2"
MANIFEST_NAME = "manifest.json"

#: Version 1 named each stage's books by a short key of its own, and kept the
#: prefilter's rules and the runner among the options; version 2 names them
#: by the stage (its composite and label), and the options are the settings
#: alone (what a job file takes), the rest in ``extra``.
V1 = "paramine.manifest/1"
V1_STAGE_NAMES = {
    "read": "ReadBitext",
    "prefilter": "Prefilter",
    "group": "GroupByPivot",
    "contest": "ContestCandidates",
    "threshold": "ThresholdFilter",
    "coherence": "CoherenceFilter",
    "regroup": "RegroupByPivot",
    "postfilter": "PostFilter",
    "state": "RetractRows",
    "affected": "AffectedPivots",
}

#: The stages of manifests written before stages were recorded in them.
LEGACY_STAGES = (
    Stage("ReadBitext", ALIGNED_PAIR, None, "read the shards"),
    Stage("Prefilter", ALIGNED_PAIR, None, "normalize and drop pairs not worth encoding"),
    Stage("ThresholdFilter", ALIGNED_PAIR, None, "keep pairs whose score reaches the cut"),
    Stage("GroupByPivot", ALIGNED_PAIR, None, "group candidates by pivot"),
    Stage("PostFilter", PARAPHRASE_PAIR, None, "drop trivial and duplicate pairs"),
)


def from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 manifest as version 2 holds it: stages by name, settings apart from the rest."""
    rename = V1_STAGE_NAMES.get
    data = dict(data)
    data["counts"] = {rename(k, k): v for k, v in data.get("counts", {}).items()}
    data["stages"] = [{**s, "name": rename(s["name"], s["name"])} for s in data.get("stages", [])]
    options = dict(data.get("options", {}))
    extra = dict(data.get("extra", {}))
    for moved in ("filters", "runner"):
        if moved in options:
            extra[moved] = options.pop(moved)
    data.update(options=options, extra=extra, manifest_version=MANIFEST_VERSION)
    return data


class IncompleteDatasetError(DatasetError):
    """A dataset directory has no manifest: its run did not finish."""


def stage_counts(kept: int, dropped: Mapping[str, int], taken_in: int | None = None) -> dict:
    """One stage's counts as ``manifest.json`` holds them; ``in`` defaults to kept + dropped."""
    total = kept + sum(dropped.values())
    return StageCounts(total if taken_in is None else taken_in, kept, dropped).to_json()


def accounting_errors(
    counts: RunCounts | Mapping[str, Mapping[str, Any]],
    stages: list[dict[str, Any]] | tuple[Stage, ...] | None = None,
) -> list[str]:
    """Return every way in which the counts break the accounting identity.

    Args:
        counts: The run's counts, typed or as ``Manifest.counts`` holds them.
        stages: The stages as a manifest records them (or ``Stage`` objects);
            the stages of manifests that predate the record by default.

    Returns:
        Human-readable violations; empty when the books balance.
    """
    if stages is None:
        declared: tuple[Stage, ...] = LEGACY_STAGES
    else:
        declared = tuple(s if isinstance(s, Stage) else Stage.from_record(s) for s in stages)
    books = counts if isinstance(counts, RunCounts) else RunCounts.read(counts)
    return stage_accounting_errors(books, declared)


@dataclass
class Manifest:
    """Everything needed to reproduce and audit one mined dataset."""

    created_at: str
    code_version: str
    options: dict[str, Any]
    #: The model it mined with, typed (``schemas/run_parts.py``; a mapping is read into it).
    model: ModelRecord
    threshold: dict[str, Any]
    #: The shards it read.
    inputs: tuple[InputRecord, ...]
    counts: dict[str, dict[str, Any]]
    #: The files of each table, typed (``schemas/written.py``; a mapping is read into it).
    files: WrittenFiles
    #: The rows of each table.
    rows: WrittenRows
    #: Rejects per reason: ``counted`` (all, as in ``counts.read.dropped``)
    #: and ``written`` (rows in ``rejects/``, at most
    #: ``max_rejects_per_reason`` per reason and shard).
    rejects: RejectCounts = field(default_factory=RejectCounts)
    manifest_version: str = MANIFEST_VERSION
    pairs_schema_version: str = PAIRS_SCHEMA_VERSION
    rejects_schema_version: str = REJECTS_SCHEMA_VERSION
    #: Its facts that are not settings (the encoding figures, the line checks, a loop's rounds).
    extra: RunExtra = field(default_factory=RunExtra)
    #: The pipeline's stages in order, as ``Stage.to_record`` writes them.
    stages: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        # A mapping (JSON, a version-1 manifest, a test) is read into the typed parts.
        self.files = WrittenFiles.read(self.files)
        self.rows = WrittenRows.read(self.rows)
        self.rejects = RejectCounts.read(self.rejects)
        self.model = ModelRecord.read(self.model)
        self.inputs = tuple(InputRecord.read(shard) for shard in self.inputs)
        self.extra = RunExtra.read(self.extra)

    @property
    def cut(self) -> CutRecord:
        """The run's cut and how it was chosen: ``threshold`` read as a typed record."""
        return CutRecord.read(self.threshold)

    @property
    def books(self) -> RunCounts:
        """What the run counted: ``counts`` read as each stage's books and the run's notes."""
        return RunCounts.read(self.counts)

    @property
    def line_checks(self) -> dict[str, SideChecks]:
        """What the per-line checks decided of each side (``extra.line_checks``, typed)."""
        return read_sides(self.extra.line_checks)

    def accounting_errors(self) -> list[str]:
        """The accounting identity checked against the stages this run recorded."""
        return accounting_errors(self.counts, self.stages or None)

    def to_record(self) -> dict[str, Any]:
        """As JSON types in manifest.json's layout: what ``Manifest(**record)`` takes."""
        return {
            **self.__dict__,
            "files": self.files.to_json(),
            "rows": self.rows.to_json(),
            "rejects": self.rejects.to_json(),
            "model": self.model.to_json(),
            "inputs": [shard.to_json() for shard in self.inputs],
            "extra": self.extra.to_json(),
        }

    def to_json(self) -> str:
        """Return the manifest as indented JSON."""
        record = self.to_record()
        return json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "manifest") -> Manifest:
        """Parse a manifest, refusing versions this code does not know."""
        return cls.from_record(json.loads(text), source)

    @classmethod
    def from_record(cls, data: dict[str, Any], source: str = "manifest") -> Manifest:
        """A manifest from its JSON record (``to_record``; a refresh's commit holds one).

        Raises:
            DatasetError: A version this code does not know.
        """
        version = data.get("manifest_version")
        if version == V1:
            data = from_v1(data)
        elif version != MANIFEST_VERSION:
            raise DatasetError(
                f"{source}: manifest version {version!r} is not supported (this paramine "
                f"reads {MANIFEST_VERSION!r} and {V1!r}); upgrade paramine or re-mine"
            )
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def code_version() -> str:
    """The installed paramine version, as a manifest records it."""
    try:
        return "paramine " + importlib.metadata.version("paramine")
    except importlib.metadata.PackageNotFoundError:
        return "paramine (not installed)"


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RunHeader:
    """A manifest's fields that a run knows before it reads a line, built one way for every run.

    ``paramine mine`` makes one before it builds its graph and hands it to
    ``WriteDataset``; ``paramine refresh`` makes one for the version it
    commits. Both finish it with ``manifest`` once the books are in, so the
    two kinds of run write the same record.

    Attributes:
        options: The settings by field name: what decides the pairs and how
            the job ran (a job file with these keys runs the job again).
        model: The model's record (name, revision, fingerprint, prefix).
        inputs: One record per shard: its files, sizes, format, languages.
        stages: The pipeline's stages in order (``Stage.to_record``).
        extra: Run facts that are not settings (filters applied, runner ...).
        created_at: When the run started (UTC, ISO 8601, seconds).
        code_version: The paramine that ran it (``code_version``).
    """

    options: dict[str, Any]
    model: ModelRecord
    inputs: tuple[InputRecord, ...]
    stages: list[dict[str, Any]]
    extra: RunExtra = field(default_factory=RunExtra)
    created_at: str = field(default_factory=_now)
    code_version: str = field(default_factory=code_version)

    def manifest(
        self,
        *,
        threshold: dict[str, Any],
        counts: RunCounts,
        files: WrittenFiles,
        rows: WrittenRows,
        rejects: RejectCounts,
        extra: RunExtra,
    ) -> Manifest:
        """The run's manifest: this header and what the run counted and wrote.

        ``extra`` adds to the header's own (the encoding figures, the
        per-line checks, a refresh's plan).
        """
        return Manifest(
            created_at=self.created_at,
            code_version=self.code_version,
            options=self.options,
            model=self.model,
            threshold=threshold,
            inputs=self.inputs,
            counts=counts.to_json(),
            files=files,
            rows=rows,
            rejects=rejects,
            stages=self.stages,
            extra=self.extra.with_facts(**present(extra)),
        )


def manifest_url(dataset_url: str) -> str:
    """Return the URL of a dataset directory's manifest."""
    return dataset_url.rstrip("/") + "/" + MANIFEST_NAME


def read_manifest(dataset_url: str) -> Manifest:
    """Read and check the manifest of a dataset directory (any fsspec URL).

    Raises:
        IncompleteDatasetError: The directory has no manifest.
        ValueError: The manifest's version is unknown.
    """
    url = manifest_url(dataset_url)
    fs, path = fsspec.core.url_to_fs(url)
    if not fs.exists(path):
        raise IncompleteDatasetError(
            f"{dataset_url} has no {MANIFEST_NAME}: the run that wrote it did not finish "
            "(or this is not a paramine dataset); mine it again"
        )
    with fs.open(path, "r", encoding="utf-8") as f:
        return Manifest.from_json(f.read(), source=url)


def write_manifest(dataset_url: str, manifest: Manifest) -> str:
    """Write the manifest atomically where the filesystem allows; return its URL."""
    url = manifest_url(dataset_url)
    atomic_write(url, manifest.to_json())
    return url
