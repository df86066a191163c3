"""Failure paths of ``paramine mine`` a new user met (issue 27): one line each, nothing left behind.

- the output's disk fills up during the write;
- SIGTERM or SIGINT in the middle of a run;
- ``--model`` naming a folder of damaged files;
- ``--deploy-dry-run`` from the Python API (no ``SystemExit``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from paramine.pipelines.cli import main
from paramine.pipelines.run.runner_errors import disk_full_error
from paramine.schemas.errors import ModelError

from tests.encoders.datasets import make_rows, write_dataset
from tests.tiny_model import with_code_module

#: Lines a run prints besides its verdict: progress, and Beam's import-time noise.
NOT_THE_VERDICT = ("apitools",)
#: The command line, run as a user runs it.
PARAMINE = [sys.executable, "-m", "paramine.pipelines.cli"]


def mine_args(source: Path, model: Path, *more: str) -> list[str]:
    """``paramine mine``'s arguments for an en-pl TSV, with a fixed cut (no calibration)."""
    return [
        *("mine", str(source), "--src-lang", "en", "--tgt-lang", "pl"),
        *("--model", str(model), "--threshold", "0.0", *more),
    ]


def write_bitext(path: Path, groups: int = 3) -> Path:
    """A TSV whose pivots have several candidates each, in the tiny model's words."""
    candidates = ["ala ma kota", "to jest zdanie po polsku", "dobry wieczór jak się masz"]
    pivots = ["the quick brown fox", "how are you today", "this is a sentence"][:groups]
    lines = [f"{pivot}\t{candidate}" for pivot in pivots for candidate in candidates]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def old_dataset(output: Path) -> dict[str, str]:
    """Write a small paramine dataset at ``output``; return its files' digests."""
    write_dataset(output, make_rows(8))
    return digests(output)


def digests(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def verdicts(stderr: str) -> list[str]:
    return [
        line
        for line in stderr.splitlines()
        if line.strip()
        and not any(noise in line for noise in NOT_THE_VERDICT)
        # Progress lines (reading, then the stage that runs) are not the verdict.
        and not (line.startswith("paramine: ") and line.endswith(" s elapsed"))
    ]


def staging_folders(output: Path) -> list[Path]:
    return sorted(output.parent.glob(f".{output.name}.paramine-staging-*"))


@pytest.fixture
def private_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty TMPDIR for this process (tempfile caches the one it found)."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    # torch's compile cache (an empty torchinductor_<user>/, made on model
    # load and meant to outlive runs) is not the run's to remove: elsewhere.
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "torchinductor"))
    return folder


# ------------------------------------------------------------ a full disk


def test_disk_full_error_finds_enospc_in_the_chain_or_the_runners_text() -> None:
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    try:
        try:
            raise full
        except OSError:
            # What Beam's in-process runner raises: it cannot rebuild an OSError.
            raise RuntimeError(
                "OSError: [Errno 28] No space left on device [while running 'WriteDataset/x']"
            ) from None
    except RuntimeError as wrapped:
        assert disk_full_error(wrapped) is full
    # A multi-process runner passes only the worker's traceback, as text.
    text = RuntimeError("Traceback ...\nOSError: [Errno 28] No space left on device\n")
    found = disk_full_error(text)
    assert found is not None and found.errno == errno.ENOSPC
    assert disk_full_error(RuntimeError("Pipeline failed")) is None
    assert disk_full_error(OSError(errno.EACCES, "Permission denied")) is None


