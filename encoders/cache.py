"""The paramine cache: where built models live, and how a folder is built into it.

The cache lives in ``$PARAMINE_CACHE``, else ``$XDG_CACHE_HOME/paramine``,
else ``~/.cache/paramine``. Every cached folder is built in a temporary folder
beside its final name and renamed into place with a completion marker inside,
so a crash or a concurrent process never leaves a half-written model in use.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

COMPLETE_MARKER = ".paramine-complete.json"
# A build takes well under a minute; temp folders this old belong to a process
# that died, and are removed by the next build of the same target.
STALE_TEMP_SECONDS = 6 * 3600


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The paramine cache: ``cache_dir``, ``$PARAMINE_CACHE``, ``$XDG_CACHE_HOME/paramine``
    or ``~/.cache/paramine``, in that order."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    if os.environ.get("PARAMINE_CACHE"):
        return Path(os.environ["PARAMINE_CACHE"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "paramine"
    return Path.home() / ".cache" / "paramine"


def is_complete(folder: Path) -> bool:
    """Whether ``folder`` was fully built: only then does it hold the marker."""
    return (folder / COMPLETE_MARKER).is_file()


def _remove_stale_temps(parent: Path, name: str) -> None:
    now = time.time()
    for leftover in parent.glob(f".{name}.*"):
        try:
            if now - leftover.stat().st_mtime > STALE_TEMP_SECONDS:
                shutil.rmtree(leftover, ignore_errors=True)
        except FileNotFoundError:
            pass  # another process cleaned it first


def atomic_build(target: Path, build: Callable[[Path], dict[str, Any]]) -> Path:
    """Build ``target`` once, atomically: ``build(tmp)`` fills a temp folder beside it.

    The temp folder gets the completion marker (holding what ``build``
    returns) and is then renamed to ``target``. If another process renamed its
    copy first, that copy is used and ours is dropped. A ``target`` without the
    marker (left by something other than this function) is replaced.

    Returns:
        ``target``, complete.
    """
    if is_complete(target):
        return target
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(parent, target.name)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=parent))
    # mkdtemp makes the folder private (0700); a cache may be shared by a team.
    tmp.chmod(0o755)
    try:
        info = build(tmp)
        marker = {"built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **info}
        # No atomic_write here: the whole folder becomes visible at once by the rename below.
        (tmp / COMPLETE_MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        for _attempt in range(3):
            try:
                os.rename(tmp, target)  # atomic; replaces an empty target folder too
                return target
            except OSError:
                if is_complete(target):  # lost the race to an equal copy: use it
                    shutil.rmtree(tmp, ignore_errors=True)
                    return target
                if not target.exists():
                    raise
                # An incomplete folder blocks the name: move it aside, then retry.
                aside = parent / f".{target.name}.broken-{os.getpid()}-{time.monotonic_ns()}"
                with contextlib.suppress(FileNotFoundError):
                    os.rename(target, aside)
                shutil.rmtree(aside, ignore_errors=True)
        raise OSError(f"could not move {tmp} into place as {target}")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
