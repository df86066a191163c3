"""The figures of a run report, gathered from a dataset's manifest and Parquet files.

``gather_stats`` returns one JSON-ready dict, written as ``stats.json`` and
drawn by ``report.html``; the two always show the same figures. Counts come
from the manifest as they are (the stages' own accounting); distributions
and samples come from the written Parquet files and from what the
calibration recorded in the manifest's ``threshold``.
"""

from __future__ import annotations

import collections
import math
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from paramine.pipelines.core.near_duplicates import (
    DEFAULT_SIMILARITY,
    Shingled,
    near_duplicates,
    pair_shingles,
)
from paramine.pipelines.report.pair_figures import (
    SAMPLE_SIZE,
    groups,
    inflection_share,
    lengths,
    pivot_languages,
    random_pairs,
)
from paramine.schemas.manifest import LEGACY_STAGES, Manifest, read_manifest
from paramine.schemas.reader import read_pairs

STATS_VERSION = "paramine.stats/1"
STATS_NAME = "stats.json"
#: Rejected records shown per reason.
REJECTS_PER_REASON = 3
#: Bins of the kept pairs' score histogram when no calibration set the bins.
SCORE_BINS = 40


def _dataset_file(dataset_url: str, name: str) -> str:
    protocol, sep, path = f"{dataset_url.rstrip('/')}/{name}".partition("://")
    if not sep:
        return posixpath.normpath(protocol)
    return f"{protocol}{sep}{posixpath.normpath(path)}"


def _read_rejects(dataset_url: str, names: Iterable[str]) -> pa.Table | None:
    tables = []
    for name in names:
        fs, path = fsspec.core.url_to_fs(_dataset_file(dataset_url, name))
        tables.append(pq.read_table(path, filesystem=fs))
    return pa.concat_tables(tables) if tables else None


def stage_order(manifest: Manifest) -> list[str]:
    """The manifest's stages in pipeline order (as the run recorded them); others go last."""
    counts = manifest.books.stages
    recorded = [stage["name"] for stage in manifest.stages] or [s.name for s in LEGACY_STAGES]
    known = [s for s in recorded if s in counts]
    return known + sorted(s for s in counts if s not in recorded)


