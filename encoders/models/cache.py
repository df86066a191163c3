"""The paramine cache: where built models live, and how a folder is built into it.

The cache lives in ``$PARAMINE_CACHE``, else ``$XDG_CACHE_HOME/paramine``,
else ``~/.cache/paramine``. Every cached folder is built in a temporary folder
beside its final name and renamed into place with a completion marker inside,
so a crash or a concurrent process never leaves a half-written model in use.

The marker's mtime records the folder's last use (``mark_used``), so that
``paramine models --prune-unused DAYS`` can remove what no run has used for a
while (``unused_folders``): nothing in the cache is pruned otherwise, and each
model version, sentence-transformers release and backend adds a folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMPLETE_MARKER = ".paramine-complete.json"
# A build takes well under a minute; temp folders this old belong to a process
# that died, and are removed by the next build of the same target.
STALE_TEMP_SECONDS = 6 * 3600
#: A folder's use is recorded at most this often: every worker of a run loads
#: the model, and a shared cache should not take a write from each.
USE_RECORD_SECONDS = 3600
#: Where in the cache paramine builds folders: the offline default and URL
#: copies, the backends' exports, and models' figures on evaluation suites
#: (``encoders.evaluation.suite_cache``).
MODELS_DIR = "models"
EXPORTS_DIR = "models/exports"
SUITES_DIR = "suites"
BUILT_FOLDERS_IN = (MODELS_DIR, EXPORTS_DIR, SUITES_DIR)


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


def mark_used(folder: Path) -> None:
    """Record that a complete cached folder is used now: its marker's mtime.

    Best effort: a read-only or shared cache whose marker cannot be touched
    is used all the same (it is only never pruned by its last use).
    """
    marker = folder / COMPLETE_MARKER
    with contextlib.suppress(OSError):
        if time.time() - marker.stat().st_mtime >= USE_RECORD_SECONDS:
            os.utime(marker)


def last_used(folder: Path) -> float:
    """When a complete cached folder was last used (its build, if never since), as epoch seconds."""
    return (folder / COMPLETE_MARKER).stat().st_mtime


def _stale_temps(parent: Path, pattern: str) -> list[Path]:
    """Temporary folders matching ``pattern`` older than ``STALE_TEMP_SECONDS``."""
    now = time.time()
    stale = []
    for path in parent.glob(pattern):
        with contextlib.suppress(FileNotFoundError):  # another process cleaned it first
            if now - path.stat().st_mtime > STALE_TEMP_SECONDS:
                stale.append(path)
    return stale


def _remove_stale_temps(parent: Path, name: str) -> None:
    for leftover in _stale_temps(parent, f".{name}.*"):
        shutil.rmtree(leftover, ignore_errors=True)


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
        mark_used(target)
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
                with contextlib.suppress(FileNotFoundError):
                    remove_folder(target)
        raise OSError(f"could not move {tmp} into place as {target}")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@dataclass(frozen=True)
class CachedFolder:
    """A complete folder of the cache: a built model, a URL copy or an export."""

    path: Path
    size: int
    last_used: float
    source: str


def _size(folder: Path) -> int:
    return sum(
        (Path(root) / name).stat().st_size for root, _, names in os.walk(folder) for name in names
    )


def _source(folder: Path) -> str:
    """What the folder was built from, as its marker says ("" if it does not say)."""
    try:
        info = json.loads((folder / COMPLETE_MARKER).read_text())
    except ValueError:
        return ""
    return str(info.get("source", "")) if isinstance(info, dict) else ""


def _cache_dirs(root: Path) -> list[Path]:
    """The folders of the cache that hold paramine's built folders."""
    return [root / sub for sub in BUILT_FOLDERS_IN if (root / sub).is_dir()]


def cached_folders(root: Path) -> list[CachedFolder]:
    """Every complete folder paramine built in the cache at ``root``, last used first.

    Only folders holding paramine's completion marker count: anything else
    under the cache is not paramine's and is never listed or removed.
    """
    found = []
    for parent in _cache_dirs(root):
        for folder in parent.iterdir():
            if folder.name.startswith(".") or not is_complete(folder):
                continue
            try:
                found.append(
                    CachedFolder(folder, _size(folder), last_used(folder), _source(folder))
                )
            except FileNotFoundError:
                continue  # removed by another process meanwhile
    return sorted(found, key=lambda f: -f.last_used)


def leftover_temps(root: Path) -> list[Path]:
    """Temporary folders of builds or removals that died, older than ``STALE_TEMP_SECONDS``."""
    return sorted(
        path
        for parent in _cache_dirs(root)
        for pattern in (".*.tmp-*", ".*.broken-*")
        for path in _stale_temps(parent, pattern)
        if path.is_dir()
    )


def remove_folder(folder: Path) -> None:
    """Remove a cached folder so that no reader ever sees part of it.

    It is first renamed aside (atomic): a run resolving it meanwhile finds it
    whole or not at all, and builds it again. A removal cut short leaves a
    ``.broken-`` folder, which ``leftover_temps`` finds later.

    Raises:
        OSError: The folder could not be moved aside (it is left as it was).
    """
    aside = folder.parent / f".{folder.name}.broken-{os.getpid()}-{time.monotonic_ns()}"
    os.rename(folder, aside)
    shutil.rmtree(aside, ignore_errors=True)


def unused_folders(root: Path, days: float) -> list[CachedFolder]:
    """The complete folders not used for ``days`` days (``mark_used``)."""
    cutoff = time.time() - days * 86400
    return [f for f in cached_folders(root) if f.last_used < cutoff]
