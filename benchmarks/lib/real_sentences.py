"""A seeded bitext of real sentence pairs: a Tatoeba test set's aligned lines, resampled by Zipf.

bench_scale's real input (issue 75): the language check and the script rules
judge real sentences in their languages and scripts, as on a real dump, not
made-up words. One language pair per file, since a mine run has one
``--src-lang`` and ``--tgt-lang``: the pair's folder among the Tatoeba test
sets in ``../shared/corpora/tatoeba_test_v2021-08-07`` (``eng-pol``, and
those under ``scripts/``, ``small/``, ``x-pol/``: ``eng-zho``, ``eng-mar``,
``jpn-pol``, ...), whose two files align line by line. The pair is written
pivot first (``eng-pol``: English pivots, Polish candidates); a folder named
the other way round (``pol-rus``) serves ``rus-pol`` too.

The shape is the synthetic input's (``synthetic.py``), drawn from the corpus:

- Pivots: the corpus's distinct pivots are ranked, those with the most
  distinct translations first, then the shortest ("Are you ready?" before
  long narrative lines), ties in a seeded order; a row draws its pivot by a
  Zipf law of exponent ``zipf_exponent`` over that ranking, so a few pivots
  recur thousands of times, most rarely or never.
- Candidates: each occurrence of a pivot takes one of its corpus translations,
  uniformly; only a pivot that the corpus translates several ways can make a
  pair (eng-pol: 159 of 9,934 pivots).
- Joined rows: a share of the rows (``joined_share``) joins two aligned lines
  drawn uniformly, pivot to pivot and candidate to candidate ("Be careful.
  Abandon ship!"), as a subtitle holds two sentences. Such a pivot is all but
  always seen once, like the synthetic input's fresh pivots: the number of
  distinct lines then grows with the rows, as in a dump, rather than stopping
  at the corpus's size, where the language check's cache of judged lines
  (131,072) would hold every line and the check would cost nothing per row.
  Chinese and Japanese sides are joined with no space.

The TSV (``pivot<TAB>candidate``) is written as it is drawn, a block of rows
at a time: memory holds the corpus, never the rows. The same corpus, ``n``,
``seed`` and shape give the same bytes.

    python -m benchmarks.lib.real_sentences 1000000 real.tsv --pair eng-pol --seed 0
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from paramine.pipelines.core.text import canonical_lang

from benchmarks.lib.paths import TATOEBA, TATOEBA_STEM
from benchmarks.lib.synthetic import BLOCK

#: The pair bench_scale mines by default: English pivots, Polish candidates.
DEFAULT_PAIR = "eng-pol"
#: Languages whose sentences follow one another with no space between them.
NO_SPACE_LANGUAGES = frozenset({"zh", "ja"})


@dataclass(frozen=True)
class Shape:
    """How the corpus's lines are resampled.

    Attributes:
        zipf_exponent: Exponent of the Zipf law over the ranked pivots.
        joined_share: Share of rows that join two aligned lines (a pivot seen once).
    """

    zipf_exponent: float = 1.0
    joined_share: float = 0.5

    def __post_init__(self) -> None:
        if self.zipf_exponent <= 0:
            raise ValueError(f"zipf_exponent must be positive, got {self.zipf_exponent}")
        if not 0.0 <= self.joined_share <= 1.0:
            raise ValueError(f"joined_share must be in [0, 1], got {self.joined_share}")


def split_pair(pair: str) -> tuple[str, str]:
    """``eng-pol`` -> ``("eng", "pol")``: the pivot's and the candidates' file suffixes."""
    parts = pair.split("-")
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"pair {pair!r}: give PIVOT-CANDIDATE file suffixes, e.g. {DEFAULT_PAIR}")
    return parts[0], parts[1]


def mine_languages(pair: str) -> tuple[str, str]:
    """The ``--src-lang`` and ``--tgt-lang`` that mine the pair: ``eng-pol`` -> ``("en", "pl")``."""
    pivot, candidate = split_pair(pair)
    return canonical_lang(pivot), canonical_lang(candidate)


def pair_files(pair: str, root: Path = TATOEBA) -> tuple[Path, Path]:
    """The pivot and candidate files of ``pair`` in ``root`` or one folder below it.

    Raises:
        ValueError: No folder of ``root`` holds the pair's two files; the
            message lists the pairs there are.
    """
    pivot, candidate = split_pair(pair)
    names = (f"{pivot}-{candidate}", f"{candidate}-{pivot}")
    for folder in (found for name in names for found in (root / name, *root.glob(f"*/{name}"))):
        files = folder / f"{TATOEBA_STEM}.{pivot}", folder / f"{TATOEBA_STEM}.{candidate}"
        if all(path.is_file() for path in files):
            return files
    known = sorted(
        path.parent.name
        for path in (*root.glob(f"*/{TATOEBA_STEM}.*"), *root.glob(f"*/*/{TATOEBA_STEM}.*"))
        if not path.name.endswith(".labels")
    )
    raise ValueError(
        f"pair {pair!r}: no folder {pivot}-{candidate} or {candidate}-{pivot} with "
        f"{TATOEBA_STEM}.{pivot} and .{candidate} in {root} or a folder below it; "
        f"it has {', '.join(dict.fromkeys(known)) or 'none'} (either side may be the pivot)"
    )


def _lines(path: Path) -> list[str]:
    # split("\n"), not splitlines(): a U+2028 inside a sentence must not shift the alignment.
    text = path.read_text(encoding="utf-8")
    return text.removesuffix("\n").split("\n") if text else []


@dataclass(frozen=True)
class Corpus:
    """A pair's aligned lines, and its distinct pivots in the order of their Zipf ranks.

    Attributes:
        pair: ``PIVOT-CANDIDATE``, as the files' suffixes spell them.
        lines: The aligned ``(pivot, candidate)`` lines that the TSV can hold.
        pivots: The distinct pivots, most frequent rank first.
        translations: Per pivot of ``pivots``, its distinct candidates in file order.
        skipped_lines: Lines left out: a side empty or holding a tab.
    """

    pair: str
    lines: tuple[tuple[str, str], ...]
    pivots: tuple[str, ...]
    translations: tuple[tuple[str, ...], ...]
    skipped_lines: int

    @classmethod
    def read(cls, pair: str = DEFAULT_PAIR, seed: int = 0, root: Path = TATOEBA) -> Corpus:
        """Read ``pair``'s files in ``root``; ``seed`` orders the pivots that rank alike."""
        pivot_path, candidate_path = pair_files(pair, root)
        pivot_lines, candidate_lines = _lines(pivot_path), _lines(candidate_path)
        if len(pivot_lines) != len(candidate_lines):
            raise ValueError(
                f"{pivot_path} has {len(pivot_lines):,} lines and {candidate_path} "
                f"{len(candidate_lines):,}: a pair's files must align line by line"
            )
        usable = [
            (p, c)
            for p, c in zip(pivot_lines, candidate_lines, strict=True)
            if p.strip() and c.strip() and "\t" not in p + c
        ]
        if not usable:
            raise ValueError(f"{pivot_path}: no aligned line with both sides non-empty")
        translations: dict[str, dict[str, None]] = {}
        for p, c in usable:
            translations.setdefault(p, {}).setdefault(c)
        pivots = list(translations)
        counts = np.array([len(translations[p]) for p in pivots])
        lengths = np.array([len(p) for p in pivots])
        ties = np.random.default_rng(seed).permutation(len(pivots))
        # The most translated first, then the shortest: a subtitle's head ("Yes.", "What?")
        # is short and translated many ways.
        order = np.lexsort((ties, lengths, -counts))
        return cls(
            pair=pair,
            lines=tuple(usable),
            pivots=tuple(pivots[i] for i in order),
            translations=tuple(tuple(translations[pivots[i]]) for i in order),
            skipped_lines=len(pivot_lines) - len(usable),
        )


