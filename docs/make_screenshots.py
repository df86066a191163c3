"""Regenerate docs/report.png from a fresh demo run, with the browser test's own code.

Usage, from the repository root (needs Chromium, as the browser test does)::

    .venv/bin/python docs/make_screenshots.py

Mines the built-in demo (``paramine mine``: the default model, offline) into a
temporary folder, and opens its report.html in headless Chromium through
``tests/browser.py``, the code of the report's browser test, at the report's
width and the height of its first screen. A screenshot is written only when
the page loaded without console errors or requests and its charts are drawn.

docs/progress.png is not made here: it is a terminal, not a page.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

# Before torch is imported: spinning OpenMP threads made encoding 5x slower
# on 2-core machines (shared/DESIGN.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# tests/ is not installed: the browser test's code is imported from the checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paramine.pipelines.cli import main as paramine

from tests.browser import DOCS_WINDOW, find_chromium, render

ROOT = Path(__file__).resolve().parents[1]
REPORT_PNG = ROOT / "docs" / "report.png"
#: The first screen holds the funnel and the score histogram.
FIRST_SCREEN_CHARTS = 2


def main() -> int:
    chromium = find_chromium()
    if chromium is None:
        print(
            "make_screenshots: Chromium is not installed "
            "(apt-get install -y --no-install-recommends chromium)",
            file=sys.stderr,
        )
        return 1
    with tempfile.TemporaryDirectory(prefix="paramine-screenshots-") as workdir:
        # Named as `paramine mine` names the demo's output: the report's header shows it.
        output = Path(workdir) / "paramine-demo"
        code = paramine(["mine", "--output", str(output), "--quiet"])
        if code != 0:
            print(f"make_screenshots: mining the demo failed (exit {code})", file=sys.stderr)
            return code
        shown = render(chromium, output / "report.html", Path(workdir) / "browser", DOCS_WINDOW)
        problems = []
        if shown.console:
            problems.append(f"console: {shown.console}")
        if shown.requests:
            problems.append(f"requests made by the page: {shown.requests}")
        if len(shown.charts) < FIRST_SCREEN_CHARTS:
            problems.append(
                f"{len(shown.charts)} charts drawn on the first screen, "
                f"expected {FIRST_SCREEN_CHARTS}: {shown.charts}"
            )
        if problems:
            print("make_screenshots: not written; " + "; ".join(problems), file=sys.stderr)
            return 1
        shutil.copyfile(shown.screenshot, REPORT_PNG)
    inks = ", ".join(f"{chart.ink:.1%}" for chart in shown.charts)
    print(f"make_screenshots: wrote {REPORT_PNG.relative_to(ROOT)} (charts' ink: {inks})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
