"""The scores a mining run gave each line of bench_quality's corpus, recomputed.

The pipeline writes pairs, not per-line scores; bench_quality.py and
bench_signals.py recompute them with the same model, prefix and
normalization (and, for margin scoring, the run's background). The
embeddings are cached per corpus (``encode_all``), and ``cached_handler``
lets a mining run look them up instead of running the model again.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from paramine.pipelines.core.groups import pivot_key, pivot_language
from paramine.pipelines.core.text import comparison_key
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.cut.rules.cuts import sample_rank
from paramine.pipelines.stages.filter.rules.column_judge import ColumnJudge
from paramine.pipelines.stages.filter.rules.detectors import LanguageDetector, language_detector
from paramine.pipelines.stages.filter.rules.line_checks import decide, resolve
from paramine.pipelines.stages.filter.rules.pair_judge import PrefilterOptions
from paramine.schemas.records import AlignedPair, ScoredPair

from benchmarks.quality.noisy_corpus import Corpus


def encode_all(
    corpus: Corpus, model_spec: str, cache: Path | None = None
) -> tuple[dict[str, int], Any]:
    """Encode every distinct text once, as the pipeline's handler does.

    With ``cache``, reuses an ``.npz`` of (texts, emb) written by an earlier
    run with the same model: only the texts it lacks are encoded, and the
    union is written back (one cache serves every noise of a corpus). A
    text's embedding does not depend on the others encoded with it.
    """
    import numpy as np
    from paramine.encoders.models.resolve import resolve_model
    from sentence_transformers import SentenceTransformer

    resolved = resolve_model(model_spec)
    texts = sorted(set(corpus.pivots) | set(corpus.candidates))
    known: list[str] = []
    known_emb = None
    if cache is not None and cache.exists():
        stored = np.load(cache, allow_pickle=True)
        if str(stored["model"]) == resolved.revision:
            known, known_emb = [str(t) for t in stored["texts"]], stored["emb"]
    index = {t: i for i, t in enumerate(known)}
    missing = [t for t in texts if t not in index]
    if not missing:
        return index, known_emb
    model = SentenceTransformer(resolved.path, device="cpu")
    start = time.monotonic()
    embeddings = model.encode(
        [resolved.prefix + t for t in missing],
        batch_size=128,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    ).astype("float32")  # (missing, dim)
    print(
        f"[bench] encoded {len(missing):,} distinct texts in {time.monotonic() - start:.0f} s",
        file=sys.stderr,
    )
    if known_emb is not None:
        embeddings = np.concatenate([known_emb, embeddings])
    texts = known + missing
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(
            cache,
            texts=np.array(texts, dtype=object),
            emb=embeddings,
            model=np.array(resolved.revision),
        )
    return {t: i for i, t in enumerate(texts)}, embeddings


def line_scores(corpus: Corpus, index: dict[str, int], embeddings: Any) -> list[float]:
    """Cosine of every line's (pivot, candidate), from the shared embeddings."""
    import numpy as np

    p = embeddings[[index[t] for t in corpus.pivots]]  # (lines, dim)
    c = embeddings[[index[t] for t in corpus.candidates]]  # (lines, dim)
    return [float(x) for x in np.einsum("ij,ij->i", p, c)]


class RunPrefilter:
    """A run's prefilter as it judged each line: its own judge, and its sides' decisions.

    The settings come from the manifest's options (``MiningSettings.prefilter_options`` of
    them, as the run built its own), the decisions from its ``line_checks``
    figures (``stages.filter.rules.line_checks.decide``): the pending pairs are settled as
    the run settled them, so the drops recomputed here are the pipeline's.

    Args:
        manifest: The run's manifest; None: ``settings``' prefilter with no figures
            (only what the tables know of each side).
        settings: Without a manifest: the settings; None: the default prefilter,
            no language check.
    """

    def __init__(self, manifest: Any = None, settings: MiningSettings | None = None) -> None:
        self.options = PrefilterOptions()
        figures: dict[str, int] = {}
        if manifest is not None:
            names = {f.name for f in fields(MiningSettings)}
            settings = MiningSettings.from_mapping(
                {k: v for k, v in manifest.options.items() if k in names}, "manifest"
            )
            figures = dict(manifest.books.note("line_checks"))
        self.detector: LanguageDetector | None = None
        if settings is not None:
            self.options = settings.prefilter_options
            if self.options.language_ratio is not None:
                self.detector = language_detector(
                    self.options.language_id, self.options.language_ratio
                )
        self.judge = ColumnJudge(self.options, self.detector)
        self.decisions = decide(figures, dict(self.options.declared_scripts))

    def reasons(self, pairs: Sequence[tuple[str, str, str, str]]) -> list[str]:
        """Each ``(pivot, candidate, pivot_lang, lang)``'s drop reason, "" where it is kept."""
        share = self.options.limits.min_script_share
        return [
            resolve(v.pending, self.decisions, share).reason if v.pending is not None else v.reason
            for v in self.judge.judge(pairs)
        ]