@pytest.mark.pipeline
def test_a_full_disk_while_writing_is_one_line_and_leaves_the_old_dataset(
    tmp_path: Path,
    tiny_model_dir: Path,
    private_tmpdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """In process: the Parquet sink's write fails as a full disk makes it fail."""
    from apache_beam.io import parquetio

    def disk_full(self: object, writer: object, table: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(parquetio._ParquetSink, "write_record", disk_full)
    output = tmp_path / "out"
    before = old_dataset(output)
    handlers = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    source = write_bitext(tmp_path / "in.tsv")
    status = main(
        mine_args(source, tiny_model_dir, "--output", str(output), "--overwrite", "--quiet")
    )
    err = capsys.readouterr().err
    assert status == 2
    lines = verdicts(err)
    assert len(lines) == 1, err
    assert lines[0].startswith("paramine: error: the disk is full (no space left on device)")
    assert f"--output {output} is as it was" in lines[0]
    assert "Traceback" not in err
    assert digests(output) == before
    assert staging_folders(output) == []
    assert sorted(os.listdir(private_tmpdir)) == []  # no Beam temp folder, progress file, log
    # The run's signal handlers are gone with it.
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == handlers


#: Mounts a small tmpfs in a private mount namespace, puts the old dataset on
#: it, fills it to a few KiB, runs the command, and lists what is left.
ON_A_SMALL_DISK = r"""
set -u
mnt=$1; old=$2; listing=$3; shift 3
mount -t tmpfs -o size=1m tmpfs "$mnt" || exit 99
cp -r "$old" "$mnt/out"
free=$(df -k --output=avail "$mnt" | tail -1)
dd if=/dev/zero of="$mnt/filler" bs=4k count=$((free / 4 - 2)) status=none
"$@" --output "$mnt/out" --overwrite
status=$?
(cd "$mnt" && find . | sort && sha256sum $(find out -type f | sort)) > "$listing"
exit $status
"""


def can_mount_a_tmpfs(folder: Path) -> bool:
    """Whether this machine lets us mount a tmpfs in a new mount namespace (root, no seccomp)."""
    if shutil.which("unshare") is None:
        return False
    folder.mkdir(exist_ok=True)
    probe = ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs '{folder}'"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


@pytest.mark.slow
def test_a_real_full_disk_is_one_line_and_leaves_the_old_dataset(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    """End to end, on a real 1 MiB file system with 8 KiB free."""
    mnt = tmp_path / "mnt"
    if not can_mount_a_tmpfs(mnt):
        pytest.skip("cannot mount a tmpfs here (needs root and unshare -m)")
    old = tmp_path / "old"
    before = old_dataset(old)
    listing = tmp_path / "listing.txt"
    source = write_bitext(tmp_path / "in.tsv")
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = {
        **os.environ,
        "TMPDIR": str(tmpdir),
        "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "torchinductor"),
    }
    done = subprocess.run(
        [
            *("unshare", "-m", "bash", "-c", ON_A_SMALL_DISK, "bash"),
            *(str(mnt), str(old), str(listing)),
            *PARAMINE,
            *mine_args(source, tiny_model_dir),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = verdicts(done.stderr)
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("paramine: error: the disk is full (no space left on device)")
    assert f"{mnt}/.out.paramine-staging-" in lines[0]  # where it filled up
    assert f"--output {mnt}/out is as it was" in lines[0]
    # On the small disk: the old dataset, byte for byte, the filler, and nothing else.
    entries, sums = [], {}
    for line in listing.read_text().splitlines():
        if "  out/" in line:
            digest, name = line.split("  ", 1)
            sums[name.removeprefix("out/")] = digest
        else:
            entries.append(line)
    assert entries == [".", "./filler", "./out", *(f"./out/{name}" for name in sorted(before))]
    assert sums == before
    assert os.listdir(tmpdir) == []


# --------------------------------------------------------------- signals


def _signals_as_in_a_terminal() -> None:
    """In the child, before exec: SIGINT and SIGTERM at their defaults."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["TERM", "INT"]
)
def test_a_signal_stops_the_run_and_removes_what_it_made(
    tmp_path: Path, tiny_model_dir: Path, signum: int, status: int
) -> None:
    output = tmp_path / "out"
    before = old_dataset(output)
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = {
        **os.environ,
        "TMPDIR": str(tmpdir),
        "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "torchinductor"),
        # A run that does not stop prints every thread's stack on SIGABRT.
        "PYTHONFAULTHANDLER": "1",
    }
    source = write_bitext(tmp_path / "in.tsv")
    process = subprocess.Popen(
        [*PARAMINE, *mine_args(source, tiny_model_dir, "--output", str(output), "--overwrite")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # Ctrl-C as a terminal sends it: a shell starts a background job with
        # SIGINT ignored, the child would inherit that, and paramine keeps a
        # signal ignored that it was started ignoring (pytest run with `&`).
        preexec_fn=_signals_as_in_a_terminal,
    )
    try:
        # Under way: the staging folder is beside --output and the progress
        # file in TMPDIR, so the pipeline has started.
        deadline = time.monotonic() + 120
        while not (staging_folders(output) and list(tmpdir.glob("paramine-progress-*"))):
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the run never got under way"
            time.sleep(0.05)
        time.sleep(0.5)
        assert process.poll() is None, "the run finished before the signal"
        process.send_signal(signum)
        try:
            _, stderr = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)
            _, stderr = process.communicate(timeout=60)
            pytest.fail(f"the run did not stop within 120 s of {signum}; its threads:\n{stderr}")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    name = signal.Signals(signum).name
    assert process.returncode == status, stderr
    assert stderr.splitlines()[-1] == (
        f"paramine: stopped by {name}; the unfinished dataset was removed and --output "
        f"{output} is as it was"
    )
    assert "Traceback" not in stderr
    assert staging_folders(output) == []
    assert digests(output) == before
    assert os.listdir(tmpdir) == []  # no Beam temp folder, progress file or run log


# --------------------------------------------------------- a damaged model


def test_a_model_folder_of_garbage_is_refused_before_anything_runs(
    tmp_path: Path, private_tmpdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    garbage = tmp_path / "garbage-model"
    garbage.mkdir()
    (garbage / "config.json").write_bytes(bytes(range(256)) * 4)
    (garbage / "modules.json").write_bytes(b"\x8d\x00\xff" * 100)
    output = tmp_path / "out"
    source = write_bitext(tmp_path / "in.tsv")
    status = main(mine_args(source, garbage, "--output", str(output)))
    err = capsys.readouterr().err
    assert status == 2
    lines = verdicts(err)
    assert lines == [
        f"paramine: error: --model {garbage}: {garbage / 'modules.json'} is not UTF-8 text "
        "(byte 0x8d at offset 0); the model folder is damaged: save or download the model again, "
        "or choose another --model"
    ], err
    assert not output.exists() and staging_folders(output) == []
    assert os.listdir(private_tmpdir) == []


# --------------------------------------------------------------- dry run


def test_a_deploy_dry_run_returns_instead_of_exiting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from paramine.pipelines.run.mine import job_from_command_line, run_job

    from tests.pipelines.run.test_deploy import DATAFLOW, IMAGE, INPUTS

    argv = [*INPUTS, "--output=gs://bucket/out", *DATAFLOW, f"--worker-image={IMAGE}"]
    result = run_job(job_from_command_line([*argv, "--deploy-dry-run"]))  # no SystemExit
    printed = capsys.readouterr().err
    assert result.manifest is None and result.counters == {}
    assert "DataflowRunner options checked" in result.dry_run
    assert result.dry_run in printed
    # The command prints the same and exits 0.
    assert main(["mine", *argv, "--deploy-dry-run"]) == 0
    assert result.dry_run in capsys.readouterr().err


def test_a_model_folder_that_brings_its_own_code_is_refused_before_anything_runs(
    tiny_model_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "ran"
    class_ref = with_code_module(tiny_model_copy, marker)
    output = tmp_path / "out"
    status = main(
        mine_args(write_bitext(tmp_path / "in.tsv"), tiny_model_copy, "--output", str(output))
    )
    assert status == 2
    assert verdicts(capsys.readouterr().err) == [
        f"paramine: error: --model {tiny_model_copy}: {tiny_model_copy / 'modules.json'} names "
        f"the module class {class_ref!r}, which is neither sentence-transformers' nor paramine's: "
        "paramine does not run code that comes with a model; save the model with "
        "sentence-transformers' modules, or choose another model"
    ]
    assert not marker.exists() and not output.exists()


def test_a_model_folder_whose_settings_its_module_does_not_take_is_one_line(
    tiny_model_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A folder saved by another library: the Transformer module's settings
    # hold trust_remote_code. The mine died inside a Beam worker (184 lines).
    settings_file = tiny_model_copy / "sentence_bert_config.json"
    settings = json.loads(settings_file.read_text())
    settings_file.write_text(json.dumps({**settings, "trust_remote_code": True}))
    output = tmp_path / "out"
    status = main(
        mine_args(write_bitext(tmp_path / "in.tsv"), tiny_model_copy, "--output", str(output))
    )
    lines = verdicts(capsys.readouterr().err)
    assert status == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"paramine: error: --model {tiny_model_copy}: {settings_file}, ")
    assert "holds trust_remote_code, which the installed sentence-transformers'" in lines[0]
    assert not output.exists()


def test_the_checks_read_a_folder_unless_paramine_built_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from paramine.encoders.models import resolve as models
    from paramine.encoders.models.registry import ResolvedModel
    from paramine.pipelines.run.preflight import check_model
    from paramine.pipelines.settings.mining import MiningSettings

    garbage = tmp_path / "garbage-model"
    garbage.mkdir()
    (garbage / "modules.json").write_bytes(b"\x8d")
    config = MiningSettings(model="some-model")
    for built_here in (False, True):
        resolved = ResolvedModel(str(garbage), "some-model", "r1", built_here=built_here)
        monkeypatch.setattr(models, "resolve_model", lambda spec, r=resolved: r)
        if built_here:  # the offline default, built and marked complete by paramine
            assert check_model(config).id == "some-model"
        else:
            with pytest.raises(ModelError, match=r"modules\.json is not UTF-8 text"):
                check_model(config)