def unchecked(figures: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """Lines a check could not judge and let through, per check and language.

    ``{"language_unchecked.bo": 12}`` -> ``{"language": {"bo": 12}}``.
    """
    out: dict[str, dict[str, int]] = {}
    for key, n in sorted(figures.items()):
        check, _, lang = key.partition("_unchecked.")
        out.setdefault(check, {})[lang] = int(n)
    return out


def funnel(manifest: Manifest) -> dict[str, Any]:
    """Pairs read, kept after each stage, dropped by reason, and written."""
    counts = manifest.books
    stages = [{"stage": name, **counts.stage(name).to_json()} for name in stage_order(manifest)]
    return {
        "read": stages[0]["in"] if stages else 0,
        "stages": stages,
        "written": manifest.rows.pairs,
        "rejected_rows": manifest.rows.rejects or 0,
        "repaired": dict(sorted(counts.note("repairs").items())),
        "unchecked": unchecked(counts.note("unchecked")),
    }


def histogram(values: Sequence[float], edges: Sequence[float]) -> list[int]:
    """Counts of ``values`` in the bins ``edges`` (the last bin includes its right edge)."""
    if len(values) == 0:
        return [0] * (len(edges) - 1)
    return [int(c) for c in np.histogram(np.asarray(values, dtype="float64"), edges)[0]]


def _score_edges(values: Sequence[float], cut: float | None) -> list[float]:
    points = list(values) + ([cut] if cut is not None else [])
    if not points:
        return []
    low, high = float(min(points)), float(max(points))
    if high <= low:
        high = low + 1e-6
    return [round(float(e), 6) for e in np.linspace(low, high, SCORE_BINS + 1)]


def _candidate_scores(pairs: pa.Table) -> tuple[list[float], list[dict[str, Any]]]:
    """Each distinct (pivot, candidate) of the written pairs once, with its score."""
    seen: dict[tuple[str, str], float] = {}
    columns = pairs.select(["pivot_sentence", "sentence_a", "sentence_b", "score_a", "score_b"])
    for row in columns.to_pylist():
        seen.setdefault((row["pivot_sentence"], row["sentence_a"]), float(row["score_a"]))
        seen.setdefault((row["pivot_sentence"], row["sentence_b"]), float(row["score_b"]))
    rows: list[dict[str, Any]] = [
        {"pivot": pivot, "candidate": candidate, "score": round(score, 6)}
        for (pivot, candidate), score in seen.items()
    ]
    return [round(score, 6) for score in seen.values()], rows


def threshold_cut(manifest: Manifest, kept_scores: Sequence[float]) -> dict[str, Any]:
    """The threshold's cut: its value, how it was set, and histograms around it."""
    record = manifest.cut
    cut = record.value
    recorded = record.histograms
    edges = recorded.get("edges") or _score_edges(kept_scores, cut)
    histograms: dict[str, list[int]] = {}
    if edges:
        # Kept scores may lie outside the calibration's bins (it saw a
        # sample): widen the outer bins rather than lose them.
        wide = [-math.inf, *edges[1:-1], math.inf] if recorded else edges
        histograms["kept"] = histogram(kept_scores, wide)
        for name in ("aligned_sample", "mismatched"):
            if name in recorded:
                histograms[name] = list(recorded[name])
    return {
        "name": "threshold",
        "stage": "ThresholdFilter",
        "score": record.score,
        "mode": record.mode,
        "value": cut,
        "max_false_accept": record.max_false_accept,
        # The share of the null (mismatched pairs) at or above the cut.
        "expected_false_accept": record.mismatched_kept,
        "aligned_sample_kept": record.aligned_sample_kept,
        "fallback": record.fallback,
        "summaries": dict(record.summaries),
        "edges": list(edges),
        "histograms": histograms,
        "borderline": dict(record.borderline),
    }


def learned_cuts(manifest: Manifest, kept_scores: Sequence[float]) -> list[dict[str, Any]]:
    """Every cut of the run, as the report draws them: today the threshold alone."""
    return [threshold_cut(manifest, kept_scores)]


def near_duplicate_share(pairs: pa.Table, manifest: Manifest) -> dict[str, Any]:
    """The written pairs that are near-duplicates of another written pair, with examples.

    The run's ``--near-duplicates`` similarity when it dropped them (then
    ``dropped`` holds how many, and few or none are left), else the default.
    """
    similarity = manifest.options.get("near_duplicates") or DEFAULT_SIMILARITY
    columns = pairs.select(["pair_id", "sentence_a", "sentence_b"]).to_pylist()
    by_id = {row["pair_id"]: row for row in columns}
    found = near_duplicates(
        [Shingled(r["pair_id"], pair_shingles(r["sentence_a"], r["sentence_b"])) for r in columns],
        similarity,
    )
    examples = [
        {
            "pair": [by_id[duplicate]["sentence_a"], by_id[duplicate]["sentence_b"]],
            "repeats": [by_id[earlier]["sentence_a"], by_id[earlier]["sentence_b"]],
        }
        for duplicate, earlier in sorted(found.items())[:SAMPLE_SIZE]
    ]
    dropped = manifest.books.dropped("near_duplicate", stage_order(manifest))
    return {
        "similarity": similarity,
        "pairs": len(found),
        "share": round(len(found) / len(columns), 4) if columns else 0.0,
        "dropped": int(dropped),
        "examples": examples,
    }


def reject_samples(rejects: pa.Table | None, n: int = REJECTS_PER_REASON) -> dict[str, list]:
    """The first ``n`` rejected records of each reason, by file and line."""
    if rejects is None:
        return {}
    by_reason: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    rows = sorted(rejects.to_pylist(), key=lambda r: (r["reason"], r["shard"], r["line"]))
    for r in rows:
        if len(by_reason[r["reason"]]) < n:
            by_reason[r["reason"]].append(
                {"record": r["record"][:300], "shard": r["shard"], "line": int(r["line"])}
            )
    return dict(sorted(by_reason.items()))


def timing_figures(timing: Mapping[str, Any] | None, manifest: Manifest) -> dict[str, Any]:
    """Time and throughput of the run, as measured by the launcher (not on disk)."""
    if not timing:
        return {}
    out: dict[str, Any] = {k: v for k, v in timing.items() if k != "stages"}
    seconds = float(timing.get("seconds") or 0)
    order = stage_order(manifest)
    counts = manifest.books
    read = counts.stage(order[0]).taken_in if order else 0
    if seconds > 0:
        out["pairs_read_per_second"] = round(read / seconds, 1)
    stages = []
    # By name: the timing read back from stats.json is key-sorted, and a
    # rebuilt report must be the same file.
    for name, stage_seconds in sorted((timing.get("stages") or {}).items()):
        books = counts.get(name)
        row: dict[str, Any] = {"stage": name, "seconds": round(float(stage_seconds), 3)}
        if books is not None and stage_seconds:
            row["per_second"] = round(books.taken_in / float(stage_seconds), 1)
        stages.append(row)
    out["stages"] = stages
    return out


def first_pass(manifest: Manifest, pairs: pa.Table) -> dict[str, Any] | None:
    """A second pass beside its first: the pairs both have, the new ones, the drops by reason.

    A run that mines with a model paramine trained records the dataset the
    model learned from (``model.training.dataset``, the first pass of a mine
    -> train -> mine loop). Pairs are the same pair where their ``pair_id``s
    are (language and both sentences). None for a run with another model.
    """
    from paramine.schemas.errors import ParamineError

    trained = manifest.model.training
    url = trained.dataset if trained is not None else None
    if not url:
        return None
    try:
        first, first_manifest = read_pairs(url)
    except (ParamineError, OSError) as error:
        return {"dataset": url, "error": f"not readable here: {error}"}
    here = set(pairs.column("pair_id").to_pylist())
    before = set(first.column("pair_id").to_pylist())
    dropped: dict[str, dict[str, dict[str, int]]] = {}
    first_books = first_manifest.books
    for stage in stage_order(manifest):
        now = manifest.books.stage(stage).dropped
        then_books = first_books.get(stage)
        then = then_books.dropped if then_books is not None else {}
        reasons = sorted(set(now) | set(then))
        found = {
            r: {"first_pass": int(then.get(r, 0)), "this_pass": int(now.get(r, 0))} for r in reasons
        }
        if found:
            dropped[stage] = found
    return {
        "dataset": url,
        "first_pass_pairs": len(before),
        "pairs": len(here),
        "also_in_first_pass": len(here & before),
        "new": len(here - before),
        "first_pass_pairs_not_found_again": len(before - here),
        "dropped": dropped,
    }


def gather_stats(
    dataset_url: str,
    manifest: Manifest | None = None,
    timing: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Gather every figure of a dataset's report.

    Args:
        dataset_url: The dataset directory, any fsspec URL.
        manifest: Its manifest, when the caller has it already.
        timing: What the launcher measured: ``seconds`` (wall time of the
            run), optionally ``stages`` (seconds per manifest stage) and
            anything else worth keeping (``workers``, ``runner``).

    Returns:
        The stats, JSON-ready.
    """
    manifest = manifest or read_manifest(dataset_url)
    pairs, _ = read_pairs(dataset_url)
    rejects = _read_rejects(dataset_url, manifest.files.rejects or ())
    kept_scores, candidates = _candidate_scores(pairs)
    cuts = learned_cuts(manifest, kept_scores)
    cut = cuts[0]["value"]
    above = sorted((c for c in candidates if cut is None or c["score"] >= cut), key=_by_score)
    options = manifest.options
    return {
        "stats_version": STATS_VERSION,
        "created_at": manifest.created_at,
        "code_version": manifest.code_version,
        "languages": {
            "pivot": options.get("src_lang"),
            "candidate": options.get("tgt_lang"),
            # The pivot languages the pairs came from (--src-lang auto or a list: several).
            "pivots": pivot_languages(pairs),
        },
        "rows": manifest.rows.to_json(),
        "funnel": funnel(manifest),
        # The prefilter's per-line checks by side: the scripts each side was
        # judged against and where they came from, the languages present,
        # the share each check dropped, and the checks flagged (docs/filters.md).
        "line_checks": dict(manifest.extra.line_checks or {}),
        # A second pass with a model trained on a first (docs/training.md).
        "first_pass": first_pass(manifest, pairs),
        # The rounds of the paramine adapt loop whose last pass this is.
        "adapt": manifest.extra.adapt,
        "cuts": cuts,
        "groups": {**groups(pairs), "inflection_variants": inflection_share(pairs)},
        "near_duplicates": near_duplicate_share(pairs, manifest),
        "lengths": lengths(pairs),
        "samples": {
            "random": random_pairs(pairs),
            "just_above_cut": above[:SAMPLE_SIZE],
            "rejects": reject_samples(rejects),
        },
        "timing": timing_figures(timing, manifest),
        "model": manifest.model.to_json(),
        "options": dict(options),
        "inputs": [shard.to_json() for shard in manifest.inputs],
        "input_bytes": sum(shard.size for shard in manifest.inputs),
        "schema_versions": {
            "manifest": manifest.manifest_version,
            "pairs": manifest.pairs_schema_version,
            "rejects": manifest.rejects_schema_version,
        },
    }


def _by_score(row: Mapping[str, Any]) -> tuple[float, str, str]:
    return (row["score"], row["pivot"], row["candidate"])
