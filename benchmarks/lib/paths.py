"""Where the benchmarks find the repository and the shared corpora beside it."""

from __future__ import annotations

from pathlib import Path

#: The repository root: ``python -m benchmarks.<folder>.<script>`` runs from here.
ROOT = Path(__file__).resolve().parents[2]
#: The real corpora beside the checkout (``../shared/corpora``).
CORPORA = ROOT.parent / "shared" / "corpora"
#: The Tatoeba test sets of 2021-08-07 among them, and the stem of their files.
TATOEBA = CORPORA / "tatoeba_test_v2021-08-07"
TATOEBA_STEM = "tatoeba-test-v2021-08-07"
#: The LASER Tatoeba test sets (``tatoeba.<lang>-eng.<lang>``).
LASER = CORPORA / "laser_tatoeba_v1"
