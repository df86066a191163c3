"""Output safety: what ``--output`` paramine may replace, and how a run swaps its dataset in.

The end-to-end tests run ``paramine.pipelines.run.mine.run`` on real files with
the tiny model; the others drive ``DatasetOutput`` directly, on local disk
and on fsspec's memory file system (the object-store path).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest
from paramine.pipelines.run.mine import run
from paramine.pipelines.run.output import (
    STAGING_MARKER,
    DatasetOutput,
    inspect_output,
    normalize_output,
)
from paramine.pipelines.stages.write import write_dataset
from paramine.schemas.errors import OutputError
from paramine.schemas.manifest import MANIFEST_VERSION, read_manifest
from paramine.schemas.reader import read_pairs

BITEXT = (
    "Good night.\tDobranoc.\n"
    "Good night.\tDobrej nocy.\n"
    "Good night.\tSpokojnej nocy.\n"
    "Thank you.\tDziękuję.\n"
    "Thank you.\tDzięki.\n"
)
OTHER_BITEXT = "See you.\tDo zobaczenia.\nSee you.\tNa razie.\n"


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder under ``folder``, by relative path."""
    found: dict[str, bytes | None] = {}
    for path in sorted(folder.rglob("*")):
        found[str(path.relative_to(folder))] = path.read_bytes() if path.is_file() else None
    return found


def siblings(output: Path) -> list[str]:
    """Names beside ``output`` that a run of it may have made."""
    return sorted(p.name for p in output.parent.iterdir() if p.name != output.name)


def bitext(tmp_path: Path, text: str = BITEXT, name: str = "bitext.tsv") -> Path:
    path = tmp_path / "in" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def mine(model: Path, output: str | Path, *args: str):
    return run([*args, "--model", str(model), "--output", str(output), "--threshold", "0.0"])


def fake_dataset(fs: fsspec.AbstractFileSystem, root: str, rows: str) -> None:
    """A minimal paramine dataset: one pairs file and a paramine manifest."""
    fs.makedirs(f"{root}/pairs", exist_ok=True)
    fs.pipe_file(f"{root}/pairs/part-00000.parquet", rows.encode())
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "files": {"pairs": ["pairs/part-00000.parquet"]},
    }
    fs.pipe_file(f"{root}/manifest.json", json.dumps(manifest).encode())


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A folder that holds only what a test puts there (outputs and their siblings)."""
    folder = tmp_path / "datasets"
    folder.mkdir()
    return folder


@pytest.fixture
def memory_root() -> Iterator[str]:
    """A fresh folder on fsspec's memory file system, removed afterwards."""
    fs = fsspec.filesystem("memory")
    root = f"/paramine-output-test-{uuid.uuid4().hex}"
    fs.makedirs(root, exist_ok=True)
    yield root
    fs.rm(root, recursive=True)


class TestNormalize:
    def test_file_url_becomes_the_local_path(self) -> None:
        assert normalize_output("file:///data/out/") == "/data/out"

    def test_relative_path_becomes_absolute(self) -> None:
        assert normalize_output("out") == os.path.join(os.getcwd(), "out")

    def test_object_store_url_keeps_its_scheme(self) -> None:
        assert normalize_output("gs://bucket/datasets/en-pl/") == "gs://bucket/datasets/en-pl"
        assert normalize_output("memory://") == "memory://"


