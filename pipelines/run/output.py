"""Where a mining run writes its dataset: checked before anything runs, swapped in when complete.

A run never writes into ``--output`` itself. ``DatasetOutput.prepare`` checks
the target first (what is there, whether paramine may replace it, whether it
can be written) and leaves nothing behind; ``start`` creates a staging folder
beside the target, ``.<name>.paramine-staging-<run id>``, marked as
paramine's by a small marker file; the pipeline writes there; ``publish``
swaps the finished dataset in, and ``abandon`` removes the staging folder of
a failed run. So a failed or killed run leaves the old dataset as it was,
and nothing in ``--output`` that stops the next run. A run that fills the
disk says so in one line (``runner_errors.disk_full_error``, ``DatasetOutput.disk_full``).

``--overwrite`` replaces only an empty folder or a dataset paramine wrote: a
folder with a paramine ``manifest.json`` and nothing else but the tables
that the manifest lists. Anything else is refused, with or without it.

Swapping in:
- Local disk: rename old -> aside, staging -> target, then delete the aside.
  Both renames are atomic; a run killed between them leaves the old dataset
  in the aside folder, and the next run puts it back first.
- Object stores (gs://, s3://, memory://): a folder "rename" is a copy and a
  delete per object, so the old dataset is deleted (its manifest first) and
  the new files moved in, the manifest last. Readers see an incomplete
  dataset (no manifest, which they refuse) during the move; a run killed in
  it leaves such an incomplete dataset, marked as paramine's, which the next
  run with ``--overwrite`` replaces.

Why it is longer than 400 lines: most of it is one class, ``DatasetOutput``,
whose steps (prepare, start, publish, abandon, recover an interrupted swap)
share the target's state; the safety of the swap is read in them together, not
in one step.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import posixpath
import shutil
import socket
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import fsspec
from paramine.schemas.errors import OutputError
from paramine.schemas.manifest import MANIFEST_NAME

log = logging.getLogger(__name__)

#: The file that marks a folder as paramine's work in progress.
STAGING_MARKER = ".paramine-staging"
#: Every paramine manifest version starts with this; older and newer ones are paramine's too.
MANIFEST_FAMILY = "paramine.manifest/"
#: Top-level entries a paramine dataset may hold besides the tables its manifest lists.
#: What a run writes at the top of a dataset: the tables, the manifest, and
#: the report, its stats and the dataset card (pipelines/report/build.py).
DATASET_ENTRIES = frozenset(
    {
        MANIFEST_NAME,
        MANIFEST_NAME + ".tmp",
        "pairs",
        "rejects",
        "scored",
        "report.html",
        "stats.json",
        "README.md",
        STAGING_MARKER,
    }
)

_STAGING_INFIX = ".paramine-staging-"
_ASIDE_INFIX = ".paramine-old-"


def normalize_output(output: str) -> str:
    """Return ``output`` as a local absolute path, or as a URL without a trailing slash.

    ``file:///abs/path`` becomes ``/abs/path``: Beam's file sinks know plain
    local paths but not the ``file://`` scheme.
    """
    text = output.strip()
    if text.startswith("file://"):
        text = text.removeprefix("file://")
    if "://" not in text and "::" not in text:
        return os.path.abspath(os.path.expanduser(text))
    scheme, _, path = text.partition("://")
    return f"{scheme}://{path.rstrip('/')}"


def _is_local(fs: fsspec.AbstractFileSystem) -> bool:
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    return "file" in protocols or "local" in protocols


def _name(path: str) -> str:
    return posixpath.basename(path.rstrip("/"))


def _entries(fs: fsspec.AbstractFileSystem, path: str) -> list[str]:
    """The names directly inside a folder."""
    return sorted({_name(p) for p in fs.ls(path, detail=False)} - {""})


def _read_json(fs: fsspec.AbstractFileSystem, path: str) -> dict[str, Any] | None:
    try:
        with fs.open(path, "r", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _owned_entries(manifest: dict[str, Any]) -> set[str]:
    """The top-level names that a dataset with this manifest wrote."""
    owned = set(DATASET_ENTRIES)
    files = manifest.get("files")
    if isinstance(files, dict):
        for names in files.values():
            for name in names if isinstance(names, list) else []:
                owned.add(str(name).split("/", 1)[0])
    return owned


@dataclass(frozen=True)
class OutputState:
    """What an output folder holds, as ``kind``, and why it is foreign, as ``detail``.

    Kinds: ``absent``; ``empty``; ``dataset`` (a paramine dataset and nothing
    else); ``interrupted`` (paramine's marker but no manifest: a publish to an
    object store that was killed); ``foreign`` (anything else, a file included).
    """

    kind: str
    detail: str = ""


def inspect_output(fs: fsspec.AbstractFileSystem, path: str) -> OutputState:
    """Say whether ``path`` is absent, empty, paramine's or somebody else's. Reads only."""
    if not fs.exists(path):
        return OutputState("absent")
    if not fs.isdir(path):
        return OutputState("foreign", "it is a file, not a folder")
    entries = _entries(fs, path)
    if not entries:
        return OutputState("empty")
    if MANIFEST_NAME in entries:
        manifest = _read_json(fs, f"{path}/{MANIFEST_NAME}")
        version = str((manifest or {}).get("manifest_version", ""))
        if manifest is None or not version.startswith(MANIFEST_FAMILY):
            return OutputState("foreign", f"its {MANIFEST_NAME} is not a paramine manifest")
        strangers = [e for e in entries if e not in _owned_entries(manifest)]
        if strangers:
            return OutputState(
                "foreign", f"it holds {', '.join(strangers[:5])}, which paramine did not write"
            )
        return OutputState("dataset")
    if STAGING_MARKER in entries:
        # A publish to an object store that was killed after the old manifest went.
        return OutputState("interrupted")
    shown = ", ".join(entries[:5]) + (", ..." if len(entries) > 5 else "")
    return OutputState("foreign", f"it holds {shown} and no paramine {MANIFEST_NAME}")


def _probe_writable(fs: fsspec.AbstractFileSystem, folder: str, local: bool) -> None:
    """Create and remove a probe in ``folder`` (its nearest existing parent on local disk)."""
    if local:
        existing = folder
        while not os.path.exists(existing):
            existing = os.path.dirname(existing)
        if not os.path.isdir(existing):
            raise OutputError(
                f"cannot create --output under {existing}: it is a file, not a folder; "
                "choose another --output"
            )
        folder = existing
    probe = f"{folder.rstrip('/')}/.paramine-probe-{uuid.uuid4().hex}"
    try:
        fs.pipe_file(probe, b"")
        fs.rm_file(probe)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise OutputError(
            f"cannot write to {folder} ({reason}): paramine builds the dataset in a folder "
            "beside --output there; make it writable or choose another --output"
        ) from error


def _check_beam_sink(url: str) -> None:
    """Refuse a URL scheme that Beam's file sinks cannot write."""
    if "://" not in url:
        return
    from apache_beam.io.filesystems import FileSystems

    try:
        FileSystems.get_filesystem(url)
    except ValueError as error:
        scheme = url.split("://", 1)[0]
        raise OutputError(
            f"--output {url}: Beam has no file system for {scheme}://; use a local path, "
            "gs:// (pip install 'apache-beam[gcp]') or s3:// (pip install 'apache-beam[aws]')"
        ) from error


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class DatasetOutput:
    """The target of one run, and the staging folder the run writes into.

    Use: ``out = DatasetOutput.prepare(output, overwrite)`` with the other
    checks, before anything runs; then ``out.start()`` and run the pipeline
    into ``out.staging``; then ``out.publish()`` on success or
    ``out.abandon()`` on failure (``with out.writing() as staging:`` does
    the three).

    Attributes:
        target: The dataset folder, normalized (a local absolute path or a URL).
        staging: The folder the run writes into, a sibling of ``target``.
        run_id: Names the staging folder; unique per run.
    """

    target: str
    staging: str
    run_id: str
    _fs: fsspec.AbstractFileSystem = field(repr=False)
    _target_path: str = field(repr=False)
    _staging_path: str = field(repr=False)
    _local: bool = field(repr=False)

    @classmethod
    def prepare(
        cls, output: str, overwrite: bool, *, run_id: str | None = None, beam_sink: bool = True
    ) -> DatasetOutput:
        """Check that a run may write ``output``; change nothing there.

        Args:
            output: ``--output``: a local path, ``file://`` URL or fsspec URL.
            overwrite: ``--overwrite``: an existing paramine dataset may be replaced.
            run_id: Names the staging folder; a fresh random id by default.
            beam_sink: The run writes through Beam's file sinks, so the URL's
                scheme must be one Beam knows (memory:// is not).

        Raises:
            OutputError: The output is somebody else's folder, a dataset
                without ``overwrite``, or cannot be written.
        """
        target = normalize_output(output)
        fs, target_path = fsspec.core.url_to_fs(target)
        target_path = target_path.rstrip("/")
        local = _is_local(fs)
        parent, name = posixpath.split(target_path)
        if not name or (not local and not parent):
            raise OutputError(
                f"--output {output} is the root of a file system or bucket; choose a folder in it"
            )
        run_id = run_id or uuid.uuid4().hex[:12]
        staging_path = posixpath.join(parent, f".{name}{_STAGING_INFIX}{run_id}")
        staging = staging_path if local else fs.unstrip_protocol(staging_path)
        out = cls(target, staging, run_id, fs, target_path, staging_path, local)
        if local:
            out._restore_interrupted_swap()
        try:
            found = inspect_output(fs, target_path)
        except OSError as error:
            raise OutputError(
                f"cannot read --output {output} ({error.strerror or type(error).__name__}); "
                "fix its permissions or choose another --output"
            ) from error
        if found.kind == "foreign":
            raise OutputError(
                f"--output {output} is not a paramine dataset ({found.detail}); paramine "
                "replaces only an empty folder or a dataset it wrote, with or without "
                "--overwrite: choose another --output"
            )
        if found.kind in ("dataset", "interrupted") and not overwrite:
            what = "a paramine dataset"
            if found.kind == "interrupted":
                what = "an unfinished paramine dataset, left by a run stopped while publishing"
            raise OutputError(
                f"--output {output} already holds {what}; pass --overwrite to replace it, "
                "or choose another --output"
            )
        if beam_sink:
            _check_beam_sink(target)
        _probe_writable(fs, parent or ".", local)
        return out

    def _siblings(self, infix: str) -> list[str]:
        """Paths beside the target named ``.<name><infix>...``."""
        parent, name = posixpath.split(self._target_path)
        prefix = f".{name}{infix}"
        if not self._fs.isdir(parent or "."):
            return []
        return [
            p.rstrip("/")
            for p in self._fs.ls(parent or ".", detail=False)
            if _name(p).startswith(prefix)
        ]

    def _aside_path(self) -> str:
        parent, name = posixpath.split(self._target_path)
        return posixpath.join(parent, f".{name}{_ASIDE_INFIX}{self.run_id}")

    def _restore_interrupted_swap(self) -> None:
        """Finish or undo a local swap that a killed run left half done."""
        for aside in self._siblings(_ASIDE_INFIX):
            if inspect_output(self._fs, aside).kind not in ("dataset", "empty"):
                continue  # not what a paramine swap sets aside: never touched
            if os.path.exists(self._target_path):
                log.info("removing %s, set aside by a run killed while publishing", aside)
                shutil.rmtree(aside)
            else:
                log.warning("restoring %s, set aside by a run killed while publishing", aside)
                os.rename(aside, self._target_path)

    def _remove_stale_staging(self) -> None:
        """Remove the staging folders that killed runs left for this target."""
        host = socket.gethostname()
        for folder in self._siblings(_STAGING_INFIX):
            marker = _read_json(self._fs, f"{folder}/{STAGING_MARKER}")
            if marker is None or marker.get("target") != self.target:
                continue  # paramine did not write it, or it is another target's
            pid = marker.get("pid")
            if (
                marker.get("host") == host
                and isinstance(pid, int)
                and pid != os.getpid()
                and _pid_alive(pid)
            ):
                continue  # a run still writing on this machine
            log.info("removing %s, left by a run that did not finish", folder)
            self._fs.rm(folder, recursive=True)

    def start(self) -> str:
        """Create the staging folder (after removing stale ones); return its URL."""
        self._remove_stale_staging()
        self._fs.makedirs(self._staging_path, exist_ok=True)
        marker = {
            "target": self.target,
            "run_id": self.run_id,
            "host": socket.gethostname(),
            "pid": os.getpid(),
        }
        self._fs.pipe_file(f"{self._staging_path}/{STAGING_MARKER}", json.dumps(marker).encode())
        return self.staging

    def publish(self) -> None:
        """Swap the finished dataset in place of the target."""
        if self._local:
            self._publish_local()
        else:
            self._publish_by_copy()

    def _publish_local(self) -> None:
        os.makedirs(os.path.dirname(self._target_path), exist_ok=True)
        aside = None
        if os.path.lexists(self._target_path):
            aside = self._aside_path()
            os.rename(self._target_path, aside)
        try:
            os.rename(self._staging_path, self._target_path)
        except OSError:
            if aside:
                os.rename(aside, self._target_path)
            raise
        os.unlink(f"{self._target_path}/{STAGING_MARKER}")
        if aside:
            shutil.rmtree(aside)

    def _publish_by_copy(self) -> None:
        fs, target, staging = self._fs, self._target_path, self._staging_path
        marker = f"{target}/{STAGING_MARKER}"
        # Marked first, so that a publish killed below leaves a folder the
        # next run knows as paramine's; the old manifest goes before the old
        # tables, so that readers refuse the folder while it changes.
        fs.pipe_file(marker, fs.cat_file(f"{staging}/{STAGING_MARKER}"))
        if fs.exists(f"{target}/{MANIFEST_NAME}"):
            fs.rm_file(f"{target}/{MANIFEST_NAME}")
        for name in _entries(fs, target):
            if name != STAGING_MARKER:
                fs.rm(f"{target}/{name}", recursive=True)
        files = [p.rstrip("/") for p in fs.find(staging, detail=False)]
        last = {f"{staging}/{MANIFEST_NAME}", f"{staging}/{STAGING_MARKER}"}
        for src in [f for f in files if f not in last]:
            fs.mv(src, target + src[len(staging) :])
        fs.mv(f"{staging}/{MANIFEST_NAME}", f"{target}/{MANIFEST_NAME}")
        fs.rm(staging, recursive=True)
        fs.rm_file(marker)

    def abandon(self) -> None:
        """Remove the staging folder of a failed run; the target stays as it was."""
        if self._fs.exists(self._staging_path):
            self._fs.rm(self._staging_path, recursive=True)

    def disk_full(self, error: OSError) -> OutputError:
        """The one-line error for a run that filled a disk; its staging folder already removed.

        Args:
            error: The ``OSError`` (ENOSPC) that stopped the run; its file
                name, when it has one, says which disk filled up.
        """
        where = str(error.filename) if error.filename else ""
        if where and not where.startswith(self._staging_path):
            place = f"writing {where}"
        else:
            place = f"writing the dataset into {self.staging}, beside --output"
        return OutputError(
            f"the disk is full (no space left on device) {place}; the unfinished dataset "
            f"was removed and --output {self.target} is as it was: free space there, or "
            "choose an --output on another disk, and run again"
        )

    @contextlib.contextmanager
    def writing(self) -> Iterator[str]:
        """Start; yield the staging URL; publish on success, abandon on any exception."""
        staging = self.start()
        try:
            yield staging
        except BaseException:
            with contextlib.suppress(OSError):
                self.abandon()
            raise
        self.publish()
