"""The language detectors ``--language-id`` chooses from, behind one interface.

``LanguageDetector`` is what the prefilter asks of a detector: whether it can
judge lines declared a language, and a verdict per line (``None`` where it
cannot). py3langid's check lives in :mod:`paramine.pipelines.stages.filter.rules.language_id`,
heliport's in :mod:`paramine.pipelines.stages.filter.rules.heliport_id`; this module names
them and chains them, so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from paramine.pipelines.stages.filter.rules.language_id import (
    DEFAULT_RATIO,
    Evidence,
    LanguageCheck,
)

#: ``--language-id``: the detectors, and py3langid with heliport for what it lacks.
DETECTORS = ("py3langid", "heliport", "py3langid+heliport")
DEFAULT_DETECTOR = "py3langid"


class LanguageDetector(Protocol):
    """What the prefilter asks of a language detector."""

    #: Its ``--language-id`` name.
    name: str

    def supported(self, lang: str) -> bool:
        """Whether lines declared ``lang`` can be checked."""

    def scripts(self, lang: str) -> frozenset[str] | None:
        """The scripts the detector was trained on for ``lang``; None: not known (every script)."""

    def judge_many(self, lines: Sequence[tuple[str, str]]) -> list[Evidence | None]:
        """For each ``(text, declared)``: the evidence against it; ``None``: not checkable."""


def language_detector(name: str, ratio: float = DEFAULT_RATIO) -> LanguageDetector:
    """The detector ``--language-id`` names, restricted to the languages lines declare.

    Raises:
        ValueError: An unknown name.
        UsageError: heliport is not installed (it is an extra).
    """
    if name == "py3langid":
        return LanguageCheck((), ratio)
    from paramine.pipelines.stages.filter.rules.heliport_id import (
        HeliportCheck,
    )  # an extra: imported on demand

    if name == "heliport":
        return HeliportCheck()
    if name == "py3langid+heliport":
        return ChainedCheck([LanguageCheck((), ratio), HeliportCheck()])
    raise ValueError(f"language detector {name!r}; allowed: {', '.join(DETECTORS)}")


class ChainedCheck:
    """The first detector that knows a line's declared language judges it."""

    def __init__(self, detectors: Sequence[LanguageDetector]) -> None:
        self.detectors = list(detectors)
        self.name = "+".join(d.name for d in self.detectors)

    def supported(self, lang: str) -> bool:
        return any(d.supported(lang) for d in self.detectors)

    def _judge(self, lang: str) -> LanguageDetector | None:
        return next((d for d in self.detectors if d.supported(lang)), None)

    def scripts(self, lang: str) -> frozenset[str] | None:
        detector = self._judge(lang)
        return None if detector is None else detector.scripts(lang)

    def judge_many(self, lines: Sequence[tuple[str, str]]) -> list[Evidence | None]:
        verdicts: list[Evidence | None] = [None] * len(lines)
        todo = list(range(len(lines)))
        for detector in self.detectors:
            # Judged by the first detector that knows the language: its
            # verdict stands (a language's lines are judged by one detector,
            # so the names in its evidence are that detector's).
            mine = [i for i in todo if detector.supported(lines[i][1])]
            for i, verdict in zip(mine, detector.judge_many([lines[i] for i in mine]), strict=True):
                verdicts[i] = verdict
            judged = set(mine)
            todo = [i for i in todo if i not in judged]
            if not todo:
                break
        return verdicts