class TestPrepare:
    def test_absent_and_empty_folders_are_fine_and_left_alone(self, workdir: Path) -> None:
        (workdir / "empty").mkdir()
        for name in ("absent", "empty"):
            out = DatasetOutput.prepare(str(workdir / name), overwrite=False)
            assert out.target == str(workdir / name)
            assert Path(out.staging).parent == workdir
        assert siblings(workdir / "x") == ["empty"]

    def test_dataset_needs_overwrite(self, workdir: Path) -> None:
        fake_dataset(fsspec.filesystem("file"), str(workdir / "out"), "old")
        with pytest.raises(OutputError, match="already holds a paramine dataset; pass --overwrite"):
            DatasetOutput.prepare(str(workdir / "out"), overwrite=False)
        assert DatasetOutput.prepare(str(workdir / "out"), overwrite=True).target

    @pytest.mark.parametrize("overwrite", [False, True])
    def test_foreign_folders_are_refused_either_way(self, workdir: Path, overwrite: bool) -> None:
        fs = fsspec.filesystem("file")
        (workdir / "photos").mkdir()
        (workdir / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
        fake_dataset(fs, str(workdir / "annotated"), "old")
        (workdir / "annotated" / "NOTES.md").write_text("mine", encoding="utf-8")
        (workdir / "alien").mkdir()
        (workdir / "alien" / "manifest.json").write_text('{"manifest_version": "x/1"}')
        (workdir / "afile").write_text("not a folder", encoding="utf-8")
        before = snapshot(workdir)
        for name, why in (
            ("photos", r"cat\.jpg and no paramine manifest\.json"),
            ("annotated", r"NOTES\.md, which paramine did not write"),
            ("alien", "not a paramine manifest"),
            ("afile", "a file, not a folder"),
        ):
            with pytest.raises(OutputError, match=why) as error:
                DatasetOutput.prepare(str(workdir / name), overwrite=overwrite)
            assert "\n" not in str(error.value)
        assert snapshot(workdir) == before

    def test_output_under_a_regular_file_is_refused_and_nothing_created(
        self, workdir: Path
    ) -> None:
        (workdir / "somefile").write_text("x", encoding="utf-8")
        with pytest.raises(OutputError, match="is a file, not a folder"):
            DatasetOutput.prepare(str(workdir / "somefile" / "sub" / "out"), overwrite=False)
        assert siblings(workdir / "x") == ["somefile"]

    @pytest.mark.skipif(os.geteuid() == 0, reason="root writes through chmod 0o500")
    def test_unwritable_parent_is_refused(self, workdir: Path) -> None:
        locked = workdir / "locked"
        locked.mkdir(mode=0o500)
        try:
            with pytest.raises(OutputError, match="cannot write to"):
                DatasetOutput.prepare(str(locked / "new" / "out"), overwrite=False)
            assert list(locked.iterdir()) == []
        finally:
            locked.chmod(0o700)

    def test_beam_must_know_the_scheme(self) -> None:
        with pytest.raises(OutputError, match="Beam has no file system for memory://"):
            DatasetOutput.prepare("memory://paramine-test/out", overwrite=False)

    def test_root_of_a_bucket_is_refused(self) -> None:
        with pytest.raises(OutputError, match="root of a file system or bucket"):
            DatasetOutput.prepare("memory://", overwrite=False, beam_sink=False)


class TestSwapLocal:
    def test_publish_replaces_the_old_dataset_and_leaves_nothing_beside(
        self, workdir: Path
    ) -> None:
        fs = fsspec.filesystem("file")
        target = workdir / "out"
        fake_dataset(fs, str(target), "old")
        out = DatasetOutput.prepare(str(target), overwrite=True)
        staging = out.start()
        fake_dataset(fs, staging, "new")
        assert (target / "pairs" / "part-00000.parquet").read_text() == "old"
        out.publish()
        assert (target / "pairs" / "part-00000.parquet").read_text() == "new"
        assert not (target / STAGING_MARKER).exists()
        assert siblings(target) == []

    def test_abandon_leaves_the_old_dataset_as_it_was(self, workdir: Path) -> None:
        fake_dataset(fsspec.filesystem("file"), str(workdir / "out"), "old")
        before = snapshot(workdir)
        out = DatasetOutput.prepare(str(workdir / "out"), overwrite=True)
        with pytest.raises(RuntimeError, match="stage failed"), out.writing() as staging:
            Path(staging, "pairs").mkdir()
            Path(staging, "pairs", "beam-temp-part-1").mkdir()
            raise RuntimeError("stage failed")
        assert snapshot(workdir) == before

    def test_a_failed_swap_puts_the_old_dataset_back(
        self, workdir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fs = fsspec.filesystem("file")
        fake_dataset(fs, str(workdir / "out"), "old")
        out = DatasetOutput.prepare(str(workdir / "out"), overwrite=True)
        fake_dataset(fs, out.start(), "new")
        rename = os.rename

        def failing_rename(src: str, dst: str) -> None:
            if src == out.staging:
                raise OSError(5, "Input/output error")
            rename(src, dst)

        monkeypatch.setattr(os, "rename", failing_rename)
        with pytest.raises(OSError, match="Input/output error"):
            out.publish()
        assert (workdir / "out" / "pairs" / "part-00000.parquet").read_text() == "old"
        assert inspect_output(fs, out.target).kind == "dataset"

    def test_killed_runs_staging_is_removed_and_others_are_kept(self, workdir: Path) -> None:
        target = workdir / "out"
        killed = DatasetOutput.prepare(str(target), overwrite=False, run_id="killed")
        Path(killed.start(), "pairs").mkdir()
        # A look-alike paramine did not write, and another target's staging.
        (workdir / ".out.paramine-staging-foreign").mkdir()
        other = DatasetOutput.prepare(str(workdir / "other"), overwrite=False, run_id="o")
        other.start()
        out = DatasetOutput.prepare(str(target), overwrite=False, run_id="next")
        out.start()
        assert siblings(target) == [
            ".other.paramine-staging-o",
            ".out.paramine-staging-foreign",
            ".out.paramine-staging-next",
        ]

    @pytest.mark.pipeline
    def test_a_live_run_on_this_machine_keeps_its_staging(self, workdir: Path) -> None:
        live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
        try:
            busy = DatasetOutput.prepare(str(workdir / "out"), overwrite=False, run_id="busy")
            marker = Path(busy.start(), STAGING_MARKER)
            marker.write_text(json.dumps({**json.loads(marker.read_text()), "pid": live.pid}))
            DatasetOutput.prepare(str(workdir / "out"), overwrite=False, run_id="next").start()
            assert ".out.paramine-staging-busy" in siblings(workdir / "out")
        finally:
            live.kill()
            live.wait()

    def test_a_swap_killed_between_its_renames_is_undone(self, workdir: Path) -> None:
        fs = fsspec.filesystem("file")
        fake_dataset(fs, str(workdir / ".out.paramine-old-killed"), "old")
        out = DatasetOutput.prepare(str(workdir / "out"), overwrite=True)
        assert (workdir / "out" / "pairs" / "part-00000.parquet").read_text() == "old"
        assert inspect_output(fs, out.target).kind == "dataset"
        assert siblings(workdir / "out") == []


class TestSwapObjectStore:
    def test_publish_moves_files_and_the_manifest_last(self, memory_root: str) -> None:
        fs = fsspec.filesystem("memory")
        target = f"memory://{memory_root}/out"
        fake_dataset(fs, f"{memory_root}/out", "old")
        fs.pipe_file(f"{memory_root}/out/rejects/part-00000.parquet", b"old rejects")
        out = DatasetOutput.prepare(target, overwrite=True, beam_sink=False)
        staging = out.start()
        assert staging.startswith("memory://")
        fake_dataset(fs, staging, "new")
        moves: list[str] = []
        original_mv = fs.mv

        def recording_mv(src: str, dst: str, **kwargs: object) -> None:
            moves.append(dst.rsplit("/", 1)[-1])
            original_mv(src, dst, **kwargs)

        fs.mv = recording_mv  # type: ignore[method-assign]
        try:
            out.publish()
        finally:
            del fs.mv
        assert moves[-1] == "manifest.json"
        assert fs.cat_file(f"{memory_root}/out/pairs/part-00000.parquet") == b"new"
        # The old dataset's rejects went with it: the new one wrote none.
        assert sorted(fs.find(f"{memory_root}/out")) == [
            f"{memory_root}/out/manifest.json",
            f"{memory_root}/out/pairs/part-00000.parquet",
        ]
        assert fs.ls(memory_root, detail=False) == [f"{memory_root}/out"]

    def test_an_interrupted_publish_is_paramines_and_needs_overwrite(
        self, memory_root: str
    ) -> None:
        fs = fsspec.filesystem("memory")
        fs.pipe_file(f"{memory_root}/out/{STAGING_MARKER}", b"{}")
        fs.pipe_file(f"{memory_root}/out/pairs/part-00000.parquet", b"half")
        target = f"memory://{memory_root}/out"
        stopped = "unfinished paramine dataset, left by a run stopped while publishing"
        with pytest.raises(OutputError, match=f"{stopped}; pass --overwrite"):
            DatasetOutput.prepare(target, overwrite=False, beam_sink=False)
        out = DatasetOutput.prepare(target, overwrite=True, beam_sink=False)
        with out.writing() as staging:
            fake_dataset(fs, staging, "new")
        assert inspect_output(fs, f"{memory_root}/out").kind == "dataset"
        assert fs.cat_file(f"{memory_root}/out/pairs/part-00000.parquet") == b"new"

    def test_killed_runs_staging_is_removed(self, memory_root: str) -> None:
        target = f"memory://{memory_root}/out"
        DatasetOutput.prepare(target, overwrite=False, beam_sink=False, run_id="k").start()
        DatasetOutput.prepare(target, overwrite=False, beam_sink=False, run_id="n").start()
        fs = fsspec.filesystem("memory")
        assert fs.ls(memory_root, detail=False) == [f"{memory_root}/.out.paramine-staging-n"]


class TestMineOutput:
    """``paramine mine`` end to end: the defects of issue 11 that concern --output."""

    def test_overwrite_refuses_a_folder_paramine_did_not_write(
        self, tmp_path: Path, workdir: Path, tiny_model_dir: Path
    ) -> None:
        # Defect 1: --overwrite deleted the pairs/ and rejects/ of this folder.
        output = workdir / "theirs"
        for name in ("pairs/a.parquet", "rejects/b.parquet", "README.md"):
            (output / name).parent.mkdir(parents=True, exist_ok=True)
            (output / name).write_bytes(f"their {name}".encode())
        before = snapshot(workdir)
        with pytest.raises(OutputError, match="not a paramine dataset"):
            mine(tiny_model_dir, output, str(bitext(tmp_path)), "--overwrite")
        assert snapshot(workdir) == before

    @pytest.mark.pipeline
    def test_overwrite_replaces_an_old_dataset(
        self, tmp_path: Path, workdir: Path, tiny_model_dir: Path
    ) -> None:
        output = workdir / "out"
        mine(tiny_model_dir, output, str(bitext(tmp_path)))
        with pytest.raises(OutputError, match="pass --overwrite"):
            mine(tiny_model_dir, output, str(bitext(tmp_path, OTHER_BITEXT, "other.tsv")))
        manifest = mine(
            tiny_model_dir, output, str(bitext(tmp_path, OTHER_BITEXT, "other.tsv")), "--overwrite"
        )
        pairs, _ = read_pairs(str(output))
        assert manifest.counts["ReadBitext"]["in"] == 2
        assert {pairs.column("sentence_a")[0].as_py(), pairs.column("sentence_b")[0].as_py()} == {
            "Do zobaczenia.",
            "Na razie.",
        }
        assert siblings(output) == []

    @pytest.mark.pipeline
    def test_failed_run_leaves_the_old_dataset_and_no_folder_that_stops_a_retry(
        self, tmp_path: Path, workdir: Path, tiny_model_dir: Path
    ) -> None:
        # Defect 6: a failed run left beam-temp-* folders, and the retry was refused.
        output = workdir / "out"
        mine(tiny_model_dir, output, str(bitext(tmp_path)))
        before = snapshot(workdir)
        (tmp_path / "in" / "bad.en").write_text("One.\nTwo.\nThree.\n", encoding="utf-8")
        (tmp_path / "in" / "bad.pl").write_text("Jeden.\nDwa.\n", encoding="utf-8")
        with pytest.raises(Exception, match="Moses files differ in length"):
            mine(
                tiny_model_dir,
                output,
                str(tmp_path / "in" / "bad"),
                "--on-length-mismatch",
                "error",
                "--overwrite",
            )
        assert snapshot(workdir) == before
        assert read_pairs(str(output))[1].counts["ReadBitext"]["in"] == 5
        manifest = mine(
            tiny_model_dir, output, str(bitext(tmp_path, OTHER_BITEXT, "other.tsv")), "--overwrite"
        )
        assert manifest.counts["ReadBitext"]["in"] == 2
        assert siblings(output) == []

    @pytest.mark.pipeline
    def test_run_failing_after_parquet_is_written_leaves_nothing(
        self, tmp_path: Path, workdir: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def refuse(*args: object, **kwargs: object) -> None:
            raise RuntimeError("the books do not balance")

        monkeypatch.setattr(write_dataset, "finish_manifest", refuse)
        output = workdir / "out"
        with pytest.raises(Exception, match="the books do not balance"):
            mine(tiny_model_dir, output, str(bitext(tmp_path)))
        assert list(workdir.iterdir()) == []
        monkeypatch.undo()
        assert mine(tiny_model_dir, output, str(bitext(tmp_path))).counts["ReadBitext"]["in"] == 5

    @pytest.mark.pipeline
    def test_file_url_output(self, tmp_path: Path, workdir: Path, tiny_model_dir: Path) -> None:
        # Defect 5: --output file:///... failed inside Beam's sink.
        output = workdir / "out"
        manifest = mine(tiny_model_dir, f"file://{output}", str(bitext(tmp_path)))
        assert read_manifest(str(output)).rows == manifest.rows
        assert read_pairs(str(output))[0].num_rows == manifest.rows.pairs > 0
        assert siblings(output) == []

    def test_unwritable_output_fails_before_anything_is_written(
        self, tmp_path: Path, workdir: Path, tiny_model_dir: Path
    ) -> None:
        # Defect 11: an unwritable --output gave a 163-line traceback from inside Beam.
        (workdir / "somefile").write_text("x", encoding="utf-8")
        with pytest.raises(OutputError, match="is a file, not a folder") as error:
            mine(tiny_model_dir, workdir / "somefile" / "out", str(bitext(tmp_path)))
        assert "\n" not in str(error.value)
        assert siblings(workdir / "x") == ["somefile"]

    @pytest.mark.pipeline
    def test_killed_runs_staging_is_cleaned_up_by_the_next_run(
        self, tmp_path: Path, workdir: Path, tiny_model_dir: Path
    ) -> None:
        output = workdir / "out"
        killed = DatasetOutput.prepare(str(output), overwrite=False, run_id="killed")
        Path(killed.start(), "pairs", "beam-temp-part-1").mkdir(parents=True)
        manifest = mine(tiny_model_dir, output, str(bitext(tmp_path)))
        assert manifest.counts["ReadBitext"]["in"] == 5
        assert siblings(output) == []