def run_prefilter(manifest: Any) -> RunPrefilter:
    """The prefilter of a run, from its manifest."""
    return RunPrefilter(manifest)


def line_margin_scores(
    corpus: Corpus,
    index: dict[str, int],
    embeddings: Any,
    k: int,
    sample_size: int,
    prefilter: RunPrefilter | None = None,
) -> list[float]:
    """Ratio margin of every line's (pivot, candidate), as a margin run scores it.

    The background is rebuilt the pipeline's way: the prefiltered, deduplicated
    pairs with the ``sample_size`` smallest calibration hashes. ``prefilter``:
    the run's prefilter (``run_prefilter``); by default ``PrefilterOptions()``.
    """
    import numpy as np
    from paramine.pipelines.stages.cut.rules.margin import build_background, margin_scores

    judged = prefilter or RunPrefilter()
    lines = [
        (p, c, corpus.pivot_lang_of(i), corpus.lang)
        for i, (p, c) in enumerate(zip(corpus.pivots, corpus.candidates, strict=True))
    ]
    # One per prefilter duplicate key: both texts and the pivot's language part.
    kept: dict[tuple[str, str, str], AlignedPair] = {}
    for (p, c, pivot_lang, lang), reason in zip(lines, judged.reasons(lines), strict=True):
        if not reason:
            pair = AlignedPair(p, c, pivot_lang, lang, "bench", "bench", 0)
            kept.setdefault((p, c, pivot_language(pivot_lang)), pair)
    pairs = list(kept.values())
    sample = sorted(pairs, key=sample_rank)[:sample_size]
    background = build_background(
        [
            ScoredPair(a, 0.0, embeddings[index[a.pivot]], embeddings[index[a.candidate]])
            for a in sample
        ]
    )
    p = embeddings[[index[t] for t in corpus.pivots]]  # (lines, dim)
    c = embeddings[[index[t] for t in corpus.candidates]]  # (lines, dim)
    keys = [
        (pivot_key(a), comparison_key(b))
        for a, b in zip(corpus.pivots, corpus.candidates, strict=True)
    ]
    return [float(x) for x in np.asarray(margin_scores(background, p, c, keys, k))]


class LookupEncoder:
    """Stands in for the handler's loaded encoder: returns stored embeddings of texts.

    It replaces what ``EncoderHandler.load_model`` returns (``encode`` of
    prefixed texts, unit vectors out), not the SentenceTransformer inside it:
    the handler's own encoding (tokenization, prompts, batching by length)
    then never runs, so it can change without this lookup having to follow.
    """

    def __init__(self, cache: Path, prefix: str) -> None:
        import numpy as np

        stored = np.load(cache, allow_pickle=True)
        self.index = {str(t): i for i, t in enumerate(stored["texts"])}
        self.embeddings = stored["emb"]
        self.prefix = prefix

    def encode(self, texts: list[str]) -> Any:
        """``(len(texts), dim)`` stored vectors of texts given with the run's prefix."""
        n = len(self.prefix)
        return self.embeddings[[self.index[t[n:]] for t in texts]]


def cached_handler(cache: Path) -> type:
    """An ``EncoderHandler`` whose model looks embeddings up in ``cache``.

    Everything else is the pipeline's own: batching, the cosine, the
    calibration sample and shifts, the cut, grouping, pairing, post-filter.
    Only the encoder's forward pass is memoized, so the scores are the same
    model's (up to float noise from batch padding).
    """
    from paramine.encoders.inference.handler import EncoderHandler

    class CachedEncoderHandler(EncoderHandler):
        def load_model(self) -> Any:
            return LookupEncoder(cache, self.prefix)

    return CachedEncoderHandler
