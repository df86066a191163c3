"""A seeded, subtitles-like bitext: aligned (pivot, candidate) pairs whose pivots repeat by Zipf.

Subtitles repeat their English lines heavily ("Yes.", "What?", "Thank you.")
and translate each repeat in one of a few ways ("Tak.", "Dobrze.", "No tak.");
most lines occur once. The generator imitates that shape, with made-up words
so that nothing is downloaded:

- Pivots: a share of the pairs (``unique_share``) get a pivot of their own,
  seen once; the rest draw a pivot from a common pool of ``pool`` sentences by
  a Zipf law of exponent ``zipf_exponent``, so the pool's first sentences
  occur thousands of times in a million pairs.
- Candidates: each pivot has 1 to 4 distinct translations (fixed per pivot),
  and each occurrence picks one of them, the first more often than the rest.
  The translations of a pivot share most of their words, as real ones do.
- Lengths: frequent pivots are short (1-3 words); the others mostly 2-15
  words, with a log-normal tail up to 60; a translation is 0.7-1.4 times as
  long as its pivot.
- Words: English-like and Polish-like words built from syllables by a seeded
  generator, shorter words more frequent.

The TSV (``pivot<TAB>candidate``) is written as it is generated, a block of
draws at a time: memory holds the vocabulary and a cache of the pool's most
frequent sentences, never the pairs. The same ``n`` and ``seed`` give the
same bytes.

    python -m benchmarks.lib.synthetic 1000000 subtitles.tsv --seed 0
"""

from __future__ import annotations

import argparse
import functools
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Draws generated at a time: bounds the generator's memory.
BLOCK = 65_536

EN_ONSETS = ("", "b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "w", "th", "st",
             "br", "gr", "sh", "ch", "wh", "k", "y", "pl", "tr")  # fmt: skip
EN_VOWELS = ("a", "e", "i", "o", "u", "ea", "ou", "ee", "ai", "y")
EN_CODAS = ("", "", "n", "t", "s", "r", "l", "nd", "ng", "ck", "st", "ll", "m", "d")
PL_ONSETS = ("", "b", "c", "d", "g", "k", "l", "ł", "m", "n", "p", "r", "s", "t", "w", "z",
             "sz", "cz", "rz", "dz", "ż", "ś", "prz", "ch", "j", "st", "zw")  # fmt: skip
PL_VOWELS = ("a", "e", "i", "o", "u", "y", "ą", "ę", "ó", "ie", "ia")
PL_CODAS = ("", "", "", "k", "m", "n", "ć", "ń", "ś", "ł", "sz", "j", "st", "ż")
ENDINGS = (".", ".", ".", ".", "?", "?", "!", "...")


@dataclass(frozen=True)
class Shape:
    """How repetitive the bitext is.

    Attributes:
        zipf_exponent: Exponent of the Zipf law over the common pool.
        unique_share: Share of pairs whose pivot occurs only there.
        pool_share: Size of the common pool, as a share of the pairs (at least 1,000).
        max_translations: Most distinct translations of one pivot.
    """

    zipf_exponent: float = 1.0
    unique_share: float = 0.5
    pool_share: float = 0.1
    max_translations: int = 4

    def __post_init__(self) -> None:
        if self.zipf_exponent <= 0:
            raise ValueError(f"zipf_exponent must be positive, got {self.zipf_exponent}")
        if not 0.0 <= self.unique_share <= 1.0:
            raise ValueError(f"unique_share must be in [0, 1], got {self.unique_share}")
        if self.pool_share <= 0:
            raise ValueError(f"pool_share must be positive, got {self.pool_share}")
        if not 1 <= self.max_translations <= 16:
            raise ValueError(f"max_translations must be in 1..16, got {self.max_translations}")


def _make_words(
    rng: random.Random, onsets: tuple[str, ...], vowels: tuple[str, ...], codas: tuple[str, ...],
    count: int,
) -> list[str]:  # fmt: skip
    """``count`` distinct made-up words, shortest first (the frequent end of the vocabulary)."""
    words: dict[str, None] = {}
    while len(words) < count:
        syllables = rng.choice((1, 1, 2, 2, 2, 3, 3, 4))
        word = "".join(
            rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(syllables)
        )
        words.setdefault(word)
    return sorted(words, key=len)


class Vocabulary:
    """Made-up words of one language, drawn by a Zipf law over word rank."""

    def __init__(self, words: list[str]) -> None:
        self.words = words
        weights = np.cumsum(1.0 / np.arange(1, len(words) + 1))
        self.cum_weights = list(weights)

    def draw(self, rng: random.Random, k: int) -> list[str]:
        """``k`` words, frequent ones more often."""
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)


def _sentence(words: list[str], ending: str) -> str:
    text = " ".join(words)
    return text[:1].upper() + text[1:] + ending


