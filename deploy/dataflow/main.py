"""Flex Template entry point: Dataflow's launcher runs this file with the template's parameters.

The launcher passes each parameter as ``--name=value`` with the names of
deploy/dataflow/metadata.json, which are the ``paramine mine`` option names
with underscores (``src_lang``); ``input`` is a comma-separated list of
INPUTs. Everything else (``--runner``, ``--project``...) passes to Beam.
"""

from __future__ import annotations

import sys


def to_mine_argv(argv: list[str]) -> list[str]:
    """Translate template parameters into a ``paramine mine`` command line."""
    from pipelines.mine import build_parser

    flags: dict[str, tuple[str, bool]] = {}
    for action in build_parser()._actions:
        if action.option_strings and action.dest != "help":
            switch = action.nargs == 0  # store_true: the template passes true/false
            flags[action.dest] = (action.option_strings[0], switch)
    inputs: list[str] = []
    result: list[str] = []
    for arg in argv:
        name, _, value = arg.removeprefix("--").partition("=")
        if name == "input":
            inputs += [item for item in value.split(",") if item]
        elif arg.startswith("--") and name in flags:
            flag, switch = flags[name]
            if not switch:
                result.append(f"{flag}={value}")
            elif value.lower() in ("", "true", "1", "yes"):
                result.append(flag)
        else:
            result.append(arg)
    return [*inputs, *result]


if __name__ == "__main__":
    from pipelines.mine import run

    run(to_mine_argv(sys.argv[1:]))
