"""Read a finished paramine dataset back, checking its manifest and schema."""

from __future__ import annotations

import posixpath

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from paramine.schemas.dataset import (
    PAIRS_RENAMED_FROM,
    PAIRS_SCHEMA,
    PAIRS_SCHEMA_VERSION,
    SCORED_SCHEMA,
    SCORED_SCHEMA_VERSION,
    schema_version,
)
from paramine.schemas.errors import DatasetError
from paramine.schemas.manifest import Manifest, read_manifest


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


def to_current_pairs(table: pa.Table, version: str | None, source: str) -> pa.Table:
    """Map a pairs table of any known schema version to ``PAIRS_SCHEMA``.

    Raises:
        ValueError: The version is not one this paramine reads.
    """
    if version == PAIRS_SCHEMA_VERSION:
        return table.cast(PAIRS_SCHEMA)
    renames = PAIRS_RENAMED_FROM.get(version or "")
    if renames is None:
        known = ", ".join(repr(v) for v in [PAIRS_SCHEMA_VERSION, *PAIRS_RENAMED_FROM])
        raise ValueError(f"{source}: schema version {version!r}; this paramine reads {known}")
    table = table.rename_columns([renames.get(name, name) for name in table.column_names])
    return table.select(PAIRS_SCHEMA.names).cast(PAIRS_SCHEMA)


def read_pairs(dataset_url: str, version: int | None = None) -> tuple[pa.Table, Manifest]:
    """Read a dataset: a ``paramine mine`` directory, or a refreshed Delta table.

    Args:
        dataset_url: The dataset directory, any fsspec URL; or the root of a
            table that ``paramine refresh`` keeps (schemas/table.py).
        version: For a refreshed table, the table version to read (time
            travel); the latest by default. A mined directory has one version.

    Returns:
        The pairs as one table in ``PAIRS_SCHEMA``, and the manifest. Files of
        an older schema version are mapped to it (``pivot`` becomes
        ``pivot_sentence``).

    Raises:
        IncompleteDatasetError: The directory has no manifest.
        ValueError: A file is missing or has another schema version.
    """
    from paramine.schemas.table import is_table, read_table_pairs

    if is_table(dataset_url):
        return read_table_pairs(dataset_url, version)
    if version is not None:
        raise DatasetError(f"{dataset_url} is a mined dataset, not a refreshed table: no versions")
    manifest = read_manifest(dataset_url)
    if (
        manifest.pairs_schema_version != PAIRS_SCHEMA_VERSION
        and manifest.pairs_schema_version not in PAIRS_RENAMED_FROM
    ):
        raise ValueError(
            f"{dataset_url}: pairs schema {manifest.pairs_schema_version!r}; this paramine "
            f"reads {PAIRS_SCHEMA_VERSION!r} (and maps {', '.join(PAIRS_RENAMED_FROM)})"
        )
    tables = []
    for name in manifest.files.pairs or ():
        url = _join(dataset_url, name)
        fs, path = fsspec.core.url_to_fs(url)
        if not fs.exists(path):
            raise ValueError(f"{url} is listed in the manifest but missing; the dataset is damaged")
        table = pq.read_table(path, filesystem=fs)
        # A refreshed version may list files of older versions, in older schemas.
        tables.append(to_current_pairs(table, schema_version(table.schema), url))
    if not tables:
        return PAIRS_SCHEMA.empty_table(), manifest
    return pa.concat_tables(tables), manifest


def read_scored(dataset_url: str) -> tuple[pa.Table, Manifest]:
    """Read a mined dataset's ``scored/`` table: every prefiltered aligned pair with its score.

    Written by ``paramine mine --write-scored`` (and every pass of ``paramine
    adapt``): the cleaned, scored parallel corpus a pass read, beside the
    pairs it wrote.

    Raises:
        IncompleteDatasetError: The directory has no manifest.
        DatasetError: The run wrote no scored table, or a file of it is
            missing or of another schema version; the message says which.
    """
    manifest = read_manifest(dataset_url)
    names = manifest.files.scored
    if not names:
        raise DatasetError(
            f"{dataset_url} has no scored/ table (every prefiltered aligned pair with its "
            "score): mine it again with --write-scored"
        )
    tables = []
    for name in names:
        url = _join(dataset_url, name)
        fs, path = fsspec.core.url_to_fs(url)
        if not fs.exists(path):
            raise DatasetError(
                f"{url} is listed in the manifest but missing; the dataset is damaged"
            )
        table = pq.read_table(path, filesystem=fs)
        version = schema_version(table.schema)
        if version != SCORED_SCHEMA_VERSION:
            raise DatasetError(
                f"{url}: scored schema {version!r}; this paramine reads {SCORED_SCHEMA_VERSION!r}"
            )
        tables.append(table.cast(SCORED_SCHEMA))
    return pa.concat_tables(tables), manifest
