"""bench_quality's corpus of several Tatoeba pairs that share a candidate language.

The several-pivot Polish dataset (``paramine mine x-pol eng-pol/... --src-lang
auto --tgt-lang pl``) reads 29 Moses pairs, each a pivot language beside
Polish. Here each such pair (a *set*) is read, a share of its Polish lines is
replaced with noise (as ``noisy_corpus`` does for one pair, with the same
seed in every set; a pair already read in an earlier set gets that set's
outcome, so a misaligned line is misaligned in every copy of it), and the
sets become one ``Corpus`` whose lines carry
their pivot's language. The noised sets are written back as Moses pairs
with their own suffixes, so that one ``paramine mine --src-lang auto`` reads
each file's pivot language from its name, as the real command does.

Gold groups are keyed as paramine groups candidates: the language part of
the pivot's canonical language and the pivot's text key (``group_key``).
Tatoeba's ``jpn``, ``jpn_Hani`` and ``jpn_Hira`` sets hold the same Japanese
sentences, and ``cmn_Hans``, ``cmn_Hant`` and ``zho`` Chinese ones: a pivot
found in several of them is one group, as it is in the run.

Language noise needs the English sentence a line translates (its donors are
translations of English sentences): an English pivot's own text; for another
pivot, the English that Tatoeba eng-pol aligns with the line's Polish, where
it does (a bridge; about 6% of x-pol's lines); elsewhere the donor is chosen
by the pivot's own words, and labelled ``<lang> loose``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paramine.pipelines.core.groups import group_key, pivot_language
from paramine.pipelines.core.text import canonical_lang, lang_aliases, normalize
from paramine.pipelines.formats.moses_pairs import suffix_language

from benchmarks.quality.noisy_corpus import (
    TATOEBA_STEM,
    Corpus,
    build_corpus,
    corrupt,
    corrupt_lexical,
    read_lines,
)
from benchmarks.quality.planted_noise import (
    TATOEBA_DIR,
    corrupt_junk,
    corrupt_language,
    load_donors,
)

#: What ``Corpus.pivot_lang`` says of a corpus whose pivots have several languages.
SEVERAL = "auto"


@dataclass(frozen=True)
class PivotSet:
    """One Moses pair of a several-pair run: a pivot side and the shared candidate side."""

    name: str  # the pair's directory name: jpn_Hira-pol, eng-pol
    pivot_path: Path
    candidate_path: Path

    @property
    def pivot_suffix(self) -> str:
        """The pivot file's language suffix as written: ``jpn_Hira``."""
        return self.pivot_path.name.rpartition(".")[2]

    @property
    def pivot_lang(self) -> str:
        """The pivot's canonical language, as paramine reads it from the suffix: ``ja-hira``."""
        return canonical_lang(self.pivot_suffix)


def language_sides(directory: Path) -> list[Path]:
    """The files of a directory whose suffix names a language (paramine's reading of it).

    ``.labels`` files and ``test.txt`` beside Tatoeba's Moses files are not sides.
    """
    return sorted(
        p
        for p in directory.iterdir()
        if p.is_file() and "." in p.name and suffix_language(p.name.rpartition(".")[2])
    )


def pivot_set(directory: Path, candidate: str) -> PivotSet | None:
    """The pair in ``directory`` with a ``candidate`` side, or ``None`` where it holds none.

    Raises:
        SystemExit: A candidate side without exactly one pivot side beside it.
    """
    sides = language_sides(directory)
    aliases = lang_aliases(candidate)
    candidates = [p for p in sides if p.name.rpartition(".")[2].lower() in aliases]
    if not candidates:
        return None
    pivots = [p for p in sides if p not in candidates]
    if len(candidates) != 1 or len(pivots) != 1:
        raise SystemExit(
            f"{directory}: expected one .{candidate} file and one pivot-side file beside it, "
            f"found {[p.name for p in sides]}"
        )
    return PivotSet(directory.name, pivots[0], candidates[0])


def find_sets(directories: Sequence[Path], candidate: str) -> list[PivotSet]:
    """The pairs of the given directories: a directory's own, else those of its sub-directories.

    Raises:
        SystemExit: A directory holding no pair, a sub-directory holding none,
            or two pairs with one name.
    """
    sets: list[PivotSet] = []
    for directory in directories:
        if not directory.is_dir():
            raise SystemExit(f"{directory}: not a directory")
        found = pivot_set(directory, candidate)
        if found is not None:
            sets.append(found)
            continue
        subdirectories = sorted(p for p in directory.iterdir() if p.is_dir())
        if not subdirectories:
            raise SystemExit(
                f"{directory}: no .{candidate} file and no sub-directories; give Tatoeba "
                f"pair directories, or a directory of them (x-pol), with --candidate {candidate}"
            )
        for sub in subdirectories:
            found = pivot_set(sub, candidate)
            if found is None:
                raise SystemExit(f"{sub}: no .{candidate} file; every sub-directory must hold one")
            sets.append(found)
    names = [s.name for s in sets]
    if len(set(names)) != len(names):
        raise SystemExit(f"two pairs with one directory name among {names}")
    return sets