class Bitext:
    """The sentences of a synthetic bitext, each a pure function of (seed, pivot id, translation).

    Args:
        n: Number of aligned pairs.
        seed: The one seed everything derives from.
        shape: How repetitive the pivots are.
    """

    def __init__(self, n: int, seed: int = 0, shape: Shape | None = None) -> None:
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        self.n = n
        self.seed = seed
        self.shape = shape or Shape()
        self.pool = max(1_000, int(n * self.shape.pool_share))
        words = random.Random(f"vocabulary-{seed}")
        self.en = Vocabulary(_make_words(words, EN_ONSETS, EN_VOWELS, EN_CODAS, 20_000))
        self.pl = Vocabulary(_make_words(words, PL_ONSETS, PL_VOWELS, PL_CODAS, 30_000))
        ranks = np.arange(1, self.pool + 1, dtype=np.float64)
        cdf = np.cumsum(ranks**-self.shape.zipf_exponent)
        self._pool_cdf = cdf / cdf[-1]

    def _rng(self, pivot_id: int, translation: int) -> random.Random:
        # One integer seed per sentence: Random(int) is cheap and stable across versions.
        return random.Random((self.seed * 1_000_003 + pivot_id) * 64 + translation)

    def _pivot_words(self, pivot_id: int) -> int:
        rng = self._rng(pivot_id, 63)
        if pivot_id < 50:  # the pool's head: "Yes.", "What?", "I know."
            return rng.randint(1, 3)
        length = round(rng.lognormvariate(1.75, 0.6))  # median about 6 words
        return min(max(length, 1), 60)

    @functools.lru_cache(maxsize=65_536)  # noqa: B019 - one Bitext per run; the head repeats
    def translations(self, pivot_id: int) -> tuple[str, tuple[str, ...]]:
        """The pivot sentence of ``pivot_id`` and its 1 to ``max_translations`` translations."""
        length = self._pivot_words(pivot_id)
        rng = self._rng(pivot_id, 0)
        ending = rng.choice(ENDINGS)
        pivot = _sentence(self.en.draw(rng, length), ending)
        count = 1 + min(
            int(rng.expovariate(0.9)), self.shape.max_translations - 1
        )  # 1: 59%, 2: 24%, 3: 10%, 4: 7%
        target_length = max(1, round(length * rng.uniform(0.7, 1.4)))
        base = self.pl.draw(rng, target_length)
        variants: dict[str, None] = {}
        for t in range(count):
            variant_rng = self._rng(pivot_id, t + 1)
            words = list(base)
            if t:  # later translations reword about a third of the first one
                for i in range(len(words)):
                    if variant_rng.random() < 0.34:
                        words[i] = self.pl.draw(variant_rng, 1)[0]
                if words == base:
                    words.append(self.pl.draw(variant_rng, 1)[0])
            variants.setdefault(_sentence(words, ending))
        return pivot, tuple(variants)

    def pivot_ids(self) -> Iterator[np.ndarray]:
        """Each pair's pivot id, a block at a time: the pool's ids by Zipf, or a fresh one."""
        rng = np.random.default_rng(self.seed)
        next_unique = self.pool
        for start in range(0, self.n, BLOCK):
            size = min(BLOCK, self.n - start)
            unique = rng.random(size) < self.shape.unique_share
            ids = np.searchsorted(self._pool_cdf, rng.random(size), side="right")
            ids = np.minimum(ids, self.pool - 1)
            fresh = int(unique.sum())
            ids[unique] = np.arange(next_unique, next_unique + fresh)
            next_unique += fresh
            yield ids

    def pairs(self) -> Iterator[tuple[str, str]]:
        """The ``n`` aligned pairs in order, generated as they are consumed."""
        choice = random.Random(f"choices-{self.seed}")
        for block in self.pivot_ids():
            for pivot_id in block.tolist():
                pivot, variants = self.translations(pivot_id)
                # The first translation is the usual one: weights 1, 1/2, 1/3, ...
                k = len(variants)
                pick = 0 if k == 1 else choice.choices(range(k), cum_weights=_HARMONIC[k])[0]
                yield pivot, variants[pick]


_HARMONIC = {k: list(np.cumsum(1.0 / np.arange(1, k + 1))) for k in range(1, 17)}


def write_tsv(path: Path, n: int, seed: int = 0, shape: Shape | None = None) -> dict[str, float]:
    """Write ``n`` pairs to ``path`` as ``pivot<TAB>candidate`` lines; return their shape.

    The summary counts pivots by id (fresh pivots can, rarely, repeat a pool
    sentence's text; the pipeline groups by text).
    """
    bitext = Bitext(n, seed, shape)
    pool_counts = np.zeros(bitext.pool, dtype=np.int64)
    unique = 0
    words = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        lines: list[str] = []
        for pivot, candidate in bitext.pairs():
            lines.append(f"{pivot}\t{candidate}\n")
            words += pivot.count(" ") + 1
            if len(lines) == BLOCK:
                out.write("".join(lines))
                lines.clear()
        out.write("".join(lines))
    for block in bitext.pivot_ids():  # the same draws again: counting costs no memory per pair
        in_pool = block[block < bitext.pool]
        pool_counts += np.bincount(in_pool, minlength=bitext.pool)
        unique += len(block) - len(in_pool)
    seen = pool_counts[pool_counts > 0]
    repeated = seen[seen > 1]
    return {
        "pairs": n,
        "distinct_pivots": unique + len(seen),
        "top_pivot_count": int(seen.max()) if len(seen) else 0,
        "pivots_seen_once_share": (unique + int((seen == 1).sum())) / max(1, unique + len(seen)),
        "pairs_with_repeated_pivot_share": int(repeated.sum()) / max(1, n),
        "mean_pivot_words": words / max(1, n),
    }


def main(argv: list[str] | None = None) -> int:
    """Write a synthetic bitext and print its shape."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, help="number of aligned pairs")
    parser.add_argument("out", type=Path, help="the TSV to write (pivot<TAB>candidate)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    parser.add_argument(
        "--zipf-exponent", type=float, default=1.0, help="Zipf exponent (default: %(default)s)"
    )
    parser.add_argument(
        "--unique-share",
        type=float,
        default=0.5,
        help="share of pairs with a pivot seen once (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    summary = write_tsv(args.out, args.n, args.seed, Shape(args.zipf_exponent, args.unique_share))
    seconds = time.perf_counter() - start
    print(
        " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in summary.items())
        + f" seconds={seconds:.1f}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
