"""Resolving ``--model`` values, the atomic cache, and ``paramine models``."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from paramine.encoders.models import cache as model_cache
from paramine.encoders.models import command as models_command
from paramine.encoders.models import e5_small, hub, registry
from paramine.encoders.models.cache import COMPLETE_MARKER, atomic_build
from paramine.encoders.models.resolve import ResolvedModel, resolve_model

from tests.encoders.fake_e5 import fake_build
from tests.paths import ROOT


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("PARAMINE_CACHE", str(root))
    return root


@pytest.fixture
def empty_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point huggingface_hub at an empty cache, whatever this machine holds."""
    import huggingface_hub.constants

    hub_cache = tmp_path / "hf-hub"
    hub_cache.mkdir()
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub_cache))
    return hub_cache


@pytest.fixture
def memory_model(tiny_model_dir: Path) -> Iterator[str]:
    """The tiny model copied under memory://, removed afterwards."""
    import fsspec

    fs = fsspec.filesystem("memory")
    root = "/paramine-test/tiny"
    for path in sorted(tiny_model_dir.rglob("*")):
        if path.is_file():
            fs.pipe(f"{root}/{path.relative_to(tiny_model_dir).as_posix()}", path.read_bytes())
    yield f"memory://{root}"
    fs.rm("/paramine-test", recursive=True)


# -------------------------------------------------------------- the cache


def test_cache_root_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PARAMINE_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert model_cache.cache_root() == tmp_path / "home" / ".cache" / "paramine"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache.cache_root() == tmp_path / "xdg" / "paramine"
    monkeypatch.setenv("PARAMINE_CACHE", str(tmp_path / "pc"))
    assert model_cache.cache_root() == tmp_path / "pc"
    assert model_cache.cache_root(str(tmp_path / "given")) == tmp_path / "given"


def test_atomic_build_writes_marker_and_reuses(tmp_path: Path) -> None:
    calls: list[Path] = []

    def build(tmp: Path) -> dict[str, str]:
        calls.append(tmp)
        assert tmp.parent == tmp_path and tmp.name.startswith(".out.tmp-")
        (tmp / "weights").write_text("w")
        return {"source": "test"}

    target = tmp_path / "out"
    assert atomic_build(target, build) == target
    assert atomic_build(target, build) == target
    assert len(calls) == 1
    assert json.loads((target / COMPLETE_MARKER).read_text())["source"] == "test"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_atomic_build_uses_the_winner_of_a_race(tmp_path: Path) -> None:
    target = tmp_path / "out"

    def build(tmp: Path) -> dict[str, str]:
        # Another process finishes first, while this one is still building.
        target.mkdir()
        (target / "weights").write_text("theirs")
        (target / COMPLETE_MARKER).write_text("{}")
        (tmp / "weights").write_text("ours")
        return {}

    assert atomic_build(target, build) == target
    assert (target / "weights").read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_atomic_build_replaces_incomplete_and_cleans_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "weights").write_text("half")

    def failing(tmp: Path) -> dict[str, str]:
        (tmp / "weights").write_text("partial")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_build(target, failing)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # temp removed
    assert not model_cache.is_complete(target)

    def good(tmp: Path) -> dict[str, str]:
        (tmp / "weights").write_text("good")
        return {}

    atomic_build(target, good)
    assert (target / "weights").read_text() == "good"
    assert model_cache.is_complete(target)


_BUILDER = """
import os, sys, time
from pathlib import Path
from paramine.encoders.models.cache import atomic_build

def build(tmp):
    (tmp / "pid").write_text(str(os.getpid()))
    time.sleep(0.5)  # both processes are inside build() at the same time
    return {}

print(atomic_build(Path(sys.argv[1]), build))
"""


@pytest.mark.pipeline
def test_atomic_build_two_processes(tmp_path: Path) -> None:
    import subprocess
    import sys

    target = tmp_path / "out"
    root = ROOT
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _BUILDER, str(target)],
            cwd=root,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=60)[0].strip() for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0]
    assert outputs == [str(target), str(target)]
    assert model_cache.is_complete(target)
    assert (target / "pid").read_text() in {str(proc.pid) for proc in procs}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# --------------------------------------------------------------- prefixes


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("intfloat/multilingual-e5-small", "query: "),
        ("intfloat/e5-base-v2", "query: "),
        ("my_e5_large", "query: "),
        ("e5-small", "query: "),
        ("sentence-transformers/LaBSE", ""),
        ("sentence-transformers/paraphrase-multilingual-mpnet-base-v2", ""),
        ("bge5-small", ""),
    ],
)
def test_detect_prefix_by_name(name: str, prefix: str) -> None:
    assert registry.detect_prefix(name) == prefix


