"""Content fingerprints of model folders: what the manifest records as a revision."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from paramine.encoders.models.cache import COMPLETE_MARKER
from paramine.schemas.text_keys import sha256_hex

# Files up to this size are hashed whole into a fingerprint (configs,
# vocabularies); larger ones (weights) by size plus their first and last MiB,
# which still tells two trainings of the same architecture apart.
SMALL_FILE_BYTES = 1 << 20
SAMPLE_BYTES = 1 << 20


def _folder_chunks(fs: Any, root: str) -> Iterator[bytes]:
    for path, info in sorted(fs.find(root, detail=True).items()):
        rel = path[len(root) :].lstrip("/")
        if rel == COMPLETE_MARKER or info.get("type") == "directory":
            continue
        size = int(info.get("size") or 0)
        yield f"{rel}\0{size}\0".encode()
        with fs.open(path, "rb") as handle:
            if size <= SMALL_FILE_BYTES:
                yield handle.read()
            else:
                yield handle.read(SAMPLE_BYTES)
                handle.seek(size - SAMPLE_BYTES)
                yield handle.read(SAMPLE_BYTES)
        yield b"\n"


def folder_fingerprint(fs: Any, root: str) -> str:
    """sha256 over a folder's files: names, sizes, and content (sampled for big files).

    Args:
        fs: An fsspec filesystem.
        root: The folder's path on ``fs`` (no protocol).

    Returns:
        ``sha256:`` and 16 hex digits.
    """
    return "sha256:" + sha256_hex(_folder_chunks(fs, root.rstrip("/")))[:16]


def local_fingerprint(folder: Path) -> str:
    """:func:`folder_fingerprint` of a local folder."""
    from fsspec.implementations.local import LocalFileSystem

    return folder_fingerprint(LocalFileSystem(), str(folder))


def file_sha256(path: Path) -> str:
    """sha256 hex of a file's bytes, read in 4 MiB chunks."""
    with path.open("rb") as handle:
        return sha256_hex(iter(lambda: handle.read(1 << 22), b""))
