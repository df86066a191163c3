"""``paramine evaluate``: score sentence encoders on paraphrase retrieval and STS.

Paraphrase retrieval, on the held-out split of a mined dataset: for each
``sentence_a``, rank every ``sentence_b`` of the split by cosine similarity;
report top-1 accuracy and mean reciprocal rank (MRR). STS: Spearman
correlation between cosine similarity and gold scores of a TSV
(``sentence1<TAB>sentence2<TAB>score``).

The metric functions are pure numpy so they can be checked on hand-made
cases; torch and sentence-transformers are imported only to encode.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: Queries scored against all documents at once; bounds memory to
#: block x documents floats (1024 x 100k x 4 B = 400 MB at most).
QUERY_BLOCK = 1024


def _unit_rows(x: np.ndarray) -> np.ndarray:
    """Return ``x`` with every row scaled to unit L2 norm (zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def reciprocal_ranks(
    queries: np.ndarray, documents: np.ndarray, groups: Sequence[Any] | None = None
) -> np.ndarray:
    """Return, for each query ``i``, 1 / the rank of document ``i`` by cosine.

    The rank is 1 + the number of documents scoring strictly higher than the
    right one, so exact ties (the same text twice among the documents) do not
    count against a model. With ``groups``, the ranking is filtered: the other
    documents of query ``i``'s group (other paraphrases of the same pivot, also
    right answers) are not counted as outranking it.

    Args:
        queries: ``(n, dim)`` embeddings; query ``i``'s answer is document ``i``.
        documents: ``(n, dim)`` embeddings.
        groups: ``n`` group labels (pivot keys), or None.

    Returns:
        ``(n,)`` reciprocal ranks in (0, 1].
    """
    if queries.shape != documents.shape or queries.ndim != 2:
        raise ValueError(
            f"queries {queries.shape} and documents {documents.shape} must both be (n, dim)"
        )
    if groups is not None and len(groups) != len(queries):
        raise ValueError(f"{len(groups)} group labels for {len(queries)} queries")
    q = _unit_rows(queries)
    d = _unit_rows(documents)
    labels = None if groups is None else np.unique(np.asarray(groups), return_inverse=True)[1]
    ranks = np.empty(len(q), dtype=np.int64)
    for start in range(0, len(q), QUERY_BLOCK):
        block = q[start : start + QUERY_BLOCK]  # (block, dim)
        scores = block @ d.T  # (block, n)
        rows = np.arange(len(block))
        right = scores[rows, start + rows]  # (block,)
        # A tolerance so the right document's own float noise never outranks it.
        higher = scores > right[:, None] + 1e-6  # (block, n)
        if labels is not None:
            higher &= labels[start : start + len(block), None] != labels[None, :]
        ranks[start : start + len(block)] = 1 + higher.sum(axis=1)
    return 1.0 / ranks


def retrieval_metrics(
    queries: np.ndarray, documents: np.ndarray, groups: Sequence[Any] | None = None
) -> dict[str, float]:
    """Return top-1 accuracy and MRR of finding document ``i`` for query ``i``.

    See :func:`reciprocal_ranks` for ties and ``groups``.
    """
    if len(queries) == 0:
        return {"pairs": 0, "top1": float("nan"), "mrr": float("nan")}
    rr = reciprocal_ranks(queries, documents, groups)
    return {"pairs": len(rr), "top1": float(np.mean(rr == 1.0)), "mrr": float(np.mean(rr))}


def average_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Return 1-based ranks, ties sharing the mean of the ranks they span."""
    x = np.asarray(values, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    # Start index of each run of equal values in the sorted order.
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    ends = np.r_[starts[1:], len(x)]
    mean_rank = (starts + ends + 1) / 2.0  # mean of the 1-based ranks start+1 .. end
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Return Spearman's rank correlation (Pearson's r of the average ranks).

    Returns NaN when either side is constant or has fewer than two values.
    """
    if len(x) != len(y):
        raise ValueError(f"spearman: {len(x)} values against {len(y)}")
    if len(x) < 2:
        return float("nan")
    rx = average_ranks(x) - (len(x) + 1) / 2.0
    ry = average_ranks(y) - (len(y) + 1) / 2.0
    denominator = np.sqrt(np.sum(rx * rx) * np.sum(ry * ry))
    if denominator == 0:
        return float("nan")
    return float(np.sum(rx * ry) / denominator)


@dataclass(frozen=True)
class StsData:
    """Sentence pairs with gold similarity scores."""

    sentence1: list[str]
    sentence2: list[str]
    scores: np.ndarray


def read_sts_tsv(path: str) -> StsData:
    """Read ``sentence1<TAB>sentence2<TAB>score`` lines (fsspec URL or path).

    A first line whose score is not a number is taken as a header. Blank
    lines are skipped; any other malformed line is an error naming it.
    """
    import fsspec

    s1: list[str] = []
    s2: list[str] = []
    scores: list[float] = []
    with fsspec.open(path, "r", encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) != 3:
                raise ValueError(
                    f"{path}:{number}: expected 3 tab-separated fields "
                    f"(sentence1, sentence2, score), found {len(fields)}"
                )
            try:
                score = float(fields[2])
            except ValueError:
                if number == 1:
                    continue  # a header
                raise ValueError(f"{path}:{number}: score {fields[2]!r} is not a number") from None
            s1.append(fields[0])
            s2.append(fields[1])
            scores.append(score)
    if not scores:
        raise ValueError(f"{path}: no scored sentence pairs")
    return StsData(s1, s2, np.asarray(scores, dtype=np.float64))


def model_prefix(model: SentenceTransformer, prefix: str) -> str:
    """Return the text to prepend before ``model.encode``.

    A model that stores a default prompt (paramine-trained e5 models do)
    applies it itself, so nothing is added then: adding it twice would give
    ``query: query: ...``.
    """
    return "" if getattr(model, "default_prompt_name", None) else prefix


def encode_texts(
    model: SentenceTransformer, texts: Sequence[str], prefix: str = "", batch_size: int = 64
) -> np.ndarray:
    """Encode texts, each distinct text once; return ``(len(texts), dim)`` float32."""
    distinct = list(dict.fromkeys(texts))
    position = {text: i for i, text in enumerate(distinct)}
    add = model_prefix(model, prefix)
    embeddings = model.encode(
        [add + text for text in distinct],
        batch_size=batch_size,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    embeddings = np.asarray(embeddings, dtype=np.float32)  # (distinct, dim)
    return embeddings[[position[text] for text in texts]]


def evaluate_model(
    model: SentenceTransformer,
    pairs: tuple[Sequence[str], Sequence[str]] | None = None,
    sts: StsData | None = None,
    prefix: str = "",
    batch_size: int = 64,
    groups: Sequence[Any] | None = None,
) -> dict[str, float]:
    """Score one model on paraphrase retrieval and/or STS.

    Args:
        model: The encoder.
        pairs: ``(sentence_a, sentence_b)`` lists of the same length.
        groups: A pivot key per pair: filtered ranking (see :func:`reciprocal_ranks`).
        sts: Scored sentence pairs.
        prefix: Prepended to every text unless the model has a default prompt.
        batch_size: Encoding batch size.

    Returns:
        ``pairs``, ``top1``, ``mrr`` (when pairs are given) and ``sts_spearman``.
    """
    result: dict[str, float] = {}
    if pairs is not None:
        a, b = pairs
        if len(a) != len(b):
            raise ValueError(f"{len(a)} sentence_a against {len(b)} sentence_b")
        if len(a):
            result.update(
                retrieval_metrics(
                    encode_texts(model, a, prefix, batch_size),
                    encode_texts(model, b, prefix, batch_size),
                    groups,
                )
            )
        else:
            result.update(retrieval_metrics(np.zeros((0, 1)), np.zeros((0, 1))))
    if sts is not None:
        e1 = _unit_rows(encode_texts(model, sts.sentence1, prefix, batch_size))
        e2 = _unit_rows(encode_texts(model, sts.sentence2, prefix, batch_size))
        result["sts_spearman"] = spearman(np.sum(e1 * e2, axis=1), sts.scores)
        result["sts_pairs"] = len(sts.scores)
    return result


def _cell(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "nan" if np.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def results_table(rows: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """Return a Markdown table of ``(model name, metrics)`` rows."""
    columns = [("pairs", "pairs"), ("top1", "top-1"), ("mrr", "MRR")]
    columns += [("sts_spearman", "STS Spearman")]
    present = [(key, title) for key, title in columns if any(key in r for _, r in rows)]
    lines = [
        "| model | " + " | ".join(title for _, title in present) + " |",
        "|---|" + "---:|" * len(present),
    ]
    for name, metrics in rows:
        cells = [_cell(metrics.get(key)) for key, _ in present]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paramine evaluate",
        description="Score encoders on paraphrase retrieval (held-out split of a mined "
        "dataset) and on an STS TSV; prints a Markdown table.",
    )
    parser.add_argument(
        "models",
        nargs="+",
        metavar="MODEL",
        help="model folders (paramine-trained or any sentence-transformers folder) or names "
        "that `paramine models` resolves",
    )
    parser.add_argument("--dataset", help="mined dataset directory (fsspec URL) to retrieve in")
    parser.add_argument(
        "--split",
        choices=("eval", "train", "all"),
        default="eval",
        help="which rows of --dataset: the held-out pivots (default), the training ones, or all",
    )
    parser.add_argument(
        "--eval-share",
        type=float,
        default=0.05,
        help="share of pivots held out; must match the value given to `paramine train` "
        "(default 0.05)",
    )
    parser.add_argument(
        "--max-pairs",
        type=int,
        default=5000,
        help="score at most this many pairs, a deterministic sample (default 5000; 0 = all)",
    )
    parser.add_argument("--sts", help="STS TSV: sentence1<TAB>sentence2<TAB>score")
    parser.add_argument("--base", help="a base model to score first, for comparison")
    parser.add_argument("--batch-size", type=int, default=64, help="encoding batch size")
    parser.add_argument("--device", default=None, help="cpu, cuda, ... (default: automatic)")
    parser.add_argument("--json", dest="json_path", help="also write the results here as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``paramine evaluate``; return the exit status."""
    args = _parser().parse_args(argv)
    if not args.dataset and not args.sts:
        print("paramine evaluate: give --dataset DIR, --sts FILE.tsv or both", file=sys.stderr)
        return 2
    if not 0.0 <= args.eval_share < 1.0:
        print(f"--eval-share must be in [0, 1), got {args.eval_share}", file=sys.stderr)
        return 2

    from encoders.lstm_pooling import load_encoder
    from encoders.models import resolve_model
    from encoders.train import load_split, pivot_key
    from schemas.manifest import IncompleteDatasetError

    pairs = groups = None
    if args.dataset:
        try:
            split = load_split(args.dataset, args.eval_share, args.split, args.max_pairs)
        except (IncompleteDatasetError, ValueError) as error:
            print(f"paramine evaluate: {error}", file=sys.stderr)
            return 2
        pairs = (split["sentence_a"].tolist(), split["sentence_b"].tolist())
        groups = split["pivot"].map(pivot_key).tolist()
        print(f"{args.dataset}: {len(split)} pairs in split {args.split!r}", file=sys.stderr)
    sts = read_sts_tsv(args.sts) if args.sts else None

    rows: list[tuple[str, dict[str, Any]]] = []
    for spec in ([args.base] if args.base else []) + list(args.models):
        try:
            resolved = resolve_model(spec)
        except ValueError as error:
            print(f"paramine evaluate: {error}", file=sys.stderr)
            return 2
        model = load_encoder(resolved.path, device=args.device)
        metrics = evaluate_model(model, pairs, sts, resolved.prefix, args.batch_size, groups)
        name = f"{spec} (base)" if args.base and spec == args.base and not rows else spec
        rows.append((name, metrics))
        print(f"{name}: {json.dumps(metrics)}", file=sys.stderr)

    print(results_table(rows))
    if args.json_path:
        import fsspec

        with fsspec.open(args.json_path, "w", encoding="utf-8") as f:
            json.dump([{"model": name, **m} for name, m in rows], f, indent=2)
    return 0