def test_detect_prefix_by_folder_prompts(tmp_path: Path) -> None:
    (tmp_path / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "query: ", "document": "passage: "}})
    )
    assert registry.detect_prefix("renamed-model", tmp_path) == "query: "
    (tmp_path / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "Represent this sentence for searching: "}})
    )
    assert registry.detect_prefix("bge-small", tmp_path) == ""


# ------------------------------------------------------------- resolution


def test_local_folder(tiny_model_dir: Path) -> None:
    resolved = resolve_model(str(tiny_model_dir))
    assert resolved.path == str(tiny_model_dir.resolve())
    assert resolved.model_id == str(tiny_model_dir.resolve())
    assert resolved.prefix == ""
    assert resolved.revision is not None and resolved.revision.startswith("sha256:")
    assert resolve_model(str(tiny_model_dir)).revision == resolved.revision


def test_local_revision_follows_content(tiny_model_copy: Path, tiny_model_dir: Path) -> None:
    copy = tiny_model_copy
    before = resolve_model(str(copy)).revision
    assert before == resolve_model(str(tiny_model_dir)).revision  # content, not location
    config = json.loads((copy / "config.json").read_text())
    config["hidden_dropout_prob"] = 0.2
    (copy / "config.json").write_text(json.dumps(config))
    assert resolve_model(str(copy)).revision != before


def test_local_folder_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"neither modules\.json nor config\.json"):
        resolve_model(str(tmp_path))
    (tmp_path / "weights.bin").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        resolve_model(str(tmp_path / "weights.bin"))
    with pytest.raises(ValueError, match="neither a short name"):
        resolve_model("./no/such/folder")
    with pytest.raises(ValueError, match="empty"):
        resolve_model("  ")
    # Errors name the option that gave the model: train's --base, evaluate's MODEL.
    with pytest.raises(ValueError, match=r"^--base '\./no/such/folder' is neither a short name"):
        resolve_model("./no/such/folder", flag="--base")
    with pytest.raises(ValueError, match=r"^MODEL '.*' has neither modules\.json"):
        resolve_model(str(tmp_path), flag="MODEL")


def test_fsspec_folder_is_copied_into_the_cache(
    memory_model: str, tiny_model_dir: Path, cache: Path
) -> None:
    resolved = resolve_model(memory_model)
    folder = Path(resolved.path)
    assert folder.parent == cache / "models"
    assert folder.name.startswith("url-tiny-")
    assert model_cache.is_complete(folder)
    assert resolved.model_id == memory_model
    assert resolved.revision == resolve_model(str(tiny_model_dir)).revision
    for original in tiny_model_dir.rglob("*"):
        if original.is_file():
            copied = folder / original.relative_to(tiny_model_dir)
            assert copied.read_bytes() == original.read_bytes()

    from sentence_transformers import SentenceTransformer

    texts = ["ala ma kota", "the quick brown fox"]
    remote = SentenceTransformer(resolved.path, device="cpu").encode(texts)
    local = SentenceTransformer(str(tiny_model_dir), device="cpu").encode(texts)
    assert remote.tolist() == local.tolist()


def test_fsspec_folder_reused_until_it_changes(memory_model: str, cache: Path) -> None:
    import fsspec

    first = resolve_model(memory_model)
    # A copy is a new folder renamed into place (the marker's mtime is its last use).
    folder = Path(first.path).stat().st_ino
    assert resolve_model(memory_model + "/") == first
    assert Path(first.path).stat().st_ino == folder  # not copied again

    fs = fsspec.filesystem("memory")
    fs.pipe(memory_model.removeprefix("memory://") + "/README.md", b"retrained")
    second = resolve_model(memory_model)
    assert second.path != first.path
    assert second.revision != first.revision
    assert (Path(second.path) / "README.md").read_bytes() == b"retrained"


def test_fsspec_missing_folder(cache: Path) -> None:
    with pytest.raises(ValueError, match="is not a folder"):
        resolve_model("memory://paramine-test/absent")


