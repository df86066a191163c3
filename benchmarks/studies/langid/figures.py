"""The study's tables: speed, coverage, accuracy, close-language confusions, the check's rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.studies.langid.data import (
    CLOSE_CASES,
    CONFUSION,
    EXTRA_CASES,
    FOLDS,
    HBS,
    ISSUE_CLOSE,
    MIN_BUCKET,
    NEIGHBOURS,
    RULES,
    SETTINGS,
    SLAVIC,
    TRUE_LABELS,
    UNSPACED,
    Rule,
    length_bucket,
)
from benchmarks.studies.langid.detectors import NOT_LANGUAGES, installed_package


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[f"{c:.1f}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    print(
        "  ".join(
            str(h).rjust(w) if i else str(h).ljust(w)
            for i, (h, w) in enumerate(zip(headers, widths, strict=True))
        )
    )
    for row in cells:
        print(
            "  ".join(
                c.rjust(w) if i else c.ljust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    print()


def pct(hits: int, total: int) -> float:
    return 100.0 * hits / total if total else float("nan")


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


class Results:
    """One configuration's guesses, indexed by test set."""

    def __init__(
        self, raw: dict[str, Any], spans: dict[str, range], truth: dict[str, frozenset[str]]
    ) -> None:
        self.raw = raw
        self.truth = truth
        self.tops = {n: list(raw["tops"][s.start : s.stop]) for n, s in spans.items()}
        self.shares = {n: list(raw["shares"][s.start : s.stop]) for n, s in spans.items()}

    def accuracy(self, name: str, keep: Sequence[bool] | None = None) -> float:
        """% of the set's lines (those flagged in ``keep``) whose top guess is right."""
        flags = keep or [True] * len(self.tops[name])
        guesses = [top for top, k in zip(self.tops[name], flags, strict=True) if k]
        return pct(sum(top in self.truth[name] for top in guesses), len(guesses))

    def share_of(self, name: str, labels: frozenset[str]) -> float:
        """% of the set's lines whose top guess is one of ``labels``."""
        return pct(sum(top in labels for top in self.tops[name]), len(self.tops[name]))

    def dropped(
        self, rule: Rule, name: str, declared: frozenset[str], keep: Sequence[bool] | None = None
    ) -> float:
        """% of the lines (flagged in ``keep``) declared ``declared`` that ``rule`` drops."""
        flags = keep or [True] * len(self.tops[name])
        declared = declared.union(*(fold for fold in FOLDS.values() if fold & declared))
        votes = [
            rule.accepts(top, shares, declared)
            for top, shares, k in zip(self.tops[name], self.shares[name], flags, strict=True)
            if k
        ]
        return 100.0 - pct(sum(votes), len(votes))


def _neighbours(truth: frozenset[str]) -> list[str]:
    return [n for label in sorted(truth) for n in NEIGHBOURS.get(label, "").split()]


def knows(known: set[str], labels: frozenset[str]) -> bool:
    """Whether a detector that can name ``known`` can name one of ``labels`` (a fold as one)."""
    return bool(known & labels.union(*(fold for fold in FOLDS.values() if fold & labels)))


