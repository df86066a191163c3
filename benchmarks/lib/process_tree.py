"""A child process measured: its wall time, and its process tree's peak memory, sampled.

The tree's resident memory is read from ``/proc`` every half second: the
sum of RSS, and of PSS, which counts pages shared between worker processes
once. ``/usr/bin/time -v`` (GNU time), where present, gives the child's own
peak RSS and CPU seconds (``gnu_time_peak_kib``). bench_scale measures its
mining child so, and the peers' comparison each tool.

A child may write bytecode (``child_env``), whatever this environment says:
with ``PYTHONDONTWRITEBYTECODE=1`` (this VM sets it) and an environment that
``make setup`` just made (pip installs with ``--no-compile``), every child
compiled each module it imported, and bench_scale at 200k timed the compiler:
412 CPU-us an input pair against 295 once the bytecode was there.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from pathlib import Path

#: GNU time, whose ``-v`` report gives a child's peak RSS and CPU seconds.
GNU_TIME = Path("/usr/bin/time")


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        todo += _children(current)
    return pids


def _memory_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in KiB; (0, 0) once it is gone."""
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return rss, pss


class TreeSampler(threading.Thread):
    """Samples the summed RSS and PSS of a process and all its descendants until stopped."""

    def __init__(self, pid: int, interval: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_rss_kib = self.peak_pss_kib = self.peak_processes = 0
        self.timeline: list[tuple[float, int]] = []  # (unix time, summed PSS in KiB)
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            pids = _tree(self.pid)
            sizes = [_memory_kib(p) for p in pids]
            self.peak_rss_kib = max(self.peak_rss_kib, sum(s[0] for s in sizes))
            self.peak_pss_kib = max(self.peak_pss_kib, sum(s[1] for s in sizes))
            self.peak_processes = max(self.peak_processes, len(pids))
            self.timeline.append((time.time(), sum(s[1] for s in sizes)))
            self._done.wait(self.interval)

    def stop(self) -> None:
        self._done.set()
        self.join()


#: The environment variable that keeps Python from writing bytecode.
NO_BYTECODE = "PYTHONDONTWRITEBYTECODE"


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) less ``NO_BYTECODE``: a measured child writes bytecode.

    Its first run then compiles what it imports once, for every run after it.
    """
    found = dict(os.environ if env is None else env)
    found.pop(NO_BYTECODE, None)
    return found


def run_sampled(
    command: list[str],
    log_path: Path,
    timeout: float | None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[int, float, TreeSampler]:
    """Run ``command``, its output in ``log_path`` and its process tree sampled.

    Past ``timeout`` seconds it is killed. Returns its exit status, its wall
    seconds and the sampler that holds the tree's peaks and timeline. The
    child runs in ``child_env(env)``.
    """
    start = time.perf_counter()
    with log_path.open("w") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=child_env(env), cwd=cwd
        )
        sampler = TreeSampler(process.pid)
        sampler.start()
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            returncode = process.wait()
        finally:
            sampler.stop()
    return returncode, time.perf_counter() - start, sampler


def gnu_time_peak_kib(text: str) -> int | None:
    """``Maximum resident set size (kbytes)`` from ``/usr/bin/time -v``'s report."""
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    return int(match.group(1)) if match else None