def test_hub_id_without_hub_names_the_offline_default(
    monkeypatch: pytest.MonkeyPatch, empty_hf_cache: Path
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for spec in ("sentence-transformers/LaBSE", "labse"):
        with pytest.raises(ValueError, match="cannot be reached") as info:
            resolve_model(spec)
        assert "e5-small" in str(info.value)
        assert "HF_HUB_OFFLINE" in str(info.value)


def test_hub_id_with_network_down(monkeypatch: pytest.MonkeyPatch, empty_hf_cache: Path) -> None:
    import huggingface_hub

    def down(self: object, repo_id: str, **kwargs: object) -> None:
        assert kwargs.get("timeout") == hub.HUB_TIMEOUT_S
        raise ConnectionError("Name or service not known")

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", down)
    with pytest.raises(ValueError, match=r"cannot be reached.*ConnectionError") as info:
        resolve_model("intfloat/multilingual-e5-base")
    assert "--model e5-small" in str(info.value)


def test_hub_id_reachable(monkeypatch: pytest.MonkeyPatch, empty_hf_cache: Path) -> None:
    import huggingface_hub

    class Info:
        sha = "0123abcd" * 5

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", lambda self, repo_id, **kw: Info())
    assert resolve_model("intfloat/multilingual-e5-base") == ResolvedModel(
        "intfloat/multilingual-e5-base", "intfloat/multilingual-e5-base", Info.sha, "query: "
    )


def test_hub_id_in_local_hf_cache(monkeypatch: pytest.MonkeyPatch, empty_hf_cache: Path) -> None:
    commit = "f" * 40
    repo = empty_hf_cache / "models--sentence-transformers--LaBSE"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "modules.json").write_text("[]")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resolved = resolve_model("labse")
    assert resolved == ResolvedModel(str(snapshot), "sentence-transformers/LaBSE", commit, "")


