"""The machine's pip settings as uv's flags, for `make setup`.

`make setup` installs with uv (`uv pip install`): 22-35 s against pip's 85-96 s
for the same 200 packages here (docs/results.md). uv reads no pip
configuration, so a machine's local wheels, package mirror or constraints
file, set for pip in pip.conf or ``PIP_*`` variables, would be passed over
and uv would resolve against PyPI alone (here: torch's CUDA build instead of
the CPU wheel that lies in the machine's wheel folder). This prints them as
uv's flags, read from ``pip config list``, which merges every pip
configuration file and variable:

    .venv/bin/python -m pip config list | python deploy/uv_flags.py

``--index-strategy unsafe-best-match`` comes with an extra index: pip takes
the best version from every index, uv by default only from the first that
has the package.
"""

from __future__ import annotations

import re
import shlex
import sys

#: pip's settings that say where packages come from and which versions are allowed.
FLAGS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
}

_LINE = re.compile(r"^[^.]*\.(?P<key>[a-z-]+)='(?P<value>.*)'$")


def uv_flags(pip_config: str) -> list[str]:
    """uv's flags for the sources and constraints in ``pip config list``'s output."""
    pairs: dict[tuple[str, str], None] = {}  # in order, once each (a file and a variable may agree)
    for line in pip_config.splitlines():
        match = _LINE.match(line.strip())
        if match is not None and match["key"] in FLAGS:
            for value in match["value"].split():  # pip separates several values by whitespace
                pairs[FLAGS[match["key"]], value] = None
    flags = [part for pair in pairs for part in pair]
    if "--extra-index-url" in flags:
        flags += ["--index-strategy", "unsafe-best-match"]
    return flags


if __name__ == "__main__":
    print(shlex.join(uv_flags(sys.stdin.read())))
