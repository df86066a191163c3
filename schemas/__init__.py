"""Record contracts, versioned Parquet schemas and the dataset manifest.

``read_pairs(URL, version=None)`` reads any paramine dataset: a mined
directory, or a refreshed table at its latest or a given version
(``paramine.schemas.reader.read_pairs``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["read_pairs"]


def __getattr__(name: str) -> Any:
    # Lazy: ``paramine mine --help`` imports paramine.schemas.errors, and must
    # not pay for pyarrow.
    if name == "read_pairs":
        from paramine.schemas.reader import read_pairs

        return read_pairs
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