def test_e5_small_short_name_routes_to_materialize(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[object] = []

    def fake(cache_dir: object = None) -> tuple[Path, str]:
        seen.append(cache_dir)
        return tmp_path, "sha256:0011"

    monkeypatch.setattr(e5_small, "materialize", fake)
    assert resolve_model("E5-small", cache_dir="/somewhere") == ResolvedModel(
        str(tmp_path), "e5-small", "sha256:0011", "query: ", built_here=True
    )
    assert seen == ["/somewhere"]


# -------------------------------------------------------- paramine models


def test_models_command_lists_names_and_cache(
    cache: Path, capsys: pytest.CaptureFixture[str], empty_hf_cache: Path
) -> None:
    from paramine.pipelines.cli import main as cli_main

    assert cli_main(["models"]) == 0
    out = capsys.readouterr().out
    assert f"cache: {cache / 'models'}" in out
    for name, entry in registry.REGISTRY.items():
        assert name in out
        if entry.hub_id:
            assert f"hub id {entry.hub_id}; not cached" in out
    assert "paramine models --materialize e5-small" in out


def test_models_command_materialize(
    cache: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    empty_hf_cache: Path,
) -> None:
    # The real build is covered in test_e5_small; here only the command's wiring.
    fake_build(monkeypatch, "12" * 32)
    assert models_command.main(["--materialize", "e5-small"]) == 0
    folder = cache / "models" / f"e5-small-{'12' * 8}-{e5_small.library_release()}"
    out = capsys.readouterr().out
    assert f"e5-small: {folder} (revision sha256:{'12' * 8})" in out
    assert f"cached: {folder}" in out

    with pytest.raises(SystemExit):
        models_command.main(["--materialize", "labse"])
    assert "invalid choice" in capsys.readouterr().err


# ------------------------------------------------- the cache's last uses


def _built(target: Path, size: int = 10, days_unused: float = 0.0) -> Path:
    """A folder built by ``atomic_build``, last used ``days_unused`` days ago."""

    def build(tmp: Path) -> dict[str, str]:
        (tmp / "weights").write_bytes(b"w" * size)
        return {"source": "s"}

    atomic_build(target, build)
    when = time.time() - days_unused * 86400
    os.utime(target / COMPLETE_MARKER, (when, when))
    return target


def test_a_use_is_recorded_at_most_hourly_and_never_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _built(tmp_path / "out", days_unused=2)
    atomic_build(target, lambda tmp: pytest.fail("built twice"))
    assert time.time() - model_cache.last_used(target) < 60
    # Used half an hour ago: not written again.
    half_hour_ago = time.time() - 1800
    os.utime(target / COMPLETE_MARKER, (half_hour_ago, half_hour_ago))
    atomic_build(target, lambda tmp: pytest.fail("built twice"))
    assert model_cache.last_used(target) == pytest.approx(half_hour_ago)
    # A cache that cannot be written to is used all the same.
    os.utime(target / COMPLETE_MARKER, (0, 0))

    def refuse(*args: object) -> None:
        raise PermissionError("read-only cache")

    monkeypatch.setattr(model_cache.os, "utime", refuse)
    assert atomic_build(target, lambda tmp: pytest.fail("built twice")) == target
    assert model_cache.last_used(target) == 0


def test_the_offline_default_records_its_use(
    cache: Path, monkeypatch: pytest.MonkeyPatch, empty_hf_cache: Path
) -> None:
    fake_build(monkeypatch, "34" * 32)
    folder = Path(resolve_model("e5-small").path)
    os.utime(folder / COMPLETE_MARKER, (0, 0))
    assert Path(resolve_model("e5-small").path) == folder  # the fast path
    assert time.time() - model_cache.last_used(folder) < 60


def test_prune_removes_only_what_paramine_built_and_nobody_used(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    models = cache / "models"
    _built(models / "url-old-1", size=2_000_000, days_unused=40)
    _built(models / "exports" / "old-onnx-none-2", size=1_000_000, days_unused=31)
    _built(models / "exports" / "fresh-onnx-none-3", days_unused=29)
    # Not paramine's: a folder without the marker, a file beside the folders.
    (models / "users-own").mkdir()
    (models / "users-own" / "notes.txt").write_text("mine")
    os.utime(models / "users-own", (0, 0))
    (models / "e5-small.source.json").write_text("{}")
    # A build that died a day ago, and one under way.
    dead = models / "exports" / ".x.tmp-1-abc"
    dead.mkdir()
    os.utime(dead, (time.time() - 86400,) * 2)
    (models / "exports" / ".y.tmp-2-def").mkdir()

    assert models_command.main(["--prune-unused", "30"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert sorted(p.name for p in models.iterdir()) == [
        "e5-small.source.json",
        "exports",
        "users-own",
    ]
    assert sorted(p.name for p in (models / "exports").iterdir()) == [
        ".y.tmp-2-def",
        "fresh-onnx-none-3",
    ]
    # Last used first, as the listing.
    assert (
        out[0] == "removed models/exports/old-onnx-none-2  1.0 MB, last used 31.0 days ago; from s"
    )
    assert out[1] == "removed models/url-old-1  2.0 MB, last used 40.0 days ago; from s"
    assert out[2] == "removed models/exports/.x.tmp-1-abc (a build that did not finish)"
    assert out[3] == ("removed 2 cached folders (3.0 MB) and 1 temporary ones; kept 1 (0.0 MB)")

    assert models_command.main([]) == 0
    listing = capsys.readouterr().out
    assert "cached folders: 1, 0.0 MB" in listing
    assert "  models/exports/fresh-onnx-none-3  0.0 MB, last used 29.0 days ago; from s" in listing
    with pytest.raises(SystemExit):
        models_command.main(["--prune-unused", "-1"])
    assert "DAYS must be 0 or more" in capsys.readouterr().err


def test_prune_reports_a_folder_it_cannot_remove(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stuck = _built(cache / "models" / "url-stuck-1", days_unused=40)
    _built(cache / "models" / "url-gone-2", days_unused=40)
    rename = os.rename

    def refuse_stuck(src: object, dst: object) -> None:
        if Path(str(src)) == stuck:
            raise PermissionError(13, "Permission denied")
        rename(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(model_cache.os, "rename", refuse_stuck)
    assert models_command.main(["--prune-unused", "30"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert f"could not remove {stuck}: Permission denied" in out
    assert out[-1] == "removed 1 cached folders (0.0 MB) and 0 temporary ones; kept 1 (0.0 MB)"
    # Moved aside, then deleted: no half-removed folder under a name a run would use.
    assert sorted(p.name for p in (cache / "models").iterdir()) == ["url-stuck-1"]
