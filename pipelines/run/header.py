"""The manifest's header of a run, as ``paramine mine`` and ``paramine refresh`` both record it.

One function, so that the two commands cannot drift apart: the options of
both kinds by field name (a job file with these keys runs the job again), the
model, the inputs, the stages, and the ``extra`` keys every run has (the
languages a check could not judge, the prefilter's rules, the runner). What
only one command records comes as ``options_extra`` / ``extra``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import RunSettings
from paramine.schemas.manifest import RunHeader
from paramine.schemas.run_parts import InputRecord, ModelRecord, RunExtra
from paramine.schemas.stages import Stage


def run_header(
    mining: MiningSettings,
    running: RunSettings,
    *,
    model: ModelRecord,
    inputs: Iterable[InputRecord],
    stages: Iterable[Stage],
    unchecked: dict[str, list[str]],
    runner: str,
    options_extra: Mapping[str, Any] | None = None,
    extra: RunExtra | None = None,
) -> RunHeader:
    """The header of a run's manifest; ``unchecked``: the inputs' languages no check judged."""
    return RunHeader(
        options={**mining.to_record(), **running.to_record(), **(options_extra or {})},
        model=model,
        inputs=tuple(inputs),
        stages=[stage.to_record() for stage in stages],
        extra=(extra or RunExtra()).with_facts(
            # Their lines are kept and counted under counts.unchecked.
            unchecked_languages=unchecked,
            # The settings the prefilter applied, the profile's defaults filled in.
            filters=mining.filters,
            runner=runner,
        ),
    )
