"""benchmarks/quality/line_scores.py: the cached encoder that bench_quality mines with."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from paramine.encoders.inference.handler import EncoderHandler

from benchmarks.quality.line_scores import cached_handler, encode_all, line_scores
from benchmarks.quality.noisy_corpus import build_corpus

PIVOTS = ["Good night.", "Good night.", "Thank you very much.", "Where is the station?"]
TARGETS = ["Dobranoc.", "Spokojnej nocy.", "Dziękuję bardzo.", "Gdzie jest dworzec?"]


def test_the_cached_handler_gives_the_stored_vectors_as_the_real_handler_encodes_them(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    corpus = build_corpus(PIVOTS, TARGETS, [False] * 4, "en", "pl")
    cache = tmp_path / "embeddings.npz"
    index, embeddings = encode_all(corpus, str(tiny_model_dir), cache)
    texts = sorted(index)
    assert len(texts) == 7 and embeddings.shape[0] == 7
    assert np.allclose(np.linalg.norm(embeddings, axis=1), 1.0, atol=1e-5)

    # The handler's own path: prefix, load_model and run_inference, as RunInference calls them.
    cached = cached_handler(cache)(str(tiny_model_dir), backend="torch", prefix="query: ")
    looked_up = dict(cached.run_inference(texts, cached.load_model()))
    for text in texts:
        assert np.array_equal(looked_up[text], embeddings[index[text]])
    # ...the vectors the real handler computes for those texts, up to float rounding.
    real = EncoderHandler(str(tiny_model_dir), backend="torch")
    encoded = dict(real.run_inference(texts, real.load_model()))
    for text in texts:
        assert float(encoded[text] @ looked_up[text]) > 1 - 1e-5

    # A second call finds every text in the cache and encodes nothing.
    again_index, again = encode_all(corpus, str(tiny_model_dir), cache)
    assert again_index == index and np.array_equal(again, embeddings)
    # Each line's score is the cosine of its two stored vectors.
    expected = [
        float(embeddings[index[p]] @ embeddings[index[c]])
        for p, c in zip(corpus.pivots, corpus.candidates, strict=True)
    ]
    assert line_scores(corpus, index, embeddings) == pytest.approx(expected, abs=1e-6)