def default_donor_root(path: Path) -> Path:
    """Where the donors of language noise are: the folder holding the Tatoeba sets' folder.

    The parent of the ``tatoeba_test_v2021-08-07`` folder above ``path``
    (x-pol's pairs are a level deeper than eng-pol), else two levels above
    the pair's directory, as for one pair.
    """
    path = path.resolve()
    for folder in path.parents:
        if folder.name == TATOEBA_DIR:
            return folder.parent
    return path.parents[2]


def english_bridge(donor_root: Path, candidate: str) -> dict[str, str]:
    """Normalized candidate text -> the English that Tatoeba eng-<candidate> aligns with it.

    The first English line (in file order) where several are. Empty where the
    pair is not under ``donor_root``.
    """
    folder = donor_root / TATOEBA_DIR
    for directory in sorted(folder.glob("eng-*")) + sorted(folder.glob("*-eng")):
        found = pivot_set(directory, candidate) if directory.is_dir() else None
        if found is None or canonical_lang(found.pivot_suffix) != "en":
            continue
        english = read_lines(found.pivot_path)
        texts = read_lines(found.candidate_path)
        bridge: dict[str, str] = {}
        for en, text in zip(english, texts, strict=True):
            bridge.setdefault(normalize(text), en)
        return bridge
    return {}


def corrupt_set(
    pset: PivotSet,
    lang: str,
    noise: str,
    rate: float,
    seed: int,
    donors: list[Any],
    bridge: dict[str, str],
) -> tuple[list[str], list[str], list[bool], list[str]]:
    """Read one pair and replace ``rate`` of its candidate lines with ``noise``.

    Returns:
        The pivot lines, the candidate lines after the replacement, which
        were replaced, and what was planted in each (``""``: nothing).
    """
    pivots, targets = read_lines(pset.pivot_path), read_lines(pset.candidate_path)
    if len(pivots) != len(targets):
        raise SystemExit(
            f"{pset.name}: {pset.pivot_path.name} has {len(pivots)} lines, "
            f"{pset.candidate_path.name} {len(targets)}"
        )
    planted: list[str] | None = None
    if noise == "language":
        english = canonical_lang(pset.pivot_lang) == "en"
        # The English each line's meaning is matched on; its own pivot where none is known.
        known = [english or normalize(t) in bridge for t in targets]
        match = [
            p if english or not k else bridge[normalize(t)]
            for p, t, k in zip(pivots, targets, known, strict=True)
        ]
        corrupted, replaced, planted = corrupt_language(match, targets, rate, seed, donors)
        planted = [
            f"{label.split()[0]} loose" if label and not k else label
            for label, k in zip(planted, known, strict=True)
        ]
    elif noise == "junk":
        corrupted, replaced, planted = corrupt_junk(pivots, targets, rate, seed, lang)
    else:
        replace = corrupt_lexical if noise == "lexical" else corrupt
        corrupted, replaced = replace(pivots, targets, rate, seed)
    return pivots, corrupted, replaced, planted or ["planted" if r else "" for r in replaced]


def corrupted_sets(
    sets: Sequence[PivotSet],
    candidate: str,
    noise: str,
    rate: float,
    seed: int,
    donor_root: Path | None = None,
) -> tuple[list[tuple[PivotSet, list[str], list[str]]], Corpus]:
    """Replace ``rate`` of every pair's candidate lines with ``noise``; one corpus of them all.

    Every pair is corrupted with the same ``seed``, so a pair's noise does
    not depend on the others given (eng-pol's is that of a one-pair run).
    ``donor_root``: as in ``noisy_corpus.corrupted_pair``; by default two
    levels above the first pair's directory.

    Returns:
        Per pair its pivot lines and candidate lines after the replacement,
        and the corpus that labels them all.
    """
    lang = canonical_lang(candidate)
    donors: list[Any] = []
    bridge: dict[str, str] = {}
    if noise == "language":
        root = donor_root or default_donor_root(sets[0].candidate_path)
        donors = load_donors(lang, root)
        bridge = english_bridge(root, lang)
    written = []
    columns: dict[str, list[Any]] = defaultdict(list)
    # A pair already read in an earlier set -> what that set made of it.
    fates: dict[tuple[Any, str], tuple[str, bool, str]] = {}
    for pset in sets:
        pivots, corrupted, replaced, planted = corrupt_set(
            pset, lang, noise, rate, seed, donors, bridge
        )
        _same_fate_as_earlier_copies(pset, pivots, corrupted, replaced, planted, fates)
        written.append((pset, pivots, corrupted))
        columns["pivots"] += pivots
        columns["targets"] += corrupted
        columns["replaced"] += replaced
        columns["planted"] += planted
        columns["pivot_langs"] += [pset.pivot_lang] * len(pivots)
        columns["sets"] += [pset.name] * len(pivots)
    corpus = build_corpus(
        columns["pivots"],
        columns["targets"],
        columns["replaced"],
        SEVERAL,
        lang,
        columns["planted"],
        columns["pivot_langs"],
        columns["sets"],
    )
    return written, corpus


