"""A stand-in for e5-small's build (seconds, 465 MB), for tests of the cache logic."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.encoders.models import e5_small


def _write_modules_json(q4: object, dest: Path) -> None:
    (dest / "modules.json").write_text("[]")


def fake_build(monkeypatch: pytest.MonkeyPatch, sha256: str) -> None:
    """Make ``e5_small.materialize`` build a one-file folder, its source hashing to ``sha256``."""
    monkeypatch.setattr(e5_small, "write_sentence_transformers_folder", _write_modules_json)
    monkeypatch.setattr(e5_small, "read_q4_file", lambda path: None)
    monkeypatch.setattr(e5_small, "source_fingerprint", lambda path: sha256)
