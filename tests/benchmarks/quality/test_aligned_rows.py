"""The training rows of a pass counted against the clean input: planted and true lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks.quality.aligned_rows import count_rows, main, true_pairs
from tests.encoders.datasets import make_rows, write_scored_dataset


def _clean_set(folder: Path, n: int) -> Path:
    """A Tatoeba-like folder: eng and pol lines, and a labels file that is not read."""
    folder.mkdir(parents=True)
    (folder / "test.eng").write_text("".join(f"Pivot sentence {i}.\n" for i in range(n)))
    (folder / "test.pol").write_text("".join(f"zdanie {i}\n" for i in range(n)))
    (folder / "test.eng.labels").write_text("eng\n" * n)
    return folder


@pytest.fixture
def noisy_pass(tmp_path: Path) -> tuple[str, Path]:
    """1,000 aligned lines: 800 true ones scoring high, 200 planted scoring as the null."""
    clean = _clean_set(tmp_path / "eng-pol", 1000)
    rng = np.random.default_rng(3)
    lines = [
        (f"Pivot sentence {i}.", f"zdanie {i}", float(rng.uniform(0.9, 1.0))) for i in range(800)
    ]
    # A planted line: a pivot beside another line's candidate.
    lines += [
        (f"Pivot sentence {i}.", f"zdanie {(i + 7) % 1000}", float(rng.uniform(0.0, 1.0)))
        for i in range(800, 1000)
    ]
    return write_scored_dataset(tmp_path / "ds", make_rows(40), lines), clean


def test_the_clean_sets_give_their_line_pairs(tmp_path: Path) -> None:
    clean = _clean_set(tmp_path / "eng-pol", 3)
    assert ("Pivot sentence 2.", "zdanie 2") in true_pairs([clean], "pol")
    with pytest.raises(SystemExit, match=r"eng-pol.*\*\.kab"):
        true_pairs([clean], "kab")


def test_planted_rows_are_counted_at_each_share(noisy_pass: tuple[str, Path]) -> None:
    dataset, clean = noisy_pass
    plain, higher = count_rows(dataset, true_pairs([clean], "pol"), [0.0, 0.02])
    assert plain["false_accept"] == 0.5 and plain["mismatched_share"] is None
    # About half the planted lines of the training split pass the null's median,
    # about a tenth the raised cut (the true lines' floor is the null's 90th percentile).
    assert 60 <= plain["planted"] <= 110 and higher["planted"] < 30
    assert higher["true"] == plain["true"] >= 650  # the held-out tenth of pivots aside
    assert higher["mismatched_share"] == pytest.approx(0.2, abs=0.05)


def test_the_script_prints_the_table(
    noisy_pass: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    dataset, clean = noisy_pass
    assert (
        main([dataset, "--clean", str(clean), "--candidate", "pol", "--true-loss", "0,0.02"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| --aligned-max-true-loss |") and len(lines) == 4
    assert lines[2].startswith("| 0.0 | 0.5 | - |") and lines[3].startswith("| 0.02 | 0.1 |")
