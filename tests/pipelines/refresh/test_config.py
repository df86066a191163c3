"""The refresh config: its keys, and files that are not YAML at all, through the CLI and the API."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from paramine.pipelines.cli import main
from paramine.pipelines.refresh.config import load_config
from paramine.schemas.errors import InputError

from tests.schemas.test_yaml_files import alias_bomb

#: Files that are not a YAML document, and where (line:column) each goes wrong.
NOT_YAML = [
    # An unclosed flow sequence: the parser reaches the end of the file (3:1),
    # and the message also points at the "[" that was left open (2:9).
    pytest.param(b"output: out\ninputs: [a, b\n", "3:1", "2:9", id="unclosed-list"),
    # A PNG's first bytes: not UTF-8 text.
    pytest.param(b"\x89PNG\x00\xff", "1:1", "not UTF-8 text", id="binary"),
    pytest.param(b"output: out\ninputs: [a]\nbeam_args: \x00\n", "3:12", "U+0000", id="nul"),
    pytest.param(b"output: out\ninputs:\n\t- a\n", "3:1", "'\\t'", id="tab-indent"),
    pytest.param(b'output: "out\ninputs: [a]\n', "3:1", "1:9", id="unclosed-quote"),
]


@pytest.mark.parametrize(("content", "where", "detail"), NOT_YAML)
def test_a_config_that_is_not_yaml_is_one_line_naming_file_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, where: str, detail: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    status = main(["refresh", str(path)])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"paramine: error: {path}:{where}: ")
    assert detail in err


@pytest.mark.pipeline
def test_not_yaml_through_the_installed_command(tmp_path: Path) -> None:
    """The real entry point, in its own process: exit 2 and one line on stderr."""
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"output: out\ninputs: [a, b\n")
    done = subprocess.run(
        [sys.executable, "-m", "paramine.pipelines.cli", "refresh", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"paramine: error: {path}:3:1: not valid YAML: expected ',' or ']', but got "
        "'<stream end>' (while parsing a flow sequence that starts at 2:9); a refresh config is "
        "a YAML mapping (docs/refresh.md, deploy/schedule/refresh.example.yaml)"
    ]


def test_binary_bytes_are_not_utf8_text(tmp_path: Path) -> None:
    path = tmp_path / "logo.yaml"
    path.write_bytes(b"output: out\n\x89PNG\x00\xff")
    with pytest.raises(InputError, match=r"logo\.yaml:2:1: not UTF-8 text \(byte 0x89\)"):
        load_config(str(path))


def test_a_missing_config_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing\.yaml: cannot read the refresh config"):
        load_config(str(tmp_path / "missing.yaml"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"inputs": ["x"]}, "'output' is required"),
        ({"output": "o", "inputs": ["x"], "colour": 1}, "unknown keys"),
        ({"output": "o", "inputs": ["x"], 1: 2, "colour": 1}, r"unknown keys \['1', 'colour'\]"),
        ({"output": "o", "inputs": ["x"], "options": {"output": "y"}}, "set by refresh"),
        (
            {"output": "o", "inputs": ["x"], "options": {"no-such-flag": 1}},
            "is not a paramine mine setting",
        ),
        ({"output": "o", "inputs": ["x"], "buckets": 0}, "positive integer"),
        ({"output": "o", "inputs": ["x"], "retention_hours": "a week"}, "positive integer"),
        (["output", "inputs"], "is a YAML mapping"),
    ],
)
def test_config_errors(tmp_path: Path, content: Any, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(content), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_config(str(path))


def test_a_good_config_loads(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "output: table/\ninputs: corpus\ntgt_lang: cs\noptions: {threshold: 0.9}\nbuckets: 4\n",
        encoding="utf-8",
    )
    config = load_config(str(path))
    assert config.output == str(Path.cwd() / "table")
    assert config.inputs == [str(Path.cwd() / "corpus")]
    assert (config.tgt_lang, config.buckets, config.mining.tgt_lang) == ("cs", 4, "cs")


def test_an_alias_bomb_in_a_refresh_config_is_one_line_at_once(tmp_path: Path) -> None:
    """Nine levels of nine aliases under a key: refused where the first alias is, not expanded."""
    bomb = "".join("  " + line + "\n" for line in alias_bomb().splitlines())
    path = tmp_path / "c.yaml"
    path.write_text("output: o\ninputs: [x]\noptions:\n" + bomb)
    start = time.monotonic()
    with pytest.raises(InputError, match=rf"^{re.escape(str(path))}:5:\d+: a YAML alias \(\*a0\)"):
        load_config(str(path))
    assert time.monotonic() - start < 2
