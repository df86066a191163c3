"""Time per stage of a finished run, from the runner's execution-time metrics.

Portable runners (FnApiRunner included) report ``ptransform_execution_time``
for every step once a run has finished; summed by the top-level label they
give the seconds each stage of ``paramine mine`` spent, which the launcher
passes to ``build_report(..., timing=...)``.
"""

from __future__ import annotations

from typing import Any

#: The runner's metric of a step's processing time.
EXECUTION_TIME = "ptransform_execution_time:total_msecs"
#: The composites that hold the mining graph's steps (pipelines/mine_paraphrases.py),
#: outermost first: a step is timed under its label inside them.
COMPOSITES = ("MineParaphrases", "ScoreGroups")
#: Labels of the mining graph's steps and the manifest stage each one counts;
#: the encoder, the calibration and the writer are timed under their labels.
LABEL_STAGES = {
    "ReadBitext": "read",
    "Prefilter": "prefilter",
    "GroupByPivot": "group",
    "ContestCandidates": "contest",
    "ThresholdFilter": "threshold",
    "CoherenceFilter": "coherence",
    "RegroupByPivot": "regroup",
    "PostFilter": "postfilter",
}


def stage_seconds(result: Any) -> dict[str, float]:
    """Seconds of processing per top-level transform label of a finished run.

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
        # "MineParaphrases/Prefilter/..." is timed as Prefilter, and
        # "MineParaphrases/ScoreGroups/EncodeTexts/..." as EncodeTexts.
        label = str(counter.key.step)
        for composite in COMPOSITES:
            label = label.removeprefix(composite + "/")
        label = label.split("/", 1)[0]
        msecs = counter.committed or counter.attempted or 0
        totals[label] = totals.get(label, 0.0) + float(msecs) / 1000.0
    return {label: round(seconds, 3) for label, seconds in totals.items() if seconds > 0}


def run_timing(seconds: float, result: Any = None, **extra: Any) -> dict[str, Any]:
    """The ``timing`` that ``build_report`` takes: wall seconds, seconds per stage, extras."""
    timing: dict[str, Any] = {"seconds": round(float(seconds), 3), **extra}
    if result is not None:
        stages = stage_seconds(result)
        if stages:
            timing["stages"] = stages
    return timing
