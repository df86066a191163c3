"""deploy/uv_flags.py: the machine's pip settings reach `make setup`'s uv as flags."""

from __future__ import annotations

import importlib.util
import io
import runpy
import shlex
import sys

import pytest

from tests.paths import ROOT

SCRIPT = ROOT / "deploy" / "uv_flags.py"


def _module():
    spec = importlib.util.spec_from_file_location("uv_flags", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


uv_flags = _module().uv_flags

#: What `pip config list` prints on a machine with local wheels, two extra
#: indexes and a constraints file, set in a file and again in a variable.
CONFIG = """\
:env:.default-timeout='180'
:env:.find-links='/opt/wheels'
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'
global.find-links='/opt/wheels'
install.no-compile='yes'
"""


def test_sources_and_constraints_become_flags_once_each_in_order() -> None:
    assert uv_flags(CONFIG) == [
        "--find-links", "/opt/wheels",
        "--constraint", "/etc/xdg/pip/constraints.txt",
        "--extra-index-url", "file:///opt/a/simple",
        "--extra-index-url", "file:///opt/b/simple",
        "--index-strategy", "unsafe-best-match",
    ]  # fmt: skip


def test_an_index_of_its_own_without_extras_keeps_uvs_index_strategy() -> None:
    assert uv_flags("global.index-url='https://mirror.example/simple'\n") == [
        "--index-url",
        "https://mirror.example/simple",
    ]


@pytest.mark.parametrize("config", ["", "global.timeout='60'\n", "not a setting\n"])
def test_no_source_settings_no_flags(config: str) -> None:
    assert uv_flags(config) == []


def test_the_script_prints_them_for_a_shell(monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(CONFIG))
    runpy.run_path(str(SCRIPT), run_name="__main__")
    assert shlex.split(capsys.readouterr().out) == uv_flags(CONFIG)
