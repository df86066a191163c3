"""Python's cyclic garbage collector during a run: fewer passes over what the runner holds.

Beam's in-process runner (FnApiRunner, the local default) keeps a run's
shuffles as Python objects in the launching process: at a million subtitle
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
calls ``run_config`` from Python gets its collector back as it was. Garbage
in reference cycles is still collected, later.

Only the launching process is tuned: the workers of
``--direct_running_mode multi_processing`` and of remote runners keep their
own defaults.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: Allocations (less deallocations) between two collections of the youngest
#: generation; the older generations' thresholds are Python's defaults.
YOUNGEST_THRESHOLD = 100_000


@contextlib.contextmanager
def bulk_run() -> Iterator[None]:
    """Inside, the collector leaves alone what existed before and runs less often."""
    thresholds = gc.get_threshold()
    # Collected first: garbage frozen now would live until the run ends.
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNGEST_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
