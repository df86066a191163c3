"""Near-duplicate pairs across a dataset: MinHash buckets, then an exact check.

Two output pairs are near-duplicates when the character 3-grams of their
sentences overlap by at least ``similarity`` (Jaccard): ("Dziękuję!",
"Dzięki!") and ("Dzięki.", "Dziękuję."), or two gender variants of one
pair. A pair's 3-grams are taken from the comparison keys of its two
sentences (casefolded, punctuation and spaces removed), the two keys in
sorted order and each 3-gram marked with its side, so the pair's order does
not matter and a 3-gram of one sentence never matches one of the other.

datasketch's MinHash stands for each pair's 3-gram set; its LSH parameters
(bands and rows for the similarity) put pairs that may be near-duplicates in
a shared bucket. Within a bucket, pairs are taken in pair-id order and each
is checked, exactly, against the bucket's pairs kept so far: a pair as
similar as ``similarity`` to one of them is a near-duplicate of it. The
pair with the smallest id of a set of near-duplicates is never one, so at
least one of them stays. The mining pipeline buckets in a shuffle
(stages/filter/post_filter.py); the report buckets in memory (report/stats.py);
both decide with ``bucket_duplicates``.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from paramine.schemas.text_keys import comparison_key

#: Jaccard similarity of two pairs' 3-gram sets from which they are near-duplicates.
DEFAULT_SIMILARITY = 0.8
#: MinHash permutations: 128 keeps the LSH's miss rate at 0.8 under 1%.
NUM_PERM = 128
#: Fixed, so every worker and every run draws the same permutations.
SEED = 1
SHINGLE = 3


class Shingled(NamedTuple):
    """A pair's id and its marked 3-gram set."""

    pair_id: str
    shingles: frozenset[str]


def pair_shingles(a: str, b: str) -> frozenset[str]:
    """The marked character 3-grams of a pair's two comparison keys."""
    grams: set[str] = set()
    for side, key in enumerate(sorted((comparison_key(a), comparison_key(b)))):
        text = f"^{key}$"
        grams.update(f"{side}{text[i : i + SHINGLE]}" for i in range(len(text) - SHINGLE + 1))
    return frozenset(grams)


def jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    """Jaccard similarity of two sets; 1.0 for two empty sets."""
    union = len(x | y)
    return len(x & y) / union if union else 1.0


@functools.lru_cache(maxsize=8)
def lsh_shape(similarity: float) -> tuple[int, int]:
    """datasketch's (bands, rows per band) for ``similarity`` over ``NUM_PERM`` permutations."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=similarity, num_perm=NUM_PERM)
    return lsh.b, lsh.r


def band_keys(shingles: frozenset[str], similarity: float) -> list[str]:
    """The LSH buckets of a 3-gram set: one key per band, ``band:digest``."""
    from datasketch import MinHash

    bands, rows = lsh_shape(similarity)
    signature = MinHash(num_perm=NUM_PERM, seed=SEED)
    signature.update_batch([gram.encode("utf-8") for gram in sorted(shingles)])
    values = signature.hashvalues
    keys = []
    for band in range(bands):
        digest = hashlib.blake2b(values[band * rows : (band + 1) * rows].tobytes(), digest_size=8)
        keys.append(f"{band}:{digest.hexdigest()}")
    return keys


def bucket_duplicates(members: Iterable[Shingled], similarity: float) -> Iterator[tuple[str, str]]:
    """``(near-duplicate id, id of the earlier pair it repeats)`` within one bucket."""
    kept: list[Shingled] = []
    for member in sorted(members):
        similar = (k for k in kept if jaccard(member.shingles, k.shingles) >= similarity)
        earlier = next(similar, None)
        if earlier is None:
            kept.append(member)
        else:
            yield member.pair_id, earlier.pair_id


def near_duplicates(pairs: Sequence[Shingled], similarity: float) -> dict[str, str]:
    """Each near-duplicate's id, mapped to the smallest id of an earlier pair it repeats."""
    buckets: dict[str, list[Shingled]] = {}
    for pair in pairs:
        for key in band_keys(pair.shingles, similarity):
            buckets.setdefault(key, []).append(pair)
    found: dict[str, str] = {}
    for members in buckets.values():
        if len(members) > 1:
            for duplicate, earlier in bucket_duplicates(members, similarity):
                found[duplicate] = min(earlier, found.get(duplicate, earlier))
    return found
