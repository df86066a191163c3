"""The workers' side of local progress: readers and books count into a small file.

Beam's metrics are only visible once a FnApiRunner run has finished, and in
multi-process mode the readers run in other processes, so progress travels
through a small file instead. The launcher (``paramine.pipelines.run.progress``)
names it in the pipeline's options (``--paramine_progress_file``,
``paramine.pipelines.core.accounting.ProgressOptions``); the stages that count
read the option while the graph is built (``progress_file``) and carry the
path to the workers inside their DoFns, on any runner. This module imports
no Beam: the readers use it. Readers count what they read: ``ReadBitext`` counts
pairs, and the bytes of every input file opened while it reads a shard
(``Tap.reading``, ``count_reads``); each stage's books (``CountStage``) count
what the stage lets out, as ``"@<stage> <n> <unit>\\n"`` lines, so the
launcher can say which stage is running after reading is done, and how far
it is. Each process appends ``"<bytes> <pairs>\\n"`` deltas to the file, at
most a few times a second; appends this short are atomic, so many processes
can share the file without a lock.

Where the option is not set (a graph built by a test, a run on Dataflow,
Spark or Flink) or the file is not there (a worker on another machine) every
tap is a no-op.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

#: Most seconds a worker holds counts before appending them.
FLUSH_SECONDS = 0.5


class Tap:
    """Counts bytes and pairs read in one process and appends them to the progress file.

    Args:
        path: The progress file, or ``""`` for a tap that counts nothing.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._bytes = 0
        self._pairs = 0
        self._stages: dict[tuple[str, str], int] = {}
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self.path)

    def add(self, nbytes: int = 0, pairs: int = 0) -> None:
        """Count ``nbytes`` input bytes and ``pairs`` aligned pairs read."""
        if not self.path:
            return
        with self._lock:
            self._bytes += nbytes
            self._pairs += pairs
        if time.monotonic() - self._last >= FLUSH_SECONDS:
            self.flush()

    def add_out(self, stage: str, unit: str, n: int = 1) -> None:
        """Count ``n`` records (of ``unit``) that ``stage`` let out."""
        if not self.path:
            return
        key = (stage, unit)
        with self._lock:
            self._stages[key] = self._stages.get(key, 0) + n
        if time.monotonic() - self._last >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Append what was counted since the last flush."""
        if not self.path:
            return
        with self._lock:
            nbytes, pairs, stages = self._bytes, self._pairs, self._stages
            self._bytes = self._pairs = 0
            self._stages = {}
            self._last = time.monotonic()
        lines = [f"{nbytes} {pairs}\n"] if nbytes or pairs else []
        lines += [f"@{stage} {n} {unit}\n" for (stage, unit), n in stages.items()]
        if not lines:
            return
        try:
            # One short O_APPEND write: atomic between processes on local disks.
            # No O_CREAT: a worker where the launcher's file is not (another
            # machine, a run that is over) counts nothing.
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, "".join(lines).encode())
            finally:
                os.close(fd)
        except OSError:
            # Progress must never fail a run.
            self.path = ""

    @contextmanager
    def reading(self) -> Iterator[Tap]:
        """Count the bytes of every input file opened in this thread until the block ends."""
        token = _reading.set(self)
        try:
            yield self
        finally:
            _reading.reset(token)


_taps: dict[str, Tap] = {}


_taps_lock = threading.Lock()


_NO_TAP = Tap("")


#: The tap that ``count_reads`` counts into: the one of the shard being read in this thread.
_reading: contextvars.ContextVar[Tap] = contextvars.ContextVar("paramine_reading", default=_NO_TAP)


def tap_for(path: str) -> Tap:
    """This process's tap of the progress file ``path``; a no-op tap for ``""``.

    One tap per file and process, shared by the DoFns that count into it, so
    their counts go out together, a few times a second.
    """
    if not path:
        return _NO_TAP
    tap = _taps.get(path)
    if tap is None:
        with _taps_lock:
            tap = _taps.setdefault(path, Tap(path))
    return tap


class _CountingReader:
    """A file object that counts the bytes read through it on a tap."""

    def __init__(self, raw: IO[bytes], tap: Tap) -> None:
        self._raw = raw
        self._tap = tap

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self._tap.add(len(data))
        return data

    def read1(self, size: int = -1) -> bytes:
        read1 = getattr(self._raw, "read1", self._raw.read)
        data = read1(size)
        self._tap.add(len(data))
        return data

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)  # type: ignore[attr-defined]
        self._tap.add(n or 0)
        return n

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._raw)


def count_reads(raw: IO[bytes]) -> IO[bytes]:
    """Return ``raw``, counting the (still compressed) bytes read from it while a shard is read.

    Readers wrap the raw file right after opening it, so the count is of the
    bytes on disk, the same unit as the input files' sizes. Outside
    ``Tap.reading`` (resolving the inputs, a graph without progress) it
    returns ``raw`` itself.
    """
    tap = _reading.get()
    if not tap:
        return raw
    return _CountingReader(raw, tap)  # type: ignore[return-value]
