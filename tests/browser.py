"""Headless Chromium for the run report: open a page, screenshot it, find its charts.

The report's browser test and ``docs/make_screenshots.py`` share this code, so
the screenshot in docs/ is taken, and checked, the way the test takes it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Flags that keep Chromium's own services (sync, updates, translation) off the net log.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
]

#: (width, height) in pixels. The width is the report's CSS max-width; the
#: height holds every chart of a report (the demo's last chart ends at
#: 3,200 px; the samples and run tables below it fill 6,500). A taller window
#: costs time: 8,000 px took 6.8 s a page here, 5,000 px 3.6 s.
PAGE_WINDOW = (1100, 5000)
#: docs/report.png: the report's first screen, the funnel and the score histogram.
DOCS_WINDOW = (1100, 1900)

#: A pixel is blank when every channel is at least this: white, and the
#: near-white fill of table headers (#f6f8fa).
BLANK_FLOOR = 240
#: Drawn pixels closer than this belong to one chart: an axis label sits
#: 10-20 px below its axes, while text and tables separate two charts.
CHART_GAP_PX = 32

# visibility keeps the layout: the page with its charts hidden differs from
# the page exactly where the charts are drawn.
HIDE_CHARTS = "<style>svg { visibility: hidden; }</style>"


@dataclass(frozen=True)
class ChartArea:
    """A box of a screenshot in which a chart is drawn, in pixels (right, bottom exclusive)."""

    left: int
    top: int
    right: int
    bottom: int
    ink: float  # share of the box's pixels that are not blank

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top


@dataclass(frozen=True)
class Rendering:
    """What headless Chromium made of a page."""

    dom: str  # the DOM once loaded, serialized
    console: list[str]  # console lines: script errors, refused requests (CSP)
    requests: list[str]  # URLs that the page itself requested
    screenshot: Path
    charts: list[ChartArea]  # top to bottom, then left to right
    ink: float  # share of the whole screenshot's pixels that are not blank


def find_chromium() -> str | None:
    """The Chromium executable on PATH (Debian's ``chromium``, Ubuntu's name too), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def render(
    chromium: str, page: Path, workdir: Path, window: tuple[int, int] = PAGE_WINDOW
) -> Rendering:
    """Open ``page`` in headless Chromium: its DOM, console, requests, a screenshot, its charts.

    Chromium runs twice: on the page (DOM, console, net log and screenshot in
    one load) and on a copy in ``workdir`` whose SVGs are hidden; the charts
    are where the two screenshots differ.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    profile = workdir / "profile"
    netlog = workdir / "netlog.json"
    screenshot = workdir / "screenshot.png"
    done = _open(
        chromium, page, profile, screenshot, window, "--dump-dom", f"--log-net-log={netlog}"
    )
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    # Requests the page made have its (opaque) origin as initiator; Chromium's
    # own background requests have none ("not an origin").
    events = json.loads(netlog.read_text(encoding="utf-8"))["events"]
    requests = [
        e["params"]["url"]
        for e in events
        if "url" in e.get("params", {})
        and e["params"].get("initiator", "not an origin") != "not an origin"
    ]
    hidden_page = workdir / f"{page.stem}.charts-hidden.html"
    hidden_page.write_text(hide_charts(page.read_text(encoding="utf-8")), encoding="utf-8")
    hidden = workdir / "charts-hidden.png"
    _open(chromium, hidden_page, profile, hidden, window)
    shown = read_png(screenshot)
    return Rendering(
        dom=done.stdout,
        console=console,
        requests=requests,
        screenshot=screenshot,
        charts=chart_areas(shown, read_png(hidden)),
        ink=float(np.mean(~blank(shown))),
    )


def _open(
    chromium: str,
    page: Path,
    profile: Path,
    screenshot: Path,
    window: tuple[int, int],
    *flags: str,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={profile}",
            f"--window-size={window[0]},{window[1]}",
            f"--screenshot={screenshot}",
            *flags,
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def hide_charts(html: str) -> str:
    """The page with a style that hides its SVGs, placed last in its head."""
    if "</head>" not in html:
        raise ValueError("the page has no </head> to put the chart-hiding style before")
    return html.replace("</head>", HIDE_CHARTS + "</head>", 1)


def read_png(path: Path) -> np.ndarray:
    """A screenshot's pixels, (height, width, 3) uint8."""
    # Pillow is apache-beam's own dependency, so it is there wherever paramine is installed.
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def blank(pixels: np.ndarray) -> np.ndarray:
    """(height, width) bool: True where a pixel is white or near-white."""
    return pixels.min(axis=2) >= BLANK_FLOOR


def chart_areas(shown: np.ndarray, hidden: np.ndarray) -> list[ChartArea]:
    """The boxes where ``shown`` differs from the same page with its charts hidden.

    Bands of rows that differ are split into boxes by the columns that differ,
    so charts side by side are two boxes.
    """
    if shown.shape != hidden.shape:
        raise ValueError(f"screenshots of different sizes: {shown.shape} and {hidden.shape}")
    drawn = (shown != hidden).any(axis=2)  # (height, width)
    empty = blank(shown)
    areas = []
    for top, bottom in _runs(drawn.any(axis=1)):
        for left, right in _runs(drawn[top:bottom].any(axis=0)):
            ink = float(np.mean(~empty[top:bottom, left:right]))
            areas.append(ChartArea(left, top, right, bottom, ink))
    return areas


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of the runs of True in a 1-d mask, bridging gaps up to CHART_GAP_PX."""
    where = np.flatnonzero(mask)
    if where.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(where) > CHART_GAP_PX)
    starts = [int(where[0]), *(int(s) for s in where[breaks + 1])]
    ends = [*(int(e) + 1 for e in where[breaks]), int(where[-1]) + 1]
    return list(zip(starts, ends, strict=True))
