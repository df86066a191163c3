"""One measured command: wall time, CPU seconds, peak memory and processes of a child.

Every tool that bench_peers compares runs in a process of its own, so that
what each costs is its own: the interpreter, its imports, its work and its
output. The figures:

- wall: seconds from start to exit;
- CPU: user + system seconds of the process and the children it waited for
  (GNU time's report; ``getrusage`` of children where GNU time is missing);
- peak RSS: GNU time's maximum resident set size of the process;
- the process tree's peak (summed RSS, summed PSS, number of processes),
  sampled from ``/proc`` every half second (``process_tree.TreeSampler``),
  which says whether a tool used more than one process;
- CPU / wall: the share of one core it used. On this 2-core machine, shared
  with other jobs, a single-process tool shows at most about 1.0.
"""

from __future__ import annotations

import re
import resource
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.lib.process_tree import GNU_TIME, gnu_time_peak_kib, run_sampled


@dataclass
class Measured:
    """What one command cost; see the module's docstring."""

    command: list[str]
    returncode: int
    wall_s: float
    cpu_s: float
    peak_rss_kib: int
    tree_peak_pss_kib: int
    tree_peak_processes: int
    log: str

    @property
    def core_share(self) -> float:
        """CPU seconds per wall second."""
        return self.cpu_s / self.wall_s if self.wall_s else 0.0

    def as_dict(self) -> dict:
        """The figures as JSON-ready values, the core share included."""
        return {**asdict(self), "core_share": self.core_share}


def _gnu_time_cpu(text: str) -> float | None:
    user = re.search(r"User time \(seconds\): ([\d.]+)", text)
    system = re.search(r"System time \(seconds\): ([\d.]+)", text)
    if not (user and system):
        return None
    return float(user.group(1)) + float(system.group(1))


def _wall(text: str) -> float | None:
    """GNU time's ``Elapsed (wall clock) time``, ``h:mm:ss`` or ``m:ss.ss``, in seconds."""
    match = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text)
    if not match:
        return None
    seconds = 0.0
    for part in match.group(1).split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def finished(command: list[str], log: Path) -> Measured | None:
    """The figures of an earlier run of ``command`` whose GNU time report says it exited 0.

    For ``--reuse``: the process tree was not sampled then, so its figures are 0.
    """
    time_path = log.with_suffix(".time")
    if not time_path.exists():
        return None
    report = time_path.read_text()
    status = re.search(r"Exit status: (\d+)", report)
    wall, cpu, peak = _wall(report), _gnu_time_cpu(report), gnu_time_peak_kib(report)
    if not status or status.group(1) != "0" or wall is None or cpu is None or peak is None:
        return None
    return Measured(command, 0, wall, cpu, peak, 0, 0, str(log))


def run_measured(
    command: list[str],
    log: Path,
    timeout: float = 3 * 3600,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    reuse: bool = False,
) -> Measured:
    """Run ``command`` with its output in ``log``; return what it cost.

    A command that runs past ``timeout`` seconds is killed (its figures are
    then those of the killed run, with a non-zero return code). With
    ``reuse``, a finished earlier run's figures (``finished``) are returned
    instead of running it again.
    """
    if reuse:
        earlier = finished(command, log)
        if earlier is not None:
            return earlier
    time_path = log.with_suffix(".time")
    wrapped = (
        [str(GNU_TIME), "-v", "-o", str(time_path), *command] if GNU_TIME.exists() else command
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    returncode, wall, sampler = run_sampled(wrapped, log, timeout, env=env, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = peak = None
    if time_path.exists():
        report = time_path.read_text()
        cpu, peak = _gnu_time_cpu(report), gnu_time_peak_kib(report)
    if cpu is None:
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return Measured(
        command=command,
        returncode=returncode,
        wall_s=wall,
        cpu_s=cpu,
        peak_rss_kib=peak or after.ru_maxrss,
        # The tree's figures: with GNU time in front, its own small process is counted too.
        tree_peak_pss_kib=sampler.peak_pss_kib,
        tree_peak_processes=sampler.peak_processes - (1 if GNU_TIME.exists() else 0),
        log=str(log),
    )
