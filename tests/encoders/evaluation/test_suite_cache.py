"""Tests of the suite figures kept in the paramine cache (``suite_cache``).

A model scored on a suite once is read back for the same files, encoding,
data, code and libraries, and scored anew when any of them changes; the
kept figures are the cache's folders, listed and pruned like models.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from paramine.encoders.evaluation import suite_cache, suite_eval
from paramine.encoders.evaluation.suite import load_suite, read_suite
from paramine.encoders.models.cache import cached_folders
from paramine.encoders.models.command import prune

from tests.encoders.evaluation.test_suite import _words_suite, main


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("PARAMINE_CACHE", str(root))
    return root


def _evaluate(model: Path, data: Path, out: Path, *flags: str) -> dict:
    argv = [str(model), "--suite", str(data / "toy.yaml"), "--suite-data", str(data)]
    assert main([*argv, "--backend", "torch", "--device", "cpu", "--json", str(out), *flags]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def _scoring_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scoring a model from here on raises: a figure that comes back was read from the cache."""

    def refuse(*args: object, **kwargs: object) -> dict:
        raise AssertionError("the model was scored again")

    monkeypatch.setattr(suite_eval, "evaluate_on_suite", refuse)


def test_a_model_scored_once_is_read_back_and_listed_in_the_cache(
    tmp_path: Path,
    tiny_model_dir: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _words_suite(tmp_path)
    first = _evaluate(tiny_model_dir, tmp_path, tmp_path / "first.json")
    assert "cached" not in first
    [kept] = [f for f in cached_folders(cache) if f.path.parent.name == "suites"]
    assert kept.path.name.startswith("toy-")
    assert kept.source == f"suite toy of {tiny_model_dir}"

    _scoring_fails(monkeypatch)
    with caplog.at_level(logging.INFO, logger="paramine.encoders.evaluation.suite_cache"):
        second = _evaluate(tiny_model_dir, tmp_path, tmp_path / "second.json")
    assert second.pop("cached")  # when it was scored
    assert second == first
    assert "figures from the cache" in caplog.text

    # Pruned like any cached folder: then the model is scored again.
    lines, failed = prune(cache, 0)
    assert failed == 0 and any(kept.path.name in line for line in lines)
    monkeypatch.undo()
    monkeypatch.setenv("PARAMINE_CACHE", str(cache))
    assert _evaluate(tiny_model_dir, tmp_path, tmp_path / "third.json") == first


@pytest.mark.slow
def test_changed_data_or_model_files_are_scored_anew(
    tmp_path: Path,
    tiny_model_copy: Path,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _words_suite(tmp_path)
    _evaluate(tiny_model_copy, tmp_path, tmp_path / "first.json")
    # One test label changed: another key, so the model is scored again.
    test_file = tmp_path / "one" / "test.txt"
    lines = test_file.read_text(encoding="utf-8").splitlines()
    label, _, text = lines[0].partition(" ")
    lines[0] = f"{1 - int(label)} {text}"
    test_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert "cached" not in _evaluate(tiny_model_copy, tmp_path, tmp_path / "second.json")
    # The model's files changed (a config file rewritten): scored again too.
    config = tiny_model_copy / "config_sentence_transformers.json"
    config.write_text(config.read_text(encoding="utf-8") + " ", encoding="utf-8")
    assert "cached" not in _evaluate(tiny_model_copy, tmp_path, tmp_path / "third.json")
    suites = [f for f in cached_folders(cache) if f.path.parent.name == "suites"]
    assert len(suites) == 3
    # Each of them is read back as it is.
    _scoring_fails(monkeypatch)
    assert "cached" in _evaluate(tiny_model_copy, tmp_path, tmp_path / "fourth.json")


def test_unreadable_kept_figures_are_scored_again_and_replaced(
    tmp_path: Path, tiny_model_dir: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _words_suite(tmp_path)
    first = _evaluate(tiny_model_dir, tmp_path, tmp_path / "first.json")
    [kept] = [f for f in cached_folders(cache) if f.path.parent.name == "suites"]
    (kept.path / suite_cache.FIGURES).write_text("{cut short", encoding="utf-8")
    assert _evaluate(tiny_model_dir, tmp_path, tmp_path / "second.json") == first
    # The folder now holds the figures scored again: the next run reads them back.
    _scoring_fails(monkeypatch)
    again = _evaluate(tiny_model_dir, tmp_path, tmp_path / "third.json")
    assert again.pop("cached") and again == first


def test_no_suite_cache_neither_reads_nor_writes(
    tmp_path: Path, tiny_model_dir: Path, cache: Path
) -> None:
    _words_suite(tmp_path)
    figures = _evaluate(tiny_model_dir, tmp_path, tmp_path / "a.json", "--no-suite-cache")
    assert not (cache / "suites").exists()
    _evaluate(tiny_model_dir, tmp_path, tmp_path / "b.json")  # kept now
    again = _evaluate(tiny_model_dir, tmp_path, tmp_path / "c.json", "--no-suite-cache")
    assert again == figures and "cached" not in again


def test_the_key_follows_every_input_of_the_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _words_suite(tmp_path)
    suite = load_suite(str(tmp_path / "toy.yaml"))
    data = read_suite(suite, str(tmp_path))
    grid = (0.1, 1.0)
    key = suite_cache.suite_key("sha256:aaaa", "torch|none|cpu|''", suite, data, grid)
    assert key == suite_cache.suite_key("sha256:aaaa", "torch|none|cpu|''", suite, data, grid)
    others = {
        suite_cache.suite_key("sha256:bbbb", "torch|none|cpu|''", suite, data, grid),
        suite_cache.suite_key("sha256:aaaa", "openvino|none|cpu|''", suite, data, grid),
        suite_cache.suite_key("sha256:aaaa", "torch|none|cpu|''", suite, data, (0.1, 10.0)),
    }
    first = data["ONE"]["train"]
    data["ONE"]["train"] = type(first)(first.texts, first.second, [*first.labels[:-1], "x"])
    others.add(suite_cache.suite_key("sha256:aaaa", "torch|none|cpu|''", suite, data, grid))
    data["ONE"]["train"] = first
    # Another version of a library the figures run on.
    real = suite_cache._version
    monkeypatch.setattr(suite_cache, "_version", lambda d: "0.0" if d == "numpy" else real(d))
    others.add(suite_cache.suite_key("sha256:aaaa", "torch|none|cpu|''", suite, data, grid))
    assert key not in others and len(others) == 5


def test_the_encoding_names_backend_device_precision_and_prefix() -> None:
    name = suite_eval.encoding_name
    names = {
        name("torch", "none", "cpu", "float32", ""),
        name("torch", "none", "cuda:0", "float32", ""),
        name("torch", "none", "cuda:0", "float16", ""),
        name("openvino", "none", "cpu", "float32", ""),
        name("openvino", "int8", "cpu", "float32", ""),
        name("torch", "none", "cpu", "float32", "query: "),
    }
    assert len(names) == 6
    assert name("torch", "none", "cuda:1", "float16", "") == name(
        "torch", "none", "cuda", "float16", ""
    )


def test_a_cache_that_cannot_be_written_leaves_the_figures_unkept(
    tmp_path: Path,
    tiny_model_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _words_suite(tmp_path)
    # A cache path under a file: no folder can be made there (a read-only
    # mount gives the same OSError; root would write through a chmod).
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("PARAMINE_CACHE", str(blocker / "cache"))
    with caplog.at_level(logging.WARNING, logger="paramine.encoders.evaluation.suite_cache"):
        unkept = _evaluate(tiny_model_dir, tmp_path, tmp_path / "a.json")
    assert "suite figures not kept in the cache" in caplog.text
    assert blocker.read_text(encoding="utf-8") == ""
    # The same figures as a run that keeps them.
    monkeypatch.setenv("PARAMINE_CACHE", str(tmp_path / "cache"))
    assert _evaluate(tiny_model_dir, tmp_path, tmp_path / "b.json") == unkept
