"""Run a benchmark as a user does (``python -m benchmarks...``), and write the inputs it reads."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests.paths import CORPORA, ROOT, TATOEBA

#: The stem of the Tatoeba test sets' files (``<stem>.eng``, ``<stem>.pol``).
TATOEBA_STEM = "tatoeba-test-v2021-08-07"
#: The pairs of the one bench_scale run (fixture ``scale_run``), which bench_floor reads too.
SCALE_PAIRS = 2_000


def run_script(
    module: str, *args: object, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` from the repository root; its output.

    ``MODULE`` is the script's full name (``benchmarks.speed.bench_scale``).
    A fresh interpreter, as a user runs it: the script finds what it imports
    from the package on its own. A non-zero exit fails the test with the end
    of what the script wrote to stderr.
    """
    done = subprocess.run(
        [sys.executable, "-m", module, *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{module} exited {done.returncode}:\n{done.stderr[-6000:]}"
    return done


def markdown_rows(text: str, first_cell: str) -> list[list[str]]:
    """The cells of the Markdown rows of ``text`` whose first cell starts with ``first_cell``."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if cells[0].startswith(first_cell):
                rows.append(cells)
    return rows


def key_values(line: str) -> dict[str, float]:
    """``precision=0.5 recall=1.0`` -> ``{"precision": 0.5, "recall": 1.0}``."""
    return {k: float(v) for k, v in re.findall(r"([\w]+)=([-+\d.e]+)", line)}


def sample_pair(source: Path, folder: Path, lines: int, pivot: str, candidate: str) -> None:
    """Copy ``lines`` lines of a Tatoeba pair's Moses files into ``folder``.

    Two thirds of them are lines of pivots with two or more distinct
    candidates (the only ones that can make a pair), the rest lines of
    pivots seen once; in the file's order.
    """
    pivots = (source / f"{TATOEBA_STEM}.{pivot}").read_text(encoding="utf-8").split("\n")[:-1]
    targets = (source / f"{TATOEBA_STEM}.{candidate}").read_text(encoding="utf-8").split("\n")
    translations: dict[str, set[str]] = defaultdict(set)
    for p, t in zip(pivots, targets[:-1], strict=True):
        translations[p].add(t)
    grouped = [i for i, p in enumerate(pivots) if len(translations[p]) >= 2]
    single = [i for i, p in enumerate(pivots) if len(translations[p]) == 1]
    chosen = sorted(grouped[: lines * 2 // 3] + single[: lines - min(len(grouped), lines * 2 // 3)])
    folder.mkdir(parents=True)
    for suffix, side in ((pivot, pivots), (candidate, targets)):
        text = "".join(side[i] + "\n" for i in chosen)
        (folder / f"{TATOEBA_STEM}.{suffix}").write_text(text, encoding="utf-8")


def link_donors(corpora: Path) -> None:
    """Link the real ces-eng and laser_tatoeba_v1 into a corpora folder: the language donors.

    ``--noise language`` finds them two levels above a pair's directory.
    """
    (corpora / TATOEBA.name).mkdir(parents=True, exist_ok=True)
    (corpora / TATOEBA.name / "ces-eng").symlink_to(TATOEBA / "ces-eng")
    (corpora / "laser_tatoeba_v1").symlink_to(CORPORA / "laser_tatoeba_v1")


def write_tatoeba_sample(corpora: Path, lines: int = 300) -> Path:
    """A few hundred lines of Tatoeba eng-pol, in a folder laid out like ``shared/corpora``.

    The lines as ``sample_pair`` chooses them. Writes the Moses sides
    (``<stem>.eng``, ``<stem>.pol``) and the 4-column ``test.txt`` into
    ``corpora/tatoeba_test_v2021-08-07/eng-pol``, and links the donors of
    ``--noise language`` beside it (``link_donors``).

    Returns:
        The pair's directory, ``.../eng-pol``.
    """
    folder = corpora / TATOEBA.name / "eng-pol"
    sample_pair(TATOEBA / "eng-pol", folder, lines, "eng", "pol")
    english = (folder / f"{TATOEBA_STEM}.eng").read_text(encoding="utf-8").split("\n")[:-1]
    polish = (folder / f"{TATOEBA_STEM}.pol").read_text(encoding="utf-8").split("\n")[:-1]
    rows = "".join(f"eng\tpol\t{en}\t{pl}\n" for en, pl in zip(english, polish, strict=True))
    (folder / "test.txt").write_text(rows, encoding="utf-8")
    link_donors(corpora)
    return folder


def write_pivot_sets_sample(corpora: Path, lines: int = 150) -> list[Path]:
    """Tatoeba x-pol's jpn-pol and eng-pol, ``lines`` lines each, laid out like ``shared/corpora``.

    ``corpora/tatoeba_test_v2021-08-07/x-pol/jpn-pol`` (Japanese pivots) and
    ``.../eng-pol`` (English pivots, with ``test.txt`` beside, as the real
    one has), and the donors of ``--noise language``.

    Returns:
        The two directories to give bench_quality: ``.../x-pol`` and ``.../eng-pol``.
    """
    tatoeba = corpora / TATOEBA.name
    sample_pair(TATOEBA / "x-pol" / "jpn-pol", tatoeba / "x-pol" / "jpn-pol", lines, "jpn", "pol")
    return [tatoeba / "x-pol", write_tatoeba_sample(corpora, lines)]
