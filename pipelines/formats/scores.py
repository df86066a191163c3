"""Scores a corpus carries per record, used as read filters.

CzEng 2.0 gives each pair an adequacy score (dual conditional cross-entropy)
and a language score per side (fastText's p(language) / p(most likely
language)), all in [0, 1], higher cleaner. Other corpora carry one score in a
column of their TSV (bicleaner, LASER margins) or in a TMX unit's
``<prop type="...">``. A record whose score is under the run's minimum is
rejected at read with its own reason (``low_adequacy``,
``low_language_score``, ``low_score``), counted in ``counts.read.dropped``
and written to ``rejects/`` like every rejection (up to the per-reason cap),
so a user can look at what a threshold takes out. A score that is not a
number is ``bad_score``; a TMX unit without the property, ``missing_score``.

Defaults (docs/filters.md, "Corpus scores"): CzEng's language scores at 0.3,
the ratio the language check uses (pipelines/stages/filter/rules/language_id.py), on every
line (CzEng applied 0.5 to lines of more than ten words only); adequacy off,
because CzEng's adequacy is not normalized by length (a long sentence scores
lower than a short one of the same quality) and CzEng already removed
pairs under 0.02.
"""

from __future__ import annotations

import math

DEFAULT_MIN_ADEQUACY = 0.0
DEFAULT_MIN_LANGUAGE_SCORE = 0.3
BAD_SCORE = "bad_score"
MISSING_SCORE = "missing_score"


def score_reason(text: str, minimum: float, name: str) -> str:
    """``""`` when the score ``text`` is at least ``minimum``; else why the record goes.

    Args:
        text: The score as the corpus writes it.
        minimum: The run's threshold.
        name: The score's name in the reason: ``low_<name>``.
    """
    try:
        value = float(text)
    except ValueError:
        return BAD_SCORE
    if math.isnan(value):
        return BAD_SCORE
    return "" if value >= minimum else f"low_{name}"


def czeng_score_reason(
    adequacy: str, cs_language: str, en_language: str, min_adequacy: float, min_language: float
) -> str:
    """The first failing CzEng score's reason, adequacy first; ``""`` to keep the pair."""
    if min_adequacy > 0:
        reason = score_reason(adequacy, min_adequacy, "adequacy")
        if reason:
            return reason
    if min_language > 0:
        for text in (cs_language, en_language):
            reason = score_reason(text, min_language, "language_score")
            if reason:
                return reason
    return ""