def _joiner(code: str) -> str:
    return "" if canonical_lang(code).split("-")[0] in NO_SPACE_LANGUAGES else " "


class Resample:
    """The rows of a resampled bitext, drawn a block at a time.

    Args:
        corpus: The pair's lines.
        n: Number of rows.
        seed: The one seed the draws derive from.
        shape: How the rows are drawn.
    """

    def __init__(self, corpus: Corpus, n: int, seed: int = 0, shape: Shape | None = None) -> None:
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        self.corpus = corpus
        self.n = n
        self.seed = seed
        self.shape = shape or Shape()
        ranks = np.arange(1, len(corpus.pivots) + 1, dtype=np.float64)
        cdf = np.cumsum(ranks**-self.shape.zipf_exponent)
        self._cdf = cdf / cdf[-1]
        self._counts = np.array([len(t) for t in corpus.translations])
        pivot_code, candidate_code = split_pair(corpus.pair)
        self.joiners = _joiner(pivot_code), _joiner(candidate_code)

    def blocks(self) -> Iterator[tuple[np.ndarray, list[tuple[str, str]]]]:
        """Per block of rows: each row's pivot rank (-1: a joined row) and its pair."""
        rng = np.random.default_rng(self.seed)
        corpus, lines = self.corpus, self.corpus.lines
        join_pivot, join_candidate = self.joiners
        for start in range(0, self.n, BLOCK):
            size = min(BLOCK, self.n - start)
            # Every draw is made for every row, so that one share does not shift the others.
            joined = rng.random(size) < self.shape.joined_share
            ranks = np.minimum(
                np.searchsorted(self._cdf, rng.random(size), side="right"), len(self._cdf) - 1
            )
            picks = (rng.random(size) * self._counts[ranks]).astype(np.int64)
            first, second = rng.integers(0, len(lines), size=(2, size))
            rows = []
            for is_joined, rank, pick, a, b in zip(
                joined.tolist(), ranks.tolist(), picks.tolist(), first.tolist(), second.tolist(),
                strict=True,
            ):  # fmt: skip
                if is_joined:
                    (pivot_a, candidate_a), (pivot_b, candidate_b) = lines[a], lines[b]
                    rows.append(
                        (pivot_a + join_pivot + pivot_b, candidate_a + join_candidate + candidate_b)
                    )
                else:
                    rows.append((corpus.pivots[rank], corpus.translations[rank][pick]))
            yield np.where(joined, -1, ranks), rows


