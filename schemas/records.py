"""The frozen records that every stage of the mining pipeline passes along."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, init=False)
class AlignedPair:
    """One aligned (pivot, candidate) pair as read from a shard.

    The pivot is the source-language sentence that several candidates may
    translate; the candidate is the target-language sentence.

    Attributes:
        pivot: Source-language sentence, as read (only line ends stripped).
        candidate: Target-language sentence, as read.
        pivot_lang: Language code of the pivot, e.g. ``en``.
        lang: Language code of the candidate, e.g. ``pl``.
        corpus: Name of the corpus the shard belongs to.
        shard: URL of the shard the pair was read from.
        line: 1-based record number in the shard (line for line formats,
            translation unit or link number for XML formats).
    """

    pivot: str
    candidate: str
    pivot_lang: str
    lang: str
    corpus: str
    shard: str
    line: int

    def __init__(
        self,
        pivot: str,
        candidate: str,
        pivot_lang: str,
        lang: str,
        corpus: str,
        shard: str,
        line: int,
    ) -> None:
        # A frozen dataclass's own __init__ sets each field through
        # object.__setattr__: 0.8 us a record against 0.4 here. A run builds
        # two or three records per input pair (the read, the kept pair, each
        # decode). Equality, hashing and repr are still the dataclass's.
        self.__dict__.update(
            pivot=pivot,
            candidate=candidate,
            pivot_lang=pivot_lang,
            lang=lang,
            corpus=corpus,
            shard=shard,
            line=line,
        )


@dataclass(frozen=True)
class ScoredPair:
    """An aligned pair with its score: the cross-lingual cosine, or the ratio margin.

    ``pivot_vector`` and ``candidate_vector`` (unit embeddings, numpy) are set
    only where a step needs them: from the encoder to the rival contest, which
    compares a group's candidates by them, and to ``MarginScore``, which
    rescores the pair and drops them in the same step (without margin scoring
    they are dropped after the contest; the calibration sample is embedded on
    its own). They are never part of equality.
    """

    pair: AlignedPair
    score: float
    pivot_vector: Any = field(default=None, compare=False, repr=False)
    candidate_vector: Any = field(default=None, compare=False, repr=False)

    def without_vectors(self) -> ScoredPair:
        """The same scored pair, its embeddings dropped."""
        if self.pivot_vector is None and self.candidate_vector is None:
            return self
        return ScoredPair(self.pair, self.score)


@dataclass(frozen=True)
class ParaphrasePair:
    """Two candidates that translate the same pivot: one output row.

    ``score_a`` and ``score_b`` are the scores of each sentence with the
    pivot (the ratio margin or the cosine: the manifest's
    ``threshold.score``); ``group_size`` is the number of distinct
    candidates in the pivot's group after capping.
    """

    sentence_a: str
    sentence_b: str
    lang: str
    pivot: str
    pivot_lang: str
    score_a: float
    score_b: float
    group_size: int
    corpus: str
    pair_id: str


@dataclass(frozen=True)
class Rejected:
    """A malformed input record, kept with the reason it was rejected.

    Attributes:
        record: The raw record, decoded with replacement characters where it
            was not valid UTF-8, cut to a bounded length.
        reason: Machine-readable reason, e.g. ``invalid_utf8``.
        shard: URL of the shard.
        line: 1-based record number in the shard (0 when not applicable).
        stage: The stage that rejected it, e.g. ``ReadBitext``.
    """

    record: str
    reason: str
    shard: str
    line: int
    stage: str = "ReadBitext"
