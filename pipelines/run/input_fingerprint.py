"""Fingerprints of input files: what changed since a dataset was mined."""

from __future__ import annotations

from typing import Any

import fsspec

# Keys that filesystems use for a content checksum or version, best first.
CHECKSUM_KEYS = ("md5Hash", "crc32c", "ETag", "etag", "md5", "checksum", "sha256")
MTIME_KEYS = ("mtime", "LastModified", "last_modified", "updated", "modified", "created")


def fingerprint(url: str) -> dict[str, Any]:
    """Return size, modification time and checksum (where known) of a file.

    Any fsspec URL. Cloud stores give an etag or hash; local files give size
    and mtime, which is what ``make`` trusts too.
    """
    fs, path = fsspec.core.url_to_fs(url)
    info = fs.info(path)
    result: dict[str, Any] = {"url": url, "size": int(info.get("size") or 0)}
    for key in MTIME_KEYS:
        if info.get(key) is not None:
            result["mtime"] = str(info[key])
            break
    for key in CHECKSUM_KEYS:
        if info.get(key):
            result["checksum"] = str(info[key]).strip('"')
            break
    return result