def _same_fate_as_earlier_copies(
    pset: PivotSet,
    pivots: list[str],
    corrupted: list[str],
    replaced: list[bool],
    planted: list[str],
    fates: dict[tuple[Any, str], tuple[str, bool, str]],
) -> None:
    """Give a pair found in an earlier set that set's outcome, in place; record the new ones.

    Noise is planted in the corpus, not in each copy of it: Tatoeba's
    ``jpn_Hira`` and ``jpn_Hani`` pairs are all in ``jpn`` too. Corrupted
    copy by copy, a line replaced in one copy keeps its true translation in
    another, and the two meet in one pivot group, a misalignment that no
    real corpus has (a misaligned line is misaligned in every copy of it).
    """
    originals = read_lines(pset.candidate_path)
    for i, (pivot, original) in enumerate(zip(pivots, originals, strict=True)):
        key = (group_key(pset.pivot_lang, normalize(pivot)), normalize(original))
        earlier = fates.setdefault(key, (corrupted[i], replaced[i], planted[i]))
        corrupted[i], replaced[i], planted[i] = earlier


def write_sets(written: Sequence[tuple[PivotSet, list[str], list[str]]], folder: Path) -> Path:
    """Write each corrupted pair as ``folder/<name>/<stem>.<suffix>``, its suffixes kept.

    Returns:
        ``folder``: the one input of the mining run, read as the real command
        reads x-pol (a directory of pairs, each file's language by its suffix).
    """
    for pset, pivots, candidates in written:
        directory = folder / pset.name
        directory.mkdir(parents=True, exist_ok=True)
        for path, lines in ((pset.pivot_path, pivots), (pset.candidate_path, candidates)):
            suffix = path.name.rpartition(".")[2]
            text = "".join(line + "\n" for line in lines)
            (directory / f"{TATOEBA_STEM}.{suffix}").write_text(text, encoding="utf-8")
    return folder


def pivot_language_figures(
    corpus: Corpus, rows: list[dict[str, Any]], planted: dict[str, dict[str, int]]
) -> dict[str, dict[str, Any]]:
    """Per pivot language (the language part groups are keyed on): its sets and figures.

    Pairs, precision and recall as bench_quality counts them over the whole
    run, restricted to the groups of one pivot language; ``planted``: the
    fates of its planted lines (``planted_fates``' ``by_language``). Most
    lines first.
    """
    sets: dict[str, set[str]] = defaultdict(set)
    lines: dict[str, int] = defaultdict(int)
    for name, lang in zip(corpus.sets, corpus.pivot_langs, strict=True):
        sets[pivot_language(lang)].add(name)
        lines[pivot_language(lang)] += 1
    pairs: dict[str, int] = defaultdict(int)
    good: dict[str, int] = defaultdict(int)
    mined: set[tuple[Any, str]] = set()
    for r in rows:
        key = corpus.key(r["pivot_sentence"], r["pivot_lang"])
        right = corpus.originals.get(key, ())
        pairs[key[0]] += 1
        good[key[0]] += r["sentence_a"] in right and r["sentence_b"] in right
        mined |= {(key, r["sentence_a"]), (key, r["sentence_b"])}
    eligible: dict[str, int] = defaultdict(int)
    found: dict[str, int] = defaultdict(int)
    for key, candidates in corpus.originals.items():
        if len(candidates) >= 2:
            eligible[key[0]] += len(candidates)
            found[key[0]] += sum((key, c) in mined for c in candidates)
    return {
        lang: {
            "sets": sorted(sets[lang]),
            "lines": lines[lang],
            "pairs": pairs[lang],
            "precision": good[lang] / max(pairs[lang], 1),
            "recall": found[lang] / max(eligible[lang], 1),
            "eligible": eligible[lang],
            "planted": dict(sorted(planted.get(lang, {}).items())),
        }
        for lang in sorted(lines, key=lambda lang: (-lines[lang], lang))
    }


def format_pivot_languages(figures: dict[str, dict[str, Any]]) -> str:
    """A Markdown table of ``pivot_language_figures``: one row per pivot language."""
    out = [
        "| pivot language | sets | lines | pairs | precision | recall | planted "
        "| stopped by the prefilter | below cut | later | planted in pairs |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for lang, f in figures.items():
        planted = f["planted"]
        stopped = sum(n for k, n in planted.items() if k.startswith("prefilter "))
        out.append(
            f"| {lang} | {', '.join(f['sets'])} | {f['lines']:,} | {f['pairs']:,} "
            f"| {f['precision']:.4f} | {f['recall']:.4f} | {planted.get('lines', 0):,} "
            f"| {stopped:,} | {planted.get('below_cut', 0):,} | {planted.get('later', 0):,} "
            f"| {planted.get('in_pairs', 0):,} |"
        )
    return "\n".join(out)
