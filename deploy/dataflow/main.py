"""Flex Template entry point: Dataflow's launcher runs this file with the template's parameters.

The launcher passes each parameter as ``--name=value`` with the names of
deploy/dataflow/metadata.json, which are the field names of paramine mine's
settings (``src_lang``, ``gpu_type``); ``input`` is a comma-separated list of
INPUTs. Everything else (``--runner``, ``--project``...) passes to Beam.
"""

from __future__ import annotations

import sys
from typing import Any


def to_job(argv: list[str]) -> Any:
    """Turn template parameters into a mining job (both kinds of settings) and Beam's flags."""
    from paramine.pipelines.run.mine import MineJob
    from paramine.pipelines.settings.job import setting_kind
    from paramine.pipelines.settings.mining import MiningSettings
    from paramine.pipelines.settings.running import RunSettings

    values: dict[type, dict[str, Any]] = {MiningSettings: {}, RunSettings: {}}
    inputs: list[str] = []
    beam_args: list[str] = []
    for arg in argv:
        name, _, value = arg.removeprefix("--").partition("=")
        kind = setting_kind(name) if arg.startswith("--") and "-" not in name else None
        if arg.startswith("--") and name == "input":
            inputs += [item for item in value.split(",") if item]
        elif kind is not None:
            values[kind][name] = value
        else:
            beam_args.append(arg)
    return MineJob(
        MiningSettings.from_mapping(values[MiningSettings], source="template"),
        RunSettings.from_mapping({**values[RunSettings], "inputs": inputs}, source="template"),
        beam_args,
    )


def main(argv: list[str]) -> int:
    """Mine with the template's parameters; errors print once, as ``paramine mine``'s do."""
    from paramine.pipelines.run.mine import run_job

    run_job(to_job(argv))
    return 0


if __name__ == "__main__":
    import os

    from paramine.pipelines.cli import guarded

    sys.exit(guarded(main, sys.argv[1:], debug=os.environ.get("PARAMINE_DEBUG") == "1"))
