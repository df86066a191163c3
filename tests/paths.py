"""Where the tests find the repository, their own data, and the shared corpora."""

from __future__ import annotations

from pathlib import Path

#: The repository root (the checkout).
ROOT = Path(__file__).resolve().parents[1]
#: Tiny data files kept with the tests.
DATA = ROOT / "tests" / "data"
#: Real corpora beside the checkout (``../shared/corpora``), with their licences.
CORPORA = ROOT.parent / "shared" / "corpora"
#: The Tatoeba test sets of 2021-08-07 among them.
TATOEBA = CORPORA / "tatoeba_test_v2021-08-07"
