"""The dataset manifest: what a run read, kept, dropped and wrote.

``manifest.json`` is written last, after every Parquet file is complete, so a
directory without one is an incomplete dataset and readers refuse it.

Counts are kept per stage as ``{"in": n, "kept": k, "dropped": {reason: d}}``.
The accounting identity is ``in == kept + sum(dropped)`` for every stage, and
the stages chain: what one stage keeps is what the next one takes in, except
where the unit changes (candidates become pairs in MakePairs).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import fsspec

from schemas.dataset import PAIRS_SCHEMA_VERSION, REJECTS_SCHEMA_VERSION

MANIFEST_VERSION = "paramine.manifest/1"
MANIFEST_NAME = "manifest.json"

#: Stages whose unit is one aligned pair (or candidate), in pipeline order.
ALIGNED_STAGES = ("read", "prefilter", "threshold", "group")
#: Stages whose unit is one paraphrase pair.
PAIR_STAGES = ("postfilter",)
STAGES = ALIGNED_STAGES + PAIR_STAGES


class IncompleteDatasetError(RuntimeError):
    """A dataset directory has no manifest: its run did not finish."""


class AccountingError(RuntimeError):
    """A run's counts do not add up: records were lost or counted twice."""


def stage_counts(kept: int, dropped: Mapping[str, int], taken_in: int | None = None) -> dict:
    """Return one stage's counts; ``in`` defaults to kept + dropped."""
    total = kept + sum(dropped.values())
    return {
        "in": total if taken_in is None else taken_in,
        "kept": kept,
        "dropped": dict(sorted(dropped.items())),
    }


def accounting_errors(counts: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Return every way in which the counts break the accounting identity.

    Args:
        counts: Per-stage counts, as in ``Manifest.counts``.

    Returns:
        Human-readable violations; empty when the books balance.
    """
    errors = []
    for stage in STAGES:
        if stage not in counts:
            errors.append(f"stage {stage!r} has no counts")
            continue
        c = counts[stage]
        dropped = sum(c["dropped"].values())
        if c["in"] != c["kept"] + dropped:
            errors.append(
                f"{stage}: in={c['in']} but kept={c['kept']} + dropped={dropped} "
                f"({c['dropped']}) = {c['kept'] + dropped}"
            )
    for before, after in itertools.pairwise(ALIGNED_STAGES):
        if before in counts and after in counts and counts[before]["kept"] != counts[after]["in"]:
            errors.append(
                f"{before} kept {counts[before]['kept']} but {after} took in {counts[after]['in']}"
            )
    return errors


@dataclass
class Manifest:
    """Everything needed to reproduce and audit one mined dataset."""

    created_at: str
    code_version: str
    options: dict[str, Any]
    model: dict[str, Any]
    threshold: dict[str, Any]
    inputs: list[dict[str, Any]]
    counts: dict[str, dict[str, Any]]
    files: dict[str, list[str]]
    rows: dict[str, int]
    manifest_version: str = MANIFEST_VERSION
    pairs_schema_version: str = PAIRS_SCHEMA_VERSION
    rejects_schema_version: str = REJECTS_SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """Return the manifest as indented JSON."""
        return json.dumps(self.__dict__, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "manifest") -> Manifest:
        """Parse a manifest, refusing versions this code does not know."""
        data = json.loads(text)
        version = data.get("manifest_version")
        if version != MANIFEST_VERSION:
            raise ValueError(
                f"{source}: manifest version {version!r} is not supported "
                f"(this paramine reads {MANIFEST_VERSION!r}); upgrade paramine or re-mine"
            )
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


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
    fs, path = fsspec.core.url_to_fs(url)
    tmp = path + ".tmp"
    with fs.open(tmp, "w", encoding="utf-8") as f:
        f.write(manifest.to_json())
    fs.mv(tmp, path)
    return url
