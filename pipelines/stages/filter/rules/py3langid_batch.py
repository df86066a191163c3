"""py3langid's probabilities for a batch of lines at once, bit for bit its own.

The language check (``stages/filter/rules/language_id.py``) asks py3langid about every line
of a run; this is the same naive Bayes, batched, at a fraction of its
interpreter overhead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class BatchScorer:
    """py3langid's ``LanguageIdentifier._decide`` for many lines at once, to the same bits.

    py3langid walks a line's bytes through a DFA in a Python loop and then
    makes a dozen numpy calls on arrays of a few elements: about 38 CPU-us a
    line, most of it interpreter overhead. Here the walk advances every line
    of a batch by one byte per numpy step, and the softmax runs on the whole
    batch. The naive-Bayes sum ``log1p(counts) @ table[features]`` stays each
    line's own product, with the features in the order the walk first meets
    them, as py3langid orders them: a matrix product's rounding depends on the
    order it adds in, and a product over the whole batch could move a line
    that sits on the ratio rule's edge. The lines of one feature count go to
    matmul as one stack, which it multiplies slice by slice.
    ``tests/pipelines/stages/filter/rules/test_language_id.py`` compares the probabilities bit
    for bit with py3langid's own.
    """

    #: Once fewer lines than this are still walking, the rest walk in Python:
    #: a long line must not cost a numpy step per byte for itself alone.
    MIN_VECTOR = 8

    def __init__(self, identifier: Any) -> None:
        import numpy as np

        self.identifier = identifier
        nextmove = identifier.tk_nextmove  # array('I'): C unsigned ints
        self.nextmove = np.frombuffer(nextmove, dtype=np.dtype(f"u{nextmove.itemsize}"))
        self.rowbase = np.asarray(identifier._rowbase, dtype=np.int64)
        self.output = np.asarray(identifier.tk_output, dtype=np.int32)
        # float16 -> float32 is exact, and it is the cast py3langid's product makes.
        # Row-major: a restricted model's table is a column slice (column-major),
        # where gathering a feature's row read a cache line per language; the
        # gathered rows, and so the products, are the same either way.
        self.table = np.ascontiguousarray(identifier.nb_ptc, dtype=np.float32)
        self.features = len(identifier.tk_output)

    def probabilities(self, texts: Sequence[str]) -> Any:
        """``(lines, classes)`` float32: each line's probabilities, columns as the identifier's."""
        import numpy as np

        identifier = self.identifier
        encoded = [identifier._encode(text) for text in texts]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        # Longest first, so that the lines still walking are always a prefix.
        order = np.argsort(-lengths, kind="stable")
        rows, found = self._walk([encoded[i] for i in order.tolist()], lengths[order])
        # (line, feature) -> visits, ordered by line, then by the first visit.
        keys = rows * self.features + found
        unique, first, counts = np.unique(keys, return_index=True, return_counts=True)
        by_visit = np.argsort(first, kind="stable")
        line_of, feature = np.divmod(unique[by_visit], self.features)
        counts = counts[by_visit].astype(np.float32)
        bounds = np.searchsorted(line_of, np.arange(len(encoded) + 1))
        scores = np.zeros((len(encoded), len(identifier.nb_classes)), dtype=np.float32)
        sizes = bounds[1:] - bounds[:-1]
        with_features = np.flatnonzero(sizes)
        logs = np.log1p(counts)
        # Each line's product in py3langid's order, the lines of one feature
        # count stacked into one call: matmul multiplies a stack slice by
        # slice, each as the lone (features,) @ (features, classes) product it
        # would be, so the bits are the same at a call per count, not a call
        # per line (the product 6.2 -> 4.0 CPU-us a line on Tatoeba's Polish,
        # English and Czech lines; most of what is left is the rows' gather).
        by_size = with_features[np.argsort(sizes[with_features], kind="stable")]
        groups = np.flatnonzero(np.diff(sizes[by_size])) + 1
        for lines in np.split(by_size, groups):
            if not len(lines):
                continue
            visits = bounds[lines][:, None] + np.arange(sizes[lines[0]])
            product = np.matmul(logs[visits][:, None, :], self.table[feature[visits]])
            scores[lines] = product[:, 0, :]
        # A line without features keeps 0.0 everywhere: py3langid's abstention.
        scores[with_features] += identifier.nb_pc
        # T = sqrt(bytes): py3langid multiplies by a Python float, which numpy
        # rounds to float32 first.
        scale = 1.0 / np.sqrt(np.maximum(lengths[order], 1).astype(np.float64))
        scores *= scale.astype(np.float32)[:, None]
        scores -= scores.max(axis=1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=1, keepdims=True)
        for i, j in identifier._alias_pairs:
            scores[:, i] += scores[:, j]
            scores[:, j] = 0.0
        unsorted = np.empty_like(scores)
        unsorted[order] = scores
        return unsorted

    def _walk(self, encoded: list[bytes], lengths: Any) -> tuple[Any, Any]:
        """(line, feature) of every feature the DFA emits, by line, then by byte.

        ``encoded`` is sorted longest first and ``lengths`` are its lengths.
        """
        import numpy as np

        count = len(encoded)
        width = int(lengths[self.MIN_VECTOR - 1]) if count >= self.MIN_VECTOR else 0
        # The first `width` bytes of every line, zero-padded, a column per
        # line so that a step reads and writes contiguous memory: (width, lines).
        heads = np.minimum(lengths, width)
        data = np.frombuffer(b"".join(line[:width] for line in encoded), dtype=np.uint8)
        starts = np.cumsum(heads) - heads
        matrix = np.zeros((width, count), dtype=np.uint8)
        line_of = np.repeat(np.arange(count), heads)
        matrix[np.arange(len(data)) - starts[line_of], line_of] = data
        visits = np.full((width, count), -1, dtype=np.int32)
        state = np.zeros(count, dtype=np.int64)
        walking = np.searchsorted(-lengths, -np.arange(width), side="left")
        for step in range(width):
            k = walking[step]
            state[:k] = self.nextmove[self.rowbase[state[:k]] + matrix[step, :k]]
            visits[step, :k] = self.output[state[:k]]
        found = visits.T  # (lines, width): nonzero reads it by line, then by byte
        rows, columns = np.nonzero(found >= 0)
        rows_list, found_list = [rows], [found[rows, columns].astype(np.int64)]
        # Fewer than MIN_VECTOR lines are longer than `width`: py3langid's loop.
        nextmove, rowbase, output = (
            self.identifier.tk_nextmove,
            self.identifier._rowbase,
            self.identifier.tk_output,
        )
        for line in range(count):
            if lengths[line] <= width:
                break
            current, tail = int(state[line]), []
            for byte in encoded[line][width:]:
                current = nextmove[rowbase[current] + byte]
                if output[current] >= 0:
                    tail.append(output[current])
            rows_list.append(np.full(len(tail), line, dtype=np.int64))
            found_list.append(np.asarray(tail, dtype=np.int64))
        rows, found = np.concatenate(rows_list), np.concatenate(found_list)
        by_line = np.argsort(rows, kind="stable")
        return rows[by_line], found[by_line]
