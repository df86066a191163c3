"""Time per stage of a finished run, from the runner's execution-time metrics.

Portable runners (FnApiRunner included) report ``ptransform_execution_time``
for every step once a run has finished; summed by the top-level label they
give the seconds each stage of ``paramine mine`` spent, which the launcher
passes to ``build_report(..., timing=...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: The runner's metric of a step's processing time.
EXECUTION_TIME = "ptransform_execution_time:total_msecs"


def stage_seconds(result: Any, composites: Sequence[str] = ()) -> dict[str, float]:
    """Seconds of processing per stage label of a finished run.

    Args:
        result: The finished run's ``PipelineResult``.
        composites: Labels of the composites that hold stages: a step is
            timed under the first label of its path that is none of these
            (``MineDataset/MineParaphrases/MineGroups/EncodeTexts/...`` as ``EncodeTexts``).

    Returns ``{}`` where the runner reports no execution times (Dataflow
    reports them in its own UI).
    """
    try:
        query = result.monitoring_metrics().query()
    except (AttributeError, NotImplementedError):
        return {}
    totals: dict[str, float] = {}
    for counter in query.get("counters", []):
        if EXECUTION_TIME not in str(counter.key.metric.name):
            continue
        parts = str(counter.key.step).split("/")
        label = next((part for part in parts if part not in composites), parts[-1])
        msecs = counter.committed or counter.attempted or 0
        totals[label] = totals.get(label, 0.0) + float(msecs) / 1000.0
    return {label: round(seconds, 3) for label, seconds in totals.items() if seconds > 0}


def run_timing(
    seconds: float, result: Any = None, composites: Sequence[str] = (), **extra: Any
) -> dict[str, Any]:
    """The ``timing`` that ``build_report`` takes: wall seconds, seconds per stage, extras."""
    timing: dict[str, Any] = {"seconds": round(float(seconds), 3), **extra}
    if result is not None:
        stages = stage_seconds(result, composites)
        if stages:
            timing["stages"] = stages
    return timing
