"""schemas/yaml_files.py and the files read with it: one line for every bad file, at once."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from paramine.pipelines.cli import main as cli_main
from paramine.schemas.errors import InputError, UsageError
from paramine.schemas.yaml_files import parse_yaml, setting_value

SEE = "see the docs"


def alias_bomb(levels: int = 9) -> str:
    """Nine levels of nine aliases: 9^9 nodes once expanded (a "billion laughs")."""
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_is_refused_before_anything_is_built() -> None:
    start = time.monotonic()
    with pytest.raises(InputError, match=r"^job.yaml:2:\d+: a YAML alias \(\*a0\)"):
        parse_yaml(alias_bomb(), "job.yaml", SEE)
    assert time.monotonic() - start < 2


@pytest.mark.parametrize("where", ["unknown_key", "beam_args", "inputs"])
def test_paramine_mine_answers_an_alias_bomb_in_a_job_file_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    bomb = "".join("  " + line + "\n" for line in alias_bomb().splitlines())
    job = tmp_path / "job.yaml"
    job.write_text(f"output: {tmp_path / 'out'}\n{where}:\n{bomb}")
    start = time.monotonic()
    assert cli_main(["mine", "--config", str(job)]) == 2
    assert time.monotonic() - start < 10
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"paramine: error: {job}:4:") and "a YAML alias" in line


def parsed(text: str) -> object:
    return parse_yaml(text, "f.yaml", SEE)


@pytest.mark.parametrize(
    ("text", "many", "message"),
    [
        ("src_lang: null\n", False, "f.yaml:1: src_lang: no value (null)"),
        ("threshold: {a: 1}\n", False, "f.yaml:1: threshold: a mapping; give one value"),
        ("threshold: [1, 2]\n", False, "f.yaml:1: threshold: a list; give one value"),
        ("inputs:\n  - [a, b]\n", True, "f.yaml:1: inputs: a list of single values"),
    ],
)
def test_a_wrong_type_is_file_line_key_problem(text: str, many: bool, message: str) -> None:
    document = parsed(text)
    [(key, value)] = document.data.items()  # type: ignore[attr-defined]
    with pytest.raises(UsageError) as error:
        setting_value(document, (key,), value, many)  # type: ignore[arg-type]
    assert str(error.value).startswith(message)


def test_null_is_the_default_of_a_setting_whose_default_is_null() -> None:
    # A manifest's options write corpus: null; as a job file they mine again.
    document = parsed("corpus: null\n")
    assert setting_value(document, ("corpus",), None, False, nullable=True) is None  # type: ignore[arg-type]


def test_one_value_where_a_list_is_taken_is_a_list_of_one() -> None:
    document = parsed("inputs: a.tsv\n")
    assert setting_value(document, ("inputs",), "a.tsv", True) == ["a.tsv"]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ("src_lang: null\n", ":2: src_lang: no value (null)"),
        ("threshold: {high: 1}\n", ":2: threshold: a mapping"),
        ("inputs: [[a]]\n", ":2: inputs: a list of single values"),
    ],
)
def test_a_job_file_of_wrong_types_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], job: str, message: str
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(f"output: {tmp_path / 'out'}\n{job}")
    assert cli_main(["mine", "--config", str(path)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"paramine: error: {path}{message}"), line


def test_a_named_pipe_is_not_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pipe = tmp_path / "bitext.tsv"
    os.mkfifo(pipe)
    assert cli_main(["mine", str(pipe), "--output", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "is not a regular file (a named pipe" in line
    assert not (tmp_path / "out").exists()
