"""The workers' side of local progress: readers count bytes and pairs read into a small file.

Beam's metrics are only visible once a FnApiRunner run has finished, and in
multi-process mode the readers run in other processes, so progress travels
through a small file instead. The launcher (``paramine.pipelines.run.progress``)
creates it and names it in the environment variable ``PARAMINE_PROGRESS_FILE``
before the pipeline starts; worker processes inherit the variable. Readers
count what they read (``worker_tap()``, ``count_reads``) and append
``"<bytes> <pairs>\\n"`` deltas to the file, at most a few times a second;
appends this short are atomic, so many processes can share the file without
a lock. Each stage's books (``CountStage``) also count what the stage lets
out, as ``"@<stage> <n> <unit>\\n"`` lines, so the launcher can say which
stage is running after reading is done, and how far it is.

Where the variable is not set (Dataflow, Spark, Flink workers, or a run
without progress) every tap is a no-op that costs one dict lookup.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

#: The environment variable that names the progress file of the current run.
PROGRESS_ENV = "PARAMINE_PROGRESS_FILE"


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
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, "".join(lines).encode())
            finally:
                os.close(fd)
        except OSError:
            # The run is over (file removed) or progress is not wanted here:
            # progress must never fail a run.
            self.path = ""


_taps: dict[str, Tap] = {}


_taps_lock = threading.Lock()


_NO_TAP = Tap("")


def worker_tap() -> Tap:
    """The tap of the current run in this process; a no-op tap when there is none."""
    path = os.environ.get(PROGRESS_ENV, "")
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
    """Return ``raw``, counting the (still compressed) bytes read from it when a run shows progress.

    Readers wrap the raw file right after opening it, so the count is of the
    bytes on disk, the same unit as the input files' sizes.
    """
    tap = worker_tap()
    if not tap:
        return raw
    return _CountingReader(raw, tap)  # type: ignore[return-value]