def write_tsv(
    path: Path, n: int, seed: int = 0, pair: str = DEFAULT_PAIR, shape: Shape | None = None,
    root: Path = TATOEBA,
) -> dict[str, float | str]:  # fmt: skip
    """Write ``n`` rows of ``pair`` resampled to ``path`` as ``pivot<TAB>candidate``; their shape.

    The summary has ``synthetic.write_tsv``'s keys, counting pivots by draw
    (a joined pivot as one of its own: two joins can, rarely, make the same
    text; the pipeline groups by text), and the corpus's size.
    """
    corpus = Corpus.read(pair, seed, root)
    resample = Resample(corpus, n, seed, shape)
    rank_counts = np.zeros(len(corpus.pivots), dtype=np.int64)
    joined = 0
    words = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for ranks, rows in resample.blocks():
            out.write("".join(f"{pivot}\t{candidate}\n" for pivot, candidate in rows))
            words += sum(pivot.count(" ") + 1 for pivot, _ in rows)
            drawn = ranks[ranks >= 0]
            rank_counts += np.bincount(drawn, minlength=len(corpus.pivots))
            joined += len(ranks) - len(drawn)
    seen = rank_counts[rank_counts > 0]
    several = np.array([len(t) >= 2 for t in corpus.translations])
    distinct = joined + len(seen)
    return {
        "pairs": n,
        "distinct_pivots": distinct,
        "top_pivot_count": int(seen.max()) if len(seen) else min(joined, 1),
        "pivots_seen_once_share": (joined + int((seen == 1).sum())) / max(1, distinct),
        "pairs_with_repeated_pivot_share": int(seen[seen > 1].sum()) / max(1, n),
        "mean_pivot_words": words / max(1, n),
        "pair": pair,
        "joined_pairs": joined,
        "pairs_of_pivots_with_several_translations": int(rank_counts[several].sum()),
        "corpus_lines": len(corpus.lines),
        "corpus_pivots": len(corpus.pivots),
        "corpus_pivots_with_several_translations": int(several.sum()),
        "corpus_skipped_lines": corpus.skipped_lines,
    }


def main(argv: list[str] | None = None) -> int:
    """Write a resampled real bitext and print its shape."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, help="number of rows (aligned pairs)")
    parser.add_argument("out", type=Path, help="the TSV to write (pivot<TAB>candidate)")
    parser.add_argument(
        "--pair",
        default=DEFAULT_PAIR,
        help="the Tatoeba test set, PIVOT-CANDIDATE as its files' suffixes, e.g. eng-zho, "
        "jpn-pol (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    parser.add_argument(
        "--zipf-exponent", type=float, default=1.0, help="Zipf exponent (default: %(default)s)"
    )
    parser.add_argument(
        "--joined-share",
        type=float,
        default=Shape.joined_share,
        help="share of rows joining two aligned lines, pivots seen once (default: %(default)s)",
    )
    parser.add_argument(
        "--corpora",
        type=Path,
        default=TATOEBA,
        help="the folder of the Tatoeba test sets (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        shape = Shape(args.zipf_exponent, args.joined_share)
        summary = write_tsv(args.out, args.n, args.seed, args.pair, shape, args.corpora)
    except ValueError as error:
        parser.error(str(error))
    seconds = time.perf_counter() - start
    pair = summary.pop("pair")  # first and alone: the rest parses as key=number
    figures = (f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in summary.items())
    print(
        f"{pair}: " + " ".join(figures) + f" seconds={seconds:.1f}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