def report(
    sets: dict[str, list[str]],
    truth: dict[str, frozenset[str]],
    results: dict[str, Results],
    detail: str,
) -> dict[str, Any]:
    """Prints the tables; returns the summary figures."""
    configs = list(results)
    core = [n for n in sets if n in TRUE_LABELS]  # the shared corpora; macros are over these
    extra = [n for n in sets if n not in TRUE_LABELS]
    buckets = {n: [length_bucket(t) for t in lines] for n, lines in sets.items()}

    def in_bucket(name: str, bucket: int) -> list[bool] | None:
        flags = [b == bucket for b in buckets[name]]
        return flags if sum(flags) >= MIN_BUCKET else None

    summary: dict[str, Any] = {}

    print("== Speed and footprint (a fresh process per configuration, one CPU, sockets refused)")
    print("   CPU us per line, best of the rounds; RSS and peak: MB over the process before import")
    rows = []
    for config, res in results.items():
        raw = res.raw
        package, size = installed_package(config.partition("/")[0])
        rows.append(
            [config, raw["labels"], raw["load_s"], raw["rss_load_mb"], raw["rss_peak_mb"],
             raw["top_us"], raw["shares_us"], size, len(raw["network"]), package]
        )  # fmt: skip
    table(
        ["config", "langs", "load s", "RSS MB", "peak MB", "top1 us", "shares us", "pkg MB",
         "net", "package"],
        rows,
    )  # fmt: skip
    summary["speed"] = {
        c: {k: r.raw[k] for k in ("load_s", "rss_load_mb", "rss_peak_mb", "top_us", "shares_us")}
        for c, r in results.items()
    }

    close = sorted({code for group in ISSUE_CLOSE for code in group.split()})
    print("== Coverage: the languages of the test sets, and of the close groups of issue 44, that")
    print("   each detector can name at all (all its labels, even when restricted; a fold as one).")
    print("   The close languages without lines in the corpora: " + " ".join(
        code for code in close if not any(knows({code}, truth[n]) for n in core)
    ))  # fmt: skip
    rows = []
    coverage: dict[str, dict[str, Any]] = {}
    for config, res in results.items():
        known = set(res.raw["known"]) - NOT_LANGUAGES
        sets_missing = [n for n in core if not knows(known, truth[n])]
        close_missing = [code for code in close if not knows(known, frozenset([code]))]
        coverage[config] = {
            "labels": len(known),
            "sets_known": len(core) - len(sets_missing),
            "sets": len(core),
            "sets_missing": sets_missing,
            "close_known": len(close) - len(close_missing),
            "close": len(close),
            "close_missing": close_missing,
        }
        rows.append(
            [config, len(known), f"{len(core) - len(sets_missing)}/{len(core)}",
             " ".join(sets_missing) or "-", f"{len(close) - len(close_missing)}/{len(close)}",
             " ".join(close_missing) or "-"]
        )  # fmt: skip
    table(["config", "labels", "test sets", "not known", "close langs", "not known"], rows)
    summary["coverage"] = coverage

    print("== Accuracy per test set: % of lines whose top guess is the true language")
    rows = [[n, len(sets[n]), *(results[c].accuracy(n) for c in configs)] for n in core]
    macro = [mean([results[c].accuracy(n) for n in core]) for c in configs]
    rows.append(["macro", sum(len(sets[n]) for n in core), *macro])
    rows += [[n, len(sets[n]), *(results[c].accuracy(n) for c in configs)] for n in extra]
    table(["set", "lines", *configs], rows)
    summary["accuracy_macro"] = dict(zip(configs, macro, strict=True))

    print(f"== Accuracy by length: macro over the sets with >= {MIN_BUCKET} lines in the bucket;")
    print("   ja, zh, th and km (no spaces) left out")
    rows = []
    groups = [("all", [n for n in core if n not in UNSPACED]), ("slavic", list(SLAVIC))]
    # the sets of the close pairs (CLOSE_CASES)
    groups.append(("close", list(dict.fromkeys(s for s, _ in CLOSE_CASES))))
    groups += [(n, [n]) for n in extra]
    by_length: dict[str, list[float]] = {c: [] for c in configs}
    for group, names in groups:
        for bucket, label in enumerate(("<=3 words", "4-7 words", "8+ words")):
            counted = [(n, k) for n in names if (k := in_bucket(n, bucket)) is not None]
            lines_in = sum(sum(k) for _, k in counted)
            scores = [mean([results[c].accuracy(n, k) for n, k in counted]) for c in configs]
            rows.append([f"{group} {label}", lines_in, *scores])
            if group == "all":
                for c, score in zip(configs, scores, strict=True):
                    by_length[c].append(score)
    table(["lines", "n", *configs], rows)
    summary["accuracy_by_length"] = by_length

    print("== Close languages: % of a set's lines whose top guess is each label")
    rows = []
    confusion = list(CONFUSION)
    for n in extra:
        own = sorted(truth[n] | (HBS if truth[n] & HBS else frozenset()))
        confusion.append((n, " ".join(own + _neighbours(truth[n]))))
    for name, guesses in confusion:
        for label in guesses.split():
            rows.append(
                [
                    f"{name} -> {label}",
                    *(results[c].share_of(name, frozenset([label])) for c in configs),
                ]
            )
        if truth[name] & HBS:
            rows.append([f"{name} -> any hbs", *(results[c].share_of(name, HBS) for c in configs)])
    table(["set -> guess", *configs], rows)

    print("== Declared-language check over the shared corpora. FRR: % of true-L lines dropped")
    print("   (recall lost). DET: % of wrong lines declared L that are dropped; the rest pass")
    print("   (precision lost). close: the cases of CLOSE_CASES; en>pl: English declared Polish;")
    print("   *>pl: every non-Polish set declared Polish (macro). hr/sr/bs/sh count as one")
    print("   declared language, and so do no/nb/nn, and ms/id")
    others = [n for n in core if "pl" not in truth[n]]
    rows = []
    checks: dict[str, dict[str, float]] = {}
    for config in configs:
        res = results[config]
        for rule in RULES:
            frr = {n: res.dropped(rule, n, truth[n]) for n in core}
            short = [
                res.dropped(rule, n, truth[n], k)
                for n in core
                if n not in UNSPACED and (k := in_bucket(n, 0)) is not None
            ]
            det = {f"{s}>{d}": res.dropped(rule, s, frozenset([d])) for s, d in CLOSE_CASES}
            worst_frr = max(frr, key=lambda n: frr[n])
            worst_det = min(det, key=lambda k: det[k])
            figures = {
                "frr_macro": mean(list(frr.values())),
                "frr_short": mean(short),
                "frr_pol": frr["pol"],
                "frr_ppc": frr["pol-ppc"],
                "frr_ces": frr["ces"],
                "det_close": mean(list(det.values())),
                "det_en_pl": res.dropped(rule, "eng", frozenset(["pl"])),
                "det_any_pl": mean([res.dropped(rule, n, frozenset(["pl"])) for n in others]),
            }
            checks[f"{config}:{rule.name}"] = figures
            rows.append(
                [config, rule.name, figures["frr_macro"], figures["frr_short"], figures["frr_pol"],
                 figures["frr_ppc"], figures["frr_ces"], f"{frr[worst_frr]:.1f} {worst_frr}",
                 figures["det_close"], f"{det[worst_det]:.1f} {worst_det}", figures["det_en_pl"],
                 figures["det_any_pl"]]
            )  # fmt: skip
    table(
        ["config", "rule", "FRR mac", "FRR<=3w", "FRR pl", "FRR ppc", "FRR cs", "FRR worst",
         "DET close", "DET worst", "DET en>pl", "DET *>pl"],
        rows,
    )  # fmt: skip
    summary["checks"] = checks

    cases = list(CLOSE_CASES) + list(EXTRA_CASES)
    cases += [(n, d) for n in extra for d in _neighbours(truth[n])]
    offered = [c for c in configs if c.partition("/")[0] in SETTINGS]
    if offered:
        summary["settings"] = _settings(sets, truth, results, offered, cases, summary)

    config, _, rule_name = detail.partition(":")
    shown = next((r for r in RULES if r.name == rule_name), None)
    if config not in results or shown is None:
        return summary
    res = results[config]

    def by_length(name: str, declared: frozenset[str]) -> list[object]:
        cells: list[object] = [len(sets[name]), res.dropped(shown, name, declared)]
        for bucket in range(3):
            k = in_bucket(name, bucket)
            cells.append("-" if k is None else res.dropped(shown, name, declared, k))
        return cells

    print(f"== Detail of {detail}: % dropped, by length")
    rows = [[f"FRR {n}", *by_length(n, truth[n])] for n in sets]
    rows += [[f"DET {s} declared {d}", *by_length(s, frozenset([d]))] for s, d in cases]
    table(["case", "lines", "all", "<=3w", "4-7w", "8+w"], rows)
    return summary


