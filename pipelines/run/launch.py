"""Running a built paramine graph: what ``paramine mine`` and ``paramine refresh`` share.

``GraphRun`` is one Beam run on a checked deployment, a context manager:

- the pipeline, made with the deployment's Beam flags and, where the workers
  share this machine's disk, the local progress file's name
  (``RunProgress.beam_args``), which the counting stages read while the
  graph is built;
- SIGTERM and SIGINT stop the run (``Stopped``, raised in the main thread
  wherever it is), and each command turns that into its own
  ``RunInterrupted`` after undoing what it wrote; ``hold()`` ignores them
  once the run is past the point of undoing;
- ``run()``: the local run's progress (``RunProgress``) and the collector
  set for bulk work (``bulk_run``) around ``pipeline.run()``;
- on exit, the folder Beam made for the pipeline is removed (Beam removes
  it only when the pipeline ran to its end or failed inside ``run()``).

What differs stays with the command: ``paramine mine`` writes a staging
folder and swaps it in; ``paramine refresh`` commits to its Delta tables.

Python's cyclic garbage collector during a run (``bulk_run``) makes fewer
passes over what the runner holds. Beam's in-process runner (FnApiRunner,
the local default) keeps a run's shuffles as Python objects in the
launching process: at a million subtitle
pairs, the duplicate search alone holds about 740,000 entries, each a tuple
of tuples and strings. With Python's default thresholds (700, 10, 10) the
collector ran 30 full collections in such a run, each walking every object
alive, and 9.7 of its 70 CPU-seconds were collections (docs/results.md).
A run's pairs do not depend on when the collector runs.

``bulk_run`` moves what exists when the run starts (the imported modules,
about 590,000 objects) out of the collector's reach with ``gc.freeze``, and
raises the youngest generation's threshold from 700 to 100,000 (the same 1M
run then made 31 young, 2 middle and no full collections, 1.7 s in all);
both are restored when the run ends, so a process that
mines or refreshes from Python (``run.mine.run``, ``refresh.update.refresh``)
gets its collector back as it was. Garbage
in reference cycles is still collected, later.

Only the launching process is tuned: the workers of
``--direct_running_mode multi_processing`` and of remote runners keep their
own defaults.
"""

from __future__ import annotations

import contextlib
import gc
import shutil
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING, Any, TextIO

from paramine.pipelines.run import beam_memos
from paramine.pipelines.run.deploy import DATAFLOW
from paramine.pipelines.run.progress import RunProgress

if TYPE_CHECKING:
    from paramine.pipelines.run.deploy import Deployment

#: Allocations (less deallocations) between two collections of the youngest
#: generation; the older generations' thresholds are Python's defaults.
YOUNGEST_THRESHOLD = 100_000


@contextlib.contextmanager
def bulk_run() -> Iterator[None]:
    """Inside, the collector leaves alone what existed before and runs less often."""
    thresholds = gc.get_threshold()
    # The young generations first: garbage frozen now would live until the run ends. Not a
    # full collection, which walks every object alive (0.6 s in a test process that has
    # imported torch): what survived two collections before a run is rarely garbage.
    gc.collect(1)
    gc.freeze()
    gc.set_threshold(YOUNGEST_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


class Stopped(BaseException):
    """Raised by the signal handler; not an ``Exception``, so no ``except Exception`` holds it."""


class StopOnSignals:
    """SIGTERM and SIGINT stop the run, for the length of a ``with`` block.

    The handler raises ``Stopped`` in the main thread, wherever it is (inside
    Beam's in-process runner, most likely); the ``with`` blocks it unwinds
    through remove what the run made, and the command turns it into a
    ``RunInterrupted``. Further signals are ignored while that cleanup runs,
    and so is one that arrives after ``hold()``. The handlers that were there
    before are restored on exit. Outside the main thread (where Python cannot
    install handlers) nothing changes.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.stopped_by: int | None = None
        self._holding = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopOnSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                # A signal this process was started ignoring (SIGINT in a
                # background job, under nohup) stays ignored, as Python does.
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._previous.items():
            # None: a handler not set from Python; the default is what it did.
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        self._previous = {}

    def hold(self) -> None:
        """From now on a signal is ignored: the run is past the point of undoing."""
        self._holding = True

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._holding or self.stopped_by is not None:
            return
        self.stopped_by = signum
        raise Stopped(signal.Signals(signum).name)


class GraphRun:
    """One Beam run of a paramine graph: its pipeline, signals, progress and Beam's temp folder.

    Args:
        deployment: The checked runner and Beam flags.
        total_bytes: Size of the input files read, for the progress (0: unknown).
        quiet: Show no progress.
        test_pipeline: A pipeline to build into instead of a new one (tests);
            it gets no progress file, and its folder is the test's to remove.
        stream: Where the progress is drawn; the real stderr by default.
    """

    def __init__(
        self,
        deployment: Deployment,
        total_bytes: int,
        quiet: bool = False,
        test_pipeline: Any = None,
        stream: TextIO | None = None,
    ) -> None:
        self.deployment = deployment
        self.progress = RunProgress(total_bytes, quiet=quiet, stream=stream)
        self.signals = StopOnSignals()
        self._given = test_pipeline
        self._pipeline: Any = test_pipeline

    @property
    def stopped_by(self) -> int | None:
        """The signal that stopped the run; ``None`` if none did."""
        return self.signals.stopped_by

    @property
    def pipeline(self) -> Any:
        """The pipeline to build the graph into, made when first asked for (inside the block)."""
        if self._pipeline is None:
            import apache_beam as beam
            from apache_beam.options.pipeline_options import PipelineOptions

            beam_memos.install()
            # Dataflow's workers are other machines, where no such file is.
            deployment = self.deployment
            local = [] if deployment.runner == DATAFLOW else self.progress.beam_args
            self._pipeline = beam.Pipeline(options=PipelineOptions([*deployment.beam_args, *local]))
        return self._pipeline

    def __enter__(self) -> GraphRun:
        self.signals.__enter__()
        return self

    def run(self) -> Any:
        """Run the graph built into ``pipeline`` to its end, showing progress; its result."""
        with self.progress, bulk_run():
            result = self.pipeline.run()
            result.wait_until_finish()
        return result

    def hold(self) -> None:
        """Ignore SIGTERM and SIGINT from now on: the run is past the point of undoing."""
        self.signals.hold()

    def __exit__(self, *exc_info: object) -> None:
        try:
            if self._given is None and self._pipeline is not None:
                shutil.rmtree(self._pipeline.local_tempdir, ignore_errors=True)
        finally:
            self.signals.__exit__(*exc_info)
