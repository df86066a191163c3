"""Mined pairs against Tatoeba's gold groups: paramine, monolingual kNN mining, the paper's method.

**The sets.**

- ``eng-pol``: Tatoeba eng-pol (10,099 pairs), English pivots.
- ``x-pol``: the 28 Tatoeba x-pol sets and eng-pol in one run
  (``--src-lang auto``): pivots in 29 languages.
- ``eng-pol-lexical``: eng-pol with 20% of its Polish lines replaced by the
  translation of the English line sharing the most words (bench_quality's
  lexical noise, seed 13): wrong but plausible lines, the misalignment of
  real dumps. On a clean set every pivot method is right by construction
  (each written pair translates its row's pivot); this set tests the cut.

**Gold groups.** A pivot is one sentence in one language: its language
(``pivot_language`` of the file's language code, so Tatoeba's ``jpn``,
``jpn_Hani`` and ``jpn_Hira`` sets, which hold the same Japanese sentences,
are one language; ``cmn_Hans``, ``cmn_Hant`` and ``zho`` one Chinese) and its
normalized, casefolded text (paramine's ``group_key``). Its gold group is
the set of normalized Polish lines aligned with it, lines replaced by noise
excepted. With several pivot languages a Polish sentence can translate
pivots in several languages, and a pair is right when **both sentences
translate one pivot, in any language** (they share a gold group). Gold
groups are not closed over shared sentences: two sentences that each share
a group with a third, but none with each other, are not a right pair (the
chain can join unrelated meanings through a short, ambiguous line). How
many pairs that closure would add is reported too (``right_by_components``).

**The figures** of each method's output pairs:

- precision: right pairs / pairs;
- recall, bench_quality's definition (pivot methods): the gold candidates
  of pivots with two or more of them, found in a written pair under that
  pivot (its row), out of all of them;
- recall, any row: the same candidates, found in a pair with another gold
  candidate of the same pivot, whatever the row's pivot (or none: kNN).
  For pivot methods it is at least bench_quality's (it also counts a pair
  written once under another pivot with the same candidates).

**The methods.**

- paramine, its defaults (``paramine mine``);
- monolingual kNN: ``sentence_transformers.util.paraphrase_mining`` over the
  distinct Polish lines (normalized as paramine normalizes), with the same
  model and prefix, its defaults otherwise (batch 32, top_k 100, the best
  500,000 pairs); its top N pairs by score, N the number paramine writes on
  the set. Called as its two halves (``model.encode`` with the prompt, then
  ``paraphrase_mining_embeddings``), which is what it does, to time them
  apart. Also the top N after dropping pairs that paramine's post-filter
  would (equal after normalization, near-equal): the stronger peer.
  sentence-transformers is one of paramine's dependencies, so it runs in
  paramine's environment;
- the paper's method (Dadas 2022): a fixed 0.7 cosine on every aligned pair,
  then grouping and pairing: ``paramine mine --threshold 0.7 --score cosine
  --rival-margin off --group-support off --coherence-min-group off`` (the
  group checks run only with ``auto`` in any case), with
  ``--write-scored`` so that every pair is scored and every text encoded,
  as the paper did (the pairs written are the same without it). paramine's
  prefilter and post-filter still run.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paramine.pipelines.core.groups import PostFilterOptions, group_key
from paramine.pipelines.core.text import canonical_lang, normalize, trivial_reason

from benchmarks.quality.peers.measure import run_measured
from benchmarks.quality.peers.prefilter import sample_moses

TATOEBA_STEM = "tatoeba-test-v2021-08-07"
SETS = ("eng-pol", "x-pol", "eng-pol-lexical")
#: paramine's post-filter's near-equal cut (``--near-equal`` default).
NEAR_EQUAL = PostFilterOptions.near_equal
#: The paper's method as paramine mine flags.
#: The group checks run only with ``--threshold auto``; named off all the same.
PAPER_FLAGS = ("--threshold", "0.7", "--score", "cosine", "--rival-margin", "off",
               "--group-support", "off", "--coherence-min-group", "off",
               "--write-scored")  # fmt: skip

GroupKey = tuple[str, str]


@dataclass
class Gold:
    """Tatoeba's gold groups: each pivot's original candidates, and each candidate's pivots."""

    groups: dict[GroupKey, set[str]] = field(default_factory=lambda: defaultdict(set))
    pivots_of: dict[str, set[GroupKey]] = field(default_factory=lambda: defaultdict(set))

    def add(self, pivot_lang: str, pivot: str, candidate: str) -> None:
        """One original aligned line (raw text; normalized here)."""
        pivot, candidate = normalize(pivot), normalize(candidate)
        if not pivot or not candidate:
            return
        key = group_key(canonical_lang(pivot_lang), pivot)
        self.groups[key].add(candidate)
        self.pivots_of[candidate].add(key)

    def right(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` translate one pivot (in any language)."""
        return bool(self.pivots_of.get(a, set()) & self.pivots_of.get(b, set()))

    def components(self) -> dict[str, int]:
        """Each candidate's connected component over shared pivots (union-find)."""
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for members in self.groups.values():
            first, *rest = sorted(members)
            for other in rest:
                parent[find(other)] = find(first)
        roots: dict[str, int] = {}
        return {c: roots.setdefault(find(c), len(roots)) for c in self.pivots_of}


@dataclass
class QualitySet:
    """A set to mine: paramine's inputs, the candidate side for kNN, the gold groups."""

    name: str
    inputs: list[str]
    src_lang: str
    lines: int
    candidates: list[str]
    gold: Gold
    note: str = ""


def _moses_sides(directory: Path) -> tuple[Path, str]:
    """A Tatoeba pair directory's Moses prefix and its pivot language code (the non-Polish side)."""
    suffixes = sorted(p.name[len(TATOEBA_STEM) + 1 :] for p in directory.glob(f"{TATOEBA_STEM}.*"))
    others = [s for s in suffixes if s not in ("pol", "labels") and not s.endswith(".labels")]
    if "pol" not in suffixes or len(others) != 1:
        raise SystemExit(f"{directory}: expected {TATOEBA_STEM}.pol and one pivot side")
    return directory / TATOEBA_STEM, others[0]


def _read_pair(prefix: Path, pivot_suffix: str) -> list[tuple[str, str]]:
    with (
        Path(f"{prefix}.{pivot_suffix}").open(encoding="utf-8") as pivots,
        Path(f"{prefix}.pol").open(encoding="utf-8") as candidates,
    ):
        return [(p.rstrip("\n"), c.rstrip("\n")) for p, c in zip(pivots, candidates, strict=True)]


def build_set(name: str, corpora: Path, workdir: Path, sample: int | None) -> QualitySet:
    """The set ``name`` (``SETS``) from shared/corpora; with ``sample``, N lines of each pair."""
    tatoeba = corpora / "tatoeba_test_v2021-08-07"
    eng_pol, _ = _moses_sides(tatoeba / "eng-pol")
    here = workdir / "sets" / name
    if name == "eng-pol":
        prefix = sample_moses(eng_pol, ("eng", "pol"), here / "eng-pol" / TATOEBA_STEM, sample)
        return _from_pairs(name, [(prefix, "eng")], [str(prefix)], "en")
    if name == "x-pol":
        pairs, inputs = [], []
        for directory in sorted(p for p in (tatoeba / "x-pol").iterdir() if p.is_dir()):
            prefix, pivot = _moses_sides(directory)
            copy = here / "x-pol" / directory.name / TATOEBA_STEM
            pairs.append((sample_moses(prefix, (pivot, "pol"), copy, sample), pivot))
        # The brief's command: the x-pol folder and eng-pol's Moses prefix.
        inputs.append(str(tatoeba / "x-pol") if sample is None else str(here / "x-pol"))
        prefix = sample_moses(eng_pol, ("eng", "pol"), here / "eng-pol" / TATOEBA_STEM, sample)
        pairs.append((prefix, "eng"))
        inputs.append(str(prefix))
        return _from_pairs(name, pairs, inputs, "auto")
    if name == "eng-pol-lexical":
        from benchmarks.quality.noisy_corpus import corrupted_pair

        source = sample_moses(eng_pol, ("eng", "pol"), here / "clean" / TATOEBA_STEM, sample)
        pivots, corrupted, corpus = corrupted_pair(source.parent, "eng", "lexical", 0.2, 13)
        prefix = here / "bench"
        prefix.parent.mkdir(parents=True, exist_ok=True)
        Path(f"{prefix}.en").write_text("\n".join(pivots) + "\n", encoding="utf-8")
        Path(f"{prefix}.pl").write_text("\n".join(corrupted) + "\n", encoding="utf-8")
        gold = Gold()
        for pivot, candidate, replaced in zip(pivots, corrupted, corpus.replaced, strict=True):
            if not replaced:
                gold.add("en", pivot, candidate)
        return QualitySet(
            name, [str(prefix)], "en", len(pivots), _distinct(corrupted), gold,
            f"{sum(corpus.replaced):,} of {len(pivots):,} Polish lines replaced (lexical, seed 13)",
        )  # fmt: skip
    raise SystemExit(f"unknown set {name!r}; sets are {', '.join(SETS)}")


def _distinct(lines: Iterable[str]) -> list[str]:
    """The distinct non-empty normalized lines, in first-seen order."""
    return [t for t in dict.fromkeys(normalize(line) for line in lines) if t]


def _from_pairs(
    name: str, pairs: list[tuple[Path, str]], inputs: list[str], src_lang: str
) -> QualitySet:
    gold = Gold()
    candidates: list[str] = []
    lines = 0
    for prefix, pivot_suffix in pairs:
        for pivot, candidate in _read_pair(prefix, pivot_suffix):
            gold.add(pivot_suffix, pivot, candidate)
            candidates.append(candidate)
            lines += 1
    return QualitySet(name, inputs, src_lang, lines, _distinct(candidates), gold)


# ------------------------------------------------------------------ scoring


def evaluate(
    gold: Gold, pairs: list[tuple[str, str]], rows: list[tuple[str, str]] | None = None
) -> dict[str, Any]:
    """Precision and recall of output pairs (the module's definitions).

    Args:
        gold: The set's gold groups.
        pairs: The output pairs' two sentences (normalized).
        rows: Each pair's pivot language and pivot sentence, for a pivot
            method; ``None`` for kNN (no bench_quality recall then).
    """
    right = [gold.right(a, b) for a, b in pairs]
    component = gold.components()
    by_component = sum(
        1
        for (a, b), ok in zip(pairs, right, strict=True)
        if not ok and a in component and component.get(a) == component.get(b)
    )
    eligible = [(k, c) for k, members in gold.groups.items() if len(members) >= 2 for c in members]
    partners: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        partners[a].add(b)
        partners[b].add(a)
    found_any = sum(1 for k, c in eligible if (partners.get(c, set()) - {c}) & gold.groups[k])
    result: dict[str, Any] = {
        "pairs": len(pairs),
        "right": sum(right),
        "precision": sum(right) / len(pairs) if pairs else None,
        "right_by_components": sum(right) + by_component,
        "eligible": len(eligible),
        "recall_any_row": found_any / len(eligible) if eligible else None,
        "recall": None,
    }
    if rows is not None:
        mined = {
            (group_key(lang, pivot), sentence)
            for (a, b), (lang, pivot) in zip(pairs, rows, strict=True)
            for sentence in (a, b)
        }
        found = sum(1 for kc in eligible if kc in mined)
        result["recall"] = found / len(eligible) if eligible else None
        row_right = sum(
            1
            for (a, b), (lang, pivot) in zip(pairs, rows, strict=True)
            if {a, b} <= gold.groups.get(group_key(lang, pivot), set())
        )
        # bench_quality's precision: both sentences original translations of the row's pivot.
        result["precision_row_pivot"] = row_right / len(pairs) if pairs else None
    return result


# ------------------------------------------------------------------ methods


def run_mine(
    qset: QualitySet, model: str, flags: list[str], out: Path, timeout: float,
    reuse: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """``paramine mine`` on the set in a process of its own; its figures, pairs and rows.

    With ``reuse``, a finished earlier run's dataset and figures are read instead.
    """
    from paramine.schemas.reader import read_pairs

    command = [
        sys.executable, "-m", "paramine.pipelines.cli", "mine", *qset.inputs,
        "--src-lang", qset.src_lang, "--tgt-lang", "pl", "--output", str(out), "--overwrite",
        "--model", model, "--quiet", "--runner", "FnApiRunner", *flags,
    ]  # fmt: skip
    reuse = reuse and (out / "manifest.json").exists()
    measured = run_measured(command, out.with_suffix(".log"), timeout, reuse=reuse)
    result: dict[str, Any] = {"run": measured.as_dict(), "flags": flags}
    if measured.returncode != 0:
        result["error"] = f"paramine mine exited {measured.returncode}; see {measured.log}"
        return result
    table, manifest = read_pairs(str(out))
    columns = table.select(["sentence_a", "sentence_b", "pivot_lang", "pivot_sentence"])
    rows = columns.to_pylist()
    result["pairs_list"] = [(r["sentence_a"], r["sentence_b"]) for r in rows]
    result["rows"] = [(r["pivot_lang"], r["pivot_sentence"]) for r in rows]
    encoding = manifest.extra.encoding or {}
    result["texts_encoded"] = encoding.get("texts_encoded")
    result["pairs_read"] = manifest.books.stage("ReadBitext").taken_in
    result["cut"] = manifest.cut.value
    return result


def knn_child(args: dict[str, Any]) -> int:
    """paraphrase_mining over the texts, in the process ``run_knn`` measures; writes its top pairs.

    ``args``: ``texts`` (a JSON file of the texts), ``model``, ``top`` (N),
    ``out`` (the JSON written: the top N pairs, the top N without trivial
    pairs, the seconds of each half).
    """
    import time

    import torch
    from paramine.encoders.models.resolve import resolve_model
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.util import paraphrase_mining_embeddings

    texts = json.loads(Path(args["texts"]).read_text())
    resolved = resolve_model(args["model"])
    model = SentenceTransformer(resolved.path, device="cpu")
    wall, cpu = time.perf_counter(), time.process_time()
    # paraphrase_mining(model, texts, prompt=...) is exactly these two calls.
    embeddings = model.encode(
        texts, batch_size=32, convert_to_tensor=True, prompt=resolved.prefix or None
    )
    encode = (time.perf_counter() - wall, time.process_time() - cpu)
    wall, cpu = time.perf_counter(), time.process_time()
    mined = paraphrase_mining_embeddings(embeddings)
    mine = (time.perf_counter() - wall, time.process_time() - cpu)
    top = int(args["top"])
    ranked = [(float(score), texts[i], texts[j]) for score, i, j in mined]
    plain = ranked[:top]
    nontrivial = [r for r in ranked if not trivial_reason(r[1], r[2], NEAR_EQUAL)][:top]
    result = {
        "texts_encoded": len(texts),
        "encode_wall_s": encode[0], "encode_cpu_s": encode[1],
        "mining_wall_s": mine[0], "mining_cpu_s": mine[1],
        "pairs_returned": len(mined),
        "torch_threads": torch.get_num_threads(),
        "model": resolved.path, "prefix": resolved.prefix,
        "top": [[a, b, s] for s, a, b in plain],
        "top_nontrivial": [[a, b, s] for s, a, b in nontrivial],
    }  # fmt: skip
    Path(args["out"]).write_text(json.dumps(result))
    return 0


def run_knn(
    qset: QualitySet, model: str, top: int, workdir: Path, timeout: float, reuse: bool = False
) -> dict[str, Any]:
    """Monolingual kNN mining of the set's Polish side, in a process of its own.

    With ``reuse``, an earlier run's pairs and figures are read instead, where
    it was asked for the same texts, model and number of pairs.
    """
    texts = workdir / "knn-texts.json"
    out = workdir / "knn.json"
    args = workdir / "knn-args.json"
    asked = {"texts": str(texts), "model": model, "top": top, "out": str(out)}
    reuse = (
        reuse
        and out.exists()
        and args.exists()
        and json.loads(args.read_text()) == asked
        and json.loads(texts.read_text()) == qset.candidates
    )
    if not reuse:
        texts.write_text(json.dumps(qset.candidates))
        args.write_text(json.dumps(asked))
    command = [sys.executable, "-m", "benchmarks.quality.peers.bench_peers", "--child", "knn"]
    command.append(str(args))
    measured = run_measured(command, workdir / "knn.log", timeout, reuse=reuse)
    result: dict[str, Any] = {"run": measured.as_dict()}
    if measured.returncode != 0:
        result["error"] = f"the kNN child exited {measured.returncode}; see {measured.log}"
        return result
    result.update(json.loads(out.read_text()))
    return result


def run_set(
    qset: QualitySet, model: str, workdir: Path, timeout: float, methods: tuple[str, ...],
    reuse: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Mine one set with each method; return each method's figures and scores.

    paramine runs first: kNN is judged at the number of pairs it writes.
    ``reuse``: take finished earlier runs from ``workdir`` (``run_mine``, ``run_knn``).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {
        "lines": qset.lines,
        "distinct_candidates": len(qset.candidates),
        "gold_pivots": len(qset.gold.groups),
        "gold_pivots_with_two": sum(1 for g in qset.gold.groups.values() if len(g) >= 2),
        "note": qset.note,
        "methods": {},
    }
    methods_out = out["methods"]
    default = run_mine(qset, model, [], workdir / "paramine", timeout, reuse)
    # Before _scored takes the pairs out of the result.
    n = len(default.get("pairs_list", []))
    methods_out["paramine"] = _scored(qset, default)
    if "knn" in methods:
        knn = run_knn(qset, model, n, workdir, timeout, reuse)
        if "error" not in knn:
            plain = {**knn, "pairs_list": [(a, b) for a, b, _ in knn["top"]]}
            nontrivial = {**knn, "pairs_list": [(a, b) for a, b, _ in knn["top_nontrivial"]]}
            methods_out["knn"] = _scored(qset, plain, pivots=False)
            methods_out["knn_nontrivial"] = _scored(qset, nontrivial, pivots=False)
        else:
            methods_out["knn"] = knn
    if "paper" in methods:
        paper = run_mine(qset, model, list(PAPER_FLAGS), workdir / "paper", timeout, reuse)
        methods_out["paper"] = _scored(qset, paper)
    return out


def _scored(qset: QualitySet, result: dict[str, Any], pivots: bool = True) -> dict[str, Any]:
    """A method's figures with its scores; its pairs themselves left out of the report."""
    if "error" in result:
        return result
    pairs = result.pop("pairs_list")
    rows = result.pop("rows", None) if pivots else None
    for key in ("top", "top_nontrivial"):
        result.pop(key, None)
    return {**result, **evaluate(qset.gold, pairs, rows)}
