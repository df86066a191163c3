"""Where held-out paraphrase retrieval misses: which queries, and are the misses near-duplicates?

``paramine train --eval-held-out PIVOT TARGET`` and ``paramine evaluate`` score
paraphrase retrieval on the held-out lines of a bitext: per held-out pivot, its
first target translation is the query and its second the answer, among the
second translations of every held-out pivot (``held_out_bitexts``). A figure
there says how many queries miss, not which; this study says which, for each
model given:

- its accuracy@1 both ways (the same figures ``paramine evaluate`` prints);
- its misses, and how many of them are queries of at most ``--short`` words;
- how many misses retrieve a line whose pivot is a near-duplicate of the
  query's (cosine of the two pivots under the first model at least
  ``--near``): such a miss is arguably right, and they bound what any model
  can gain;
- against the first model: the misses it fixed and the ones it made.

It ends with ``--samples`` of the first model's misses: the query, the right
answer, and what was retrieved, each with its pivot.

Usage::

    S=../shared/corpora/tatoeba_test_v2021-08-07/small/eng-kab/tatoeba-test-v2021-08-07
    python -m benchmarks.studies.bench_retrieval_misses e5-small /tmp/kab/adapt/seed-42 \\
        --held-out $S.eng $S.kab --eval-share 0.2
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@dataclass(frozen=True)
class ParaphraseSet:
    """The held-out paraphrase pairs and each one's pivot."""

    queries: list[str]
    answers: list[str]
    pivots: list[str]


@dataclass(frozen=True)
class Misses:
    """One model's retrieval on a ``ParaphraseSet``."""

    model: str
    forward: float
    backward: float
    #: Indices of the queries whose nearest answer is not theirs, and what each got.
    missed: dict[int, int]


def paraphrase_set(pivot_path: str, target_path: str, eval_share: float) -> ParaphraseSet:
    """The held-out paraphrase pairs of a bitext, as ``paramine evaluate`` scores them."""
    from paramine.encoders.evaluation.eval_files import held_out_bitexts

    # The translations first, then the paraphrases, each where it has 2+ pairs.
    sets = held_out_bitexts([pivot_path, target_path], eval_share)
    if len(sets) < 2:
        raise SystemExit(f"{target_path}: fewer than 2 held-out pivots have two translations")
    translations, paraphrases = sets
    # A paraphrase query is its pivot's first translation: a translation pair's target.
    pivot_of = dict(zip(translations.target, translations.source, strict=True))
    queries = paraphrases.source
    return ParaphraseSet(queries, paraphrases.target, [pivot_of[q] for q in queries])


def encode(spec: str, texts: list[str]) -> np.ndarray:
    """Unit vectors of ``texts`` under a model (registry name or folder), as evaluate encodes."""
    from paramine.encoders.models.resolve import prompt_applied, resolve_model
    from paramine.encoders.modules.lstm_pooling import load_encoder

    resolved = resolve_model(spec)
    model = load_encoder(resolved.path, device="cpu")
    with prompt_applied(model, resolved.prefix):
        vectors = model.encode(texts, batch_size=64, normalize_embeddings=True)
    return np.asarray(vectors, dtype=np.float32)


def misses(spec: str, found: ParaphraseSet) -> Misses:
    """The model's accuracy@1 both ways and the queries it misses."""
    n = len(found.queries)
    vectors = encode(spec, found.queries + found.answers)
    scores = vectors[:n] @ vectors[n:].T
    nearest, nearest_back = scores.argmax(1), scores.argmax(0)
    missed = {i: int(j) for i, j in enumerate(nearest) if j != i}
    back = sum(int(j != i) for i, j in enumerate(nearest_back))
    return Misses(spec, 100 * (1 - len(missed) / n), 100 * (1 - back / n), missed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "models", nargs="+", help="models, the first the reference (e5-small, folders)"
    )
    parser.add_argument("--held-out", nargs=2, required=True, metavar=("PIVOT", "TARGET"))
    parser.add_argument("--eval-share", type=float, default=0.2, help="as paramine train's (0.2)")
    parser.add_argument("--short", type=int, default=2, help="a short query's most words (2)")
    parser.add_argument("--near", type=float, default=0.95, help="near-duplicate pivots' cosine")
    parser.add_argument("--samples", type=int, default=10, help="misses of the first model shown")
    args = parser.parse_args(argv)

    found = paraphrase_set(*args.held_out, args.eval_share)
    n = len(found.queries)
    short = {i for i, q in enumerate(found.queries) if len(q.split()) <= args.short}
    pivots = encode(args.models[0], found.pivots)
    pivot_cosine = pivots @ pivots.T
    results = [misses(spec, found) for spec in args.models]
    first = results[0]
    print(f"{n} held-out paraphrase pairs; {len(short)} queries of <= {args.short} words")
    print(
        "| model | acc@1 | other way | misses | short queries among them "
        "| retrieved a near-duplicate pivot's line | fixed | made |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for result in results:
        missed = result.missed
        near = sum(pivot_cosine[i, j] >= args.near for i, j in missed.items())
        fixed = len(first.missed.keys() - missed.keys())
        made = len(missed.keys() - first.missed.keys())
        print(
            f"| {result.model} | {result.forward:.2f} | {result.backward:.2f} | {len(missed)} "
            f"| {len(missed.keys() & short)} | {near} | {fixed} | {made} |"
        )
    for i, j in list(first.missed.items())[: args.samples]:
        print(f"- {found.queries[i]!r} [{found.pivots[i]}]")
        print(f"  right {found.answers[i]!r}; retrieved {found.answers[j]!r} [{found.pivots[j]}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
