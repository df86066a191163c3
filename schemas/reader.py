"""Read a finished paramine dataset back, checking its manifest and schema."""

from __future__ import annotations

import posixpath

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from schemas.dataset import PAIRS_SCHEMA, PAIRS_SCHEMA_VERSION, schema_version
from schemas.manifest import Manifest, read_manifest


def _join(dataset_url: str, name: str) -> str:
    """Join a manifest's relative file name to the dataset URL.

    Names may climb out of the dataset (a refreshed version lists the
    carried-over files of an older one as ``../v=.../pairs/...``); object
    stores do not resolve ``..``, so the path is normalized here.
    """
    protocol, sep, path = f"{dataset_url.rstrip('/')}/{name}".partition("://")
    if not sep:
        return posixpath.normpath(protocol)
    return f"{protocol}{sep}{posixpath.normpath(path)}"


def read_pairs(dataset_url: str) -> tuple[pa.Table, Manifest]:
    """Read every pairs file that a dataset's manifest lists.

    Args:
        dataset_url: The dataset directory, any fsspec URL.

    Returns:
        The pairs as one table in ``PAIRS_SCHEMA``, and the manifest.

    Raises:
        IncompleteDatasetError: The directory has no manifest.
        ValueError: A file is missing or has another schema version.
    """
    manifest = read_manifest(dataset_url)
    if manifest.pairs_schema_version != PAIRS_SCHEMA_VERSION:
        raise ValueError(
            f"{dataset_url}: pairs schema {manifest.pairs_schema_version!r}; this paramine "
            f"reads {PAIRS_SCHEMA_VERSION!r}"
        )
    tables = []
    for name in manifest.files.get("pairs", []):
        url = _join(dataset_url, name)
        fs, path = fsspec.core.url_to_fs(url)
        if not fs.exists(path):
            raise ValueError(f"{url} is listed in the manifest but missing; the dataset is damaged")
        table = pq.read_table(path, filesystem=fs)
        version = schema_version(table.schema)
        if version != PAIRS_SCHEMA_VERSION:
            raise ValueError(
                f"{url}: schema version {version!r}, expected {PAIRS_SCHEMA_VERSION!r}"
            )
        tables.append(table.cast(PAIRS_SCHEMA))
    if not tables:
        return PAIRS_SCHEMA.empty_table(), manifest
    return pa.concat_tables(tables), manifest
