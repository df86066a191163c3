"""Flex Template entry point: Dataflow's launcher runs this file with the template's parameters.

The launcher passes each parameter as ``--name=value`` with the names of
deploy/dataflow/metadata.json, which are ``MineConfig``'s field names
(``src_lang``); ``input`` is a comma-separated list of INPUTs. Everything else
(``--runner``, ``--project``...) passes to Beam.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any


def to_config(argv: list[str]) -> tuple[Any, list[str]]:
    """Turn template parameters into a ``MineConfig`` and Beam's flags."""
    from paramine.pipelines.run.config import MineConfig

    names = {f.name for f in dataclasses.fields(MineConfig)}
    values: dict[str, Any] = {}
    inputs: list[str] = []
    beam_args: list[str] = []
    for arg in argv:
        name, _, value = arg.removeprefix("--").partition("=")
        if arg.startswith("--") and name == "input":
            inputs += [item for item in value.split(",") if item]
        elif arg.startswith("--") and name in names:
            values[name] = value
        else:
            beam_args.append(arg)
    return MineConfig.from_mapping({**values, "inputs": inputs}, source="template"), beam_args


def main(argv: list[str]) -> int:
    """Mine with the template's parameters; errors print once, as ``paramine mine``'s do."""
    from paramine.pipelines.run.mine import run_config

    config, beam_args = to_config(argv)
    run_config(config, beam_args)
    return 0


if __name__ == "__main__":
    import os

    from paramine.pipelines.cli import guarded

    sys.exit(guarded(main, sys.argv[1:], debug=os.environ.get("PARAMINE_DEBUG") == "1"))
