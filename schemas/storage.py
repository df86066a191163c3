"""Writing files so that a reader never sees half of one, on any fsspec filesystem."""

from __future__ import annotations

import os
import uuid

import fsspec


def _is_local(fs: fsspec.AbstractFileSystem) -> bool:
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    return "file" in protocols or "local" in protocols


def atomic_write(url: str, data: bytes | str) -> None:
    """Write ``data`` to ``url`` so that readers see the old content or the new, never a part.

    Local files: a temporary file beside the target, flushed to disk, then
    ``os.replace``, which POSIX makes atomic. Object stores (GCS, S3, memory):
    one PUT of the whole object is atomic there, and their "rename" is a copy
    plus a delete, so it is not used.

    Args:
        url: A local path or any fsspec URL.
        data: The whole content; ``str`` is written as UTF-8.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fs, path = fsspec.core.url_to_fs(url)
    if not _is_local(fs):
        fs.pipe_file(path, payload)
        return
    parent = os.path.dirname(path) or "."
    os.makedirs(parent, exist_ok=True)
    tmp = os.path.join(parent, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
