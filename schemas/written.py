"""What a run wrote, as its manifest records it: the files of each table, their rows, its rejects.

Typed parts of ``Manifest`` (``rows``, ``files``, ``rejects``), read from and
written to the manifest's JSON with the layout unchanged: a part a run did
not write (a refresh writes no ``files.pairs``: its pairs are in the Delta
table) is absent from the JSON, ``None`` here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from paramine.schemas.errors import DatasetError


def known_keys(cls: type, record: Mapping[str, Any], part: str) -> None:
    """Refuse a manifest part holding a key that ``cls`` does not declare (a newer paramine's)."""
    unknown = set(record) - {f.name for f in fields(cls)}
    if unknown:
        raise DatasetError(
            f"manifest {part}: {', '.join(sorted(map(str, unknown)))} unknown to this paramine; "
            "upgrade paramine to read it"
        )


def present(record: Any) -> dict[str, Any]:
    """A dataclass's fields that are not ``None``: the keys a part writes."""
    return {f.name: value for f in fields(record) if (value := getattr(record, f.name)) is not None}


@dataclass(frozen=True)
class WrittenRows:
    """Rows written: ``manifest.rows``.

    Attributes:
        pairs: Paraphrase pairs in the dataset (a refresh: in the table after it).
        rejects: Rows in ``rejects/`` (at most ``max_rejects_per_reason`` per reason and shard).
        scored: Rows in ``scored/`` (``--write-scored``).
        pair_rows_added: A refresh: pair rows it wrote.
        pair_rows_removed: A refresh: pair rows it replaced.
    """

    pairs: int = 0
    rejects: int | None = None
    scored: int | None = None
    pair_rows_added: int | None = None
    pair_rows_removed: int | None = None

    def to_json(self) -> dict[str, int]:
        """The rows as the manifest writes them: only what the run wrote (pairs always)."""
        return present(self)

    @classmethod
    def read(cls, record: WrittenRows | Mapping[str, Any]) -> WrittenRows:
        """The typed rows of a manifest's ``rows``.

        Raises:
            DatasetError: A key this code does not know.
        """
        if isinstance(record, WrittenRows):
            return record
        known_keys(cls, record, "rows")
        return cls(**{name: int(value) for name, value in record.items()})


@dataclass(frozen=True)
class WrittenFiles:
    """The dataset's files of each table, relative to its folder: ``manifest.files``.

    ``None``: the run wrote no such table (a refresh's pairs are in its Delta table).
    """

    pairs: tuple[str, ...] | None = None
    rejects: tuple[str, ...] | None = None
    scored: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, list[str]]:
        """The files as the manifest writes them (lists)."""
        return {name: list(paths) for name, paths in present(self).items()}

    @classmethod
    def read(cls, record: WrittenFiles | Mapping[str, Any]) -> WrittenFiles:
        """The typed files of a manifest's ``files``.

        Raises:
            DatasetError: A table this code does not know.
        """
        if isinstance(record, WrittenFiles):
            return record
        known_keys(cls, record, "files")
        return cls(**{name: tuple(map(str, paths)) for name, paths in record.items()})


@dataclass(frozen=True)
class RejectCounts:
    """Rejects per reason: ``manifest.rejects``; ``None`` where the manifest records none.

    Attributes:
        counted: Every reject, per reason (as in the read stage's books).
        written: Rows of each reason in ``rejects/``.
    """

    counted: dict[str, int] | None = None
    written: dict[str, int] | None = None

    def to_json(self) -> dict[str, dict[str, int]]:
        """The rejects as the manifest writes them."""
        return {name: dict(by_reason) for name, by_reason in present(self).items()}

    @classmethod
    def read(cls, record: RejectCounts | Mapping[str, Any]) -> RejectCounts:
        """The typed rejects of a manifest's ``rejects``.

        Raises:
            DatasetError: A key other than ``counted`` and ``written``.
        """
        if isinstance(record, RejectCounts):
            return record
        known_keys(cls, record, "rejects")
        return cls(
            **{
                name: {str(reason): int(n) for reason, n in by_reason.items()}
                for name, by_reason in record.items()
            }
        )
