"""Stable hashes: the same value on every worker, process and run.

Python's ``hash()`` of a string changes between processes, so every id,
sampling decision and fingerprint that must not depend on the worker goes
through these.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

# Joins parts so that ("ab", "c") and ("a", "bc") hash differently.
_SEPARATOR = "\x1f"


def stable_hash(*parts: str) -> int:
    """A 64-bit hash of ``parts`` (blake2b), the same on every machine and run."""
    digest = hashlib.blake2b(_SEPARATOR.join(parts).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def hash_fraction(*parts: str) -> float:
    """A stable number in [0, 1) for ``parts``: for samples and splits by hash."""
    return stable_hash(*parts) / 2**64


def sha256_hex(chunks: Iterable[bytes]) -> str:
    """The sha256 hex digest of a stream of byte chunks."""
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()


def text_digest(text: str, length: int = 16) -> str:
    """The first ``length`` hex digits of the sha256 of ``text``: short names for cache keys."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]
