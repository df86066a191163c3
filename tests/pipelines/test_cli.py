"""The error boundary: every user error reaches the user once, as one line, exit 2."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
from paramine.pipelines.formats.moses import MisalignedShardError, misaligned
from paramine.pipelines.run.mine import run
from paramine.pipelines.run.runner_errors import paramine_error as find_paramine_error
from paramine.schemas.errors import InputError, ParamineError
from paramine.schemas.reader import read_pairs


def paramine(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paramine.pipelines.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


#: A progress line (printed every 5 s of a run; a loaded machine gets one before an error).
PROGRESS = re.compile(r"paramine: (read |[A-Za-z]+: ).* elapsed$")


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """stderr without Beam's import-time noise and the run's progress lines."""
    return [
        line
        for line in done.stderr.splitlines()
        if "apitools" not in line and not PROGRESS.match(line)
    ]


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def moses(tmp_path: Path) -> Path:
    folder = tmp_path / "bitext"
    folder.mkdir()
    (folder / "c.en-pl.en").write_text("Good night.\nGood night.\nThanks.\n", encoding="utf-8")
    (folder / "c.en-pl.pl").write_text("Dobranoc.\nSpokojnej nocy.\nDzięki.\n", encoding="utf-8")
    return folder / "c.en-pl"


@pytest.mark.pipeline
def test_bad_option_is_one_line_and_exit_2(moses: Path, tmp_path: Path) -> None:
    done = paramine("mine", str(moses), "--output", str(tmp_path / "o"), "--threshold", "2")
    assert done.returncode == 2
    assert error_lines(done) == ["paramine: error: --threshold 2.0 is not a cosine in [-1, 1]"]
    assert not (tmp_path / "o").exists()


@pytest.mark.pipeline
def test_debug_shows_the_traceback(moses: Path, tmp_path: Path) -> None:
    done = paramine(
        "--debug", "mine", str(moses), "--output", str(tmp_path / "o"), "--threshold", "2"
    )
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "OptionError: --threshold 2.0" in done.stderr


@pytest.mark.pipeline
def test_unknown_flag_and_same_languages(moses: Path, tmp_path: Path) -> None:
    done = paramine("mine", str(moses), "--output", str(tmp_path / "o"), "--machine_typo=x")
    assert done.returncode == 2
    lines = error_lines(done)
    assert len(lines) == 1 and "not Beam options: --machine_typo=x" in lines[0]
    done = paramine("mine", str(moses), "--output", str(tmp_path / "o"), "--src-lang", "pol")
    assert done.returncode == 2
    assert len(error_lines(done)) == 1 and "same language" in done.stderr


@pytest.mark.pipeline
def test_missing_input_is_named_before_anything_runs(tmp_path: Path) -> None:
    done = paramine("mine", str(tmp_path / "nothing.tsv"), "--output", str(tmp_path / "o"))
    assert done.returncode == 2
    lines = error_lines(done)
    assert len(lines) == 1 and lines[0].startswith("paramine: error: ")
    assert "nothing.tsv" in lines[0]
    assert not (tmp_path / "o").exists()


@pytest.mark.pipeline
def test_error_in_a_worker_reaches_the_user_once(tmp_path: Path, tiny_model_dir: Path) -> None:
    folder = tmp_path / "bitext"
    folder.mkdir()
    (folder / "c.en-pl.en").write_text("One.\nTwo.\nThree.\n", encoding="utf-8")
    (folder / "c.en-pl.pl").write_text("Jeden.\nDwa.\n", encoding="utf-8")
    done = paramine(
        "mine",
        str(folder / "c.en-pl"),
        "--output",
        str(tmp_path / "o"),
        "--model",
        str(tiny_model_dir),
        "--threshold",
        "0.0",
    )
    assert done.returncode == 2
    lines = error_lines(done)
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("paramine: error: Moses files differ in length")
    assert "c.en-pl.en" in lines[0] and "Traceback" not in done.stderr


@pytest.mark.pipeline
def test_overwrite_with_a_bad_option_keeps_the_old_dataset(
    moses: Path, tmp_path: Path, tiny_model_dir: Path
) -> None:
    output = tmp_path / "out"
    args = [str(moses), "--output", str(output), "--model", str(tiny_model_dir)]
    run([*args, "--threshold", "0.0"])
    before = tree_digest(output)
    done = paramine("mine", *args, "--overwrite", "--threshold", "abc")
    assert done.returncode == 2
    assert len(error_lines(done)) == 1
    assert tree_digest(output) == before
    table, _ = read_pairs(str(output))
    assert table.num_rows >= 1


@pytest.mark.pipeline
def test_overwrite_refuses_a_folder_paramine_did_not_write(moses: Path, tmp_path: Path) -> None:
    # Defect 1: --overwrite deleted pairs/ and rejects/ of a folder paramine never wrote.
    output = tmp_path / "mine"
    (output / "pairs").mkdir(parents=True)
    (output / "pairs" / "precious.parquet").write_bytes(b"not ours")
    (output / "rejects").mkdir()
    (output / "notes.txt").write_text("keep me", encoding="utf-8")
    before = tree_digest(output)
    done = paramine("mine", str(moses), "--output", str(output), "--overwrite")
    assert done.returncode == 2
    lines = error_lines(done)
    assert len(lines) == 1 and "is not a paramine dataset" in lines[0]
    assert tree_digest(output) == before


def test_find_paramine_error_reads_a_wrapped_worker_error() -> None:
    original = InputError("shard x.tsv line 3: bad")
    try:
        try:
            raise original
        except InputError as error:
            raise RuntimeError("runner failed") from error
    except RuntimeError as wrapped:
        assert find_paramine_error(wrapped) is original
    # From a worker in another process only the traceback's text arrives.
    relayed = RuntimeError(
        "Pipeline failed:\n"
        + "".join(traceback.format_exception(misaligned("a.en", 3, "a.pl", 2)))
        + " [while running 'MineDataset/MineParaphrases/ReadAndPrefilter/ReadBitext/Split']\n"
    )
    found = find_paramine_error(relayed)
    assert isinstance(found, MisalignedShardError)
    assert str(found).startswith("Moses files differ in length: a.en has 3 lines")
    # Only paramine's own classes are rebuilt, named in full.
    assert find_paramine_error(RuntimeError("ValueError: x\nInputError: y")) is None
    assert find_paramine_error(ValueError("a bug")) is None
    assert issubclass(InputError, ParamineError)


@pytest.mark.pipeline
def test_a_worker_error_in_another_process_is_one_line(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    (tmp_path / "c.en").write_text("One.\nTwo.\nThree.\n", encoding="utf-8")
    (tmp_path / "c.pl").write_text("Jeden.\nDwa.\n", encoding="utf-8")
    done = paramine(
        "mine",
        str(tmp_path / "c.en"),
        str(tmp_path / "c.pl"),
        "--output",
        str(tmp_path / "o"),
        "--model",
        str(tiny_model_dir),
        "--direct_running_mode",
        "multi_processing",
        "--direct_num_workers",
        "2",
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in error_lines(done) if line.startswith("paramine: error:")]
    assert len(errors) == 1 and "c.en has 3 lines but" in errors[0], done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.pipeline
@pytest.mark.parametrize("command", [["models"], ["--help"]])
def test_output_into_a_closed_pipe_ends_quietly(command: list[str]) -> None:
    # `paramine refresh --history | head` printed a BrokenPipeError traceback.
    done = subprocess.Popen(
        [sys.executable, "-m", "paramine.pipelines.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert done.stdout is not None and done.stderr is not None
    done.stdout.close()  # the reader is gone before anything is written
    stderr = done.stderr.read().decode()
    assert done.wait() == 0, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr


@pytest.mark.pipeline
def test_a_run_stopped_by_a_signal_exits_though_a_runner_thread_lingers(tmp_path: Path) -> None:
    # The interrupted runner can leave a non-daemon thread blocked for good;
    # the interpreter would wait for it at exit, so the process would hang.
    job = tmp_path / "lingering_job.py"
    job.write_text(
        "import threading\n"
        "from paramine.schemas.errors import RunInterrupted\n"
        "def main(argv):\n"
        "    threading.Thread(target=threading.Event().wait).start()\n"
        "    raise RunInterrupted('stopped by SIGTERM', 15)\n",
        encoding="utf-8",
    )
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from paramine.pipelines import cli\n"
        "cli.SUBCOMMANDS['lingering'] = ('lingering_job', 'a test job')\n"
        "sys.exit(cli.main(['lingering']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 143
    assert done.stderr.strip() == "paramine: stopped by SIGTERM"