def _settings(
    sets: dict[str, list[str]],
    truth: dict[str, frozenset[str]],
    results: dict[str, Results],
    offered: list[str],
    cases: list[tuple[str, str]],
    summary: dict[str, Any],
) -> dict[str, dict[str, Any]]:
    """Prints the detectors paramine offers side by side, each at paramine's rule for it."""
    rules = {c: next(r for r in RULES if r.name == SETTINGS[c.partition("/")[0]]) for c in offered}
    print("== The detectors paramine offers, each at paramine's rule (py3langid: ratio 0.3;")
    print("   heliport: margin 0.75). acc: top guess right, macro over the sets (<=3w: lines of")
    print("   <= 3 words); FRR and DET as above; us: CPU per line of the shares every rule needs")
    figures: dict[str, dict[str, Any]] = {}
    rows = []
    for config in offered:
        check = summary["checks"][f"{config}:{rules[config].name}"]
        raw = results[config].raw
        known = summary["coverage"][config]
        figures[config] = {
            "rule": rules[config].name,
            "accuracy_macro": summary["accuracy_macro"][config],
            "accuracy_short": summary["accuracy_by_length"][config][0],
            "frr_macro": check["frr_macro"],
            "frr_short": check["frr_short"],
            "det_close": check["det_close"],
            "sets_known": known["sets_known"],
            "shares_us": raw["shares_us"],
            "rss_load_mb": raw["rss_load_mb"],
        }
        f = figures[config]
        rows.append(
            [config, f["rule"], f["accuracy_macro"], f["accuracy_short"], f["frr_macro"],
             f["frr_short"], f["det_close"], f"{f['sets_known']}/{known['sets']}", f["shares_us"],
             f["rss_load_mb"]]
        )  # fmt: skip
    table(
        ["config", "rule", "acc mac", "acc<=3w", "FRR mac", "FRR<=3w", "DET close", "sets known",
         "us/line", "RSS MB"],
        rows,
    )  # fmt: skip

    print("== The same, per set and case: % dropped (FRR: the set's own lines; DET: its lines")
    print("   declared a close language)")
    columns = [(results[c], rules[c]) for c in offered]
    rows = [[f"FRR {n}", len(sets[n]), *(r.dropped(rule, n, truth[n]) for r, rule in columns)]
            for n in sets]  # fmt: skip
    rows += [
        [f"DET {s} declared {d}", len(sets[s]),
         *(r.dropped(rule, s, frozenset([d])) for r, rule in columns)]
        for s, d in cases
    ]  # fmt: skip
    table(["case", "lines", *(f"{c}:{rules[c].name}" for c in offered)], rows)
    return figures
