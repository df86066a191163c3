"""Write a dataset's ``stats.json``, ``report.html`` and ``README.md`` (the card)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import fsspec
from paramine.pipelines.report.card import render_card
from paramine.pipelines.report.html import render_html
from paramine.pipelines.report.stats import STATS_NAME, gather_stats
from paramine.schemas.manifest import Manifest, read_manifest
from paramine.schemas.storage import atomic_write

REPORT_NAME = "report.html"
CARD_NAME = "README.md"


def _file(dataset_url: str, name: str) -> str:
    return f"{dataset_url.rstrip('/')}/{name}"


def recorded_timing(dataset_url: str) -> dict[str, Any] | None:
    """The launcher's timing kept in an earlier ``stats.json``, if there is one.

    Time is measured during the run and is nowhere else on disk, so a rebuilt
    report keeps it from the stats the run wrote.
    """
    fs, path = fsspec.core.url_to_fs(_file(dataset_url, STATS_NAME))
    if not fs.exists(path):
        return None
    with fs.open(path, "r", encoding="utf-8") as f:
        try:
            previous = json.load(f)
        except json.JSONDecodeError:
            return None
    timing = previous.get("timing_recorded")
    return dict(timing) if timing else None


def build_report(
    dataset_url: str,
    manifest: Manifest | None = None,
    timing: Mapping[str, Any] | None = None,
    published_as: str | None = None,
) -> dict[str, Any]:
    """Write ``stats.json``, ``report.html`` and the card ``README.md`` beside the manifest.

    Args:
        dataset_url: A finished dataset directory (it has a manifest), any fsspec URL.
        manifest: Its manifest, when the caller has it already.
        timing: What the launcher measured (``seconds``, and ``stages``:
            seconds per manifest stage, where known); ``None`` keeps the timing
            of an earlier report of this dataset.
        published_as: Where the dataset will live, when the report is built
            in a staging folder before the swap: the page is titled after it.

    Returns:
        The stats written to ``stats.json``.
    """
    manifest = manifest or read_manifest(dataset_url)
    if timing is None:
        timing = recorded_timing(dataset_url)
    stats = gather_stats(dataset_url, manifest, timing)
    # The raw measurement too, so that a rebuild starts from the same input.
    stats["timing_recorded"] = dict(timing) if timing else None
    where = published_as or dataset_url
    title = where if "://" in where else _title(where)
    atomic_write(
        _file(dataset_url, STATS_NAME),
        json.dumps(stats, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
    )
    atomic_write(_file(dataset_url, REPORT_NAME), render_html(stats, title))
    atomic_write(_file(dataset_url, CARD_NAME), render_card(stats, manifest.files.to_json()))
    return stats


def _title(path: str) -> str:
    import os

    return os.path.basename(os.path.abspath(path)) or path
