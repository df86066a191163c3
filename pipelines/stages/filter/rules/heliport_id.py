"""heliport as the prefilter's language detector: ``--language-id heliport``.

heliport (HeLI-OTS 2.0 models, about 220 languages, a compiled package with
its models in the wheel: nothing is downloaded) knows about a hundred
languages py3langid does not (Tibetan, Dhivehi, Tigrinya, Cherokee,
Inuktitut, Sorani, Punjabi in Shahmukhi ...). Measured with
``benchmarks/studies/langid/bench_langid.py`` on every distinct line of the shared Tatoeba
sets (docs/filters.md), it is not the better default: at an equal catch of
close-language lines (88.1% against 87.6%) it rejects three times as many
true lines (0.9% against 0.3%; 3.1% against 0.8% of lines of three words or
fewer; 5.0% of Chinese lines), and each process holds 840 MB against
py3langid's 95. So py3langid stays the default and ``py3langid+heliport``
lets heliport judge only the languages py3langid lacks.

heliport is GPL-3.0 (paramine is Apache-2.0): it is an optional extra the
user installs (``pip install 'paramine[heliport]'``), never a dependency.

The rule: heliport scores a language by the mean over a line's words of
-log10 P(word | language) (lower is better). Among the run's languages, their
neighbours and a few widespread ones (as py3langid is restricted), a language
ahead of the declared one by more than ``MARGIN`` is weak evidence against the
line, and the best one ahead by more than ``MARGIN + STRONG_GAP`` strong
evidence: the analogue on a log scale of py3langid's ratios (0.3 and 0.03).
heliport's scripts are not read off its model, so it judges lines in every
script (``scripts`` is None).
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Sequence
from typing import Any

from paramine.pipelines.stages.filter.rules.language_id import (
    PASSES,
    Evidence,
    competitors,
    detector_label,
)
from paramine.schemas.errors import UsageError

#: How far above the best score (per word, log10) the declared language may
#: be: at 0.75, on the lines both detectors judge, heliport rejects about as
#: many true lines (0.95% against 0.88%) and catches as many close-language
#: lines (91.0% against 90.9%) as py3langid at its ratio of 0.3.
MARGIN = 0.75
#: How much further ahead (per word, log10) another language must be for
#: strong evidence: a factor 10, as py3langid's ratio 0.3 is to its 0.03.
STRONG_GAP = 1.0
#: heliport's labels for paramine's codes where ISO 639-3 is not the answer
#: (macrolanguages and heliport's own merges: hbs for hr/sr/bs, msa for ms/id).
_HELIPORT_CODE = {
    "zh": "cmn", "fa": "pes", "sq": "sqi", "ms": "msa", "id": "msa", "hr": "hbs", "sr": "hbs",
    "bs": "hbs", "sh": "hbs", "cnr": "hbs", "uz": "uzn", "ps": "pbt", "ne": "nep",
    "no": "nob", "nb": "nob", "nn": "nno", "et": "est", "sw": "swa", "qu": "que",
    "om": "gaz", "or": "ori", "mn": "mon", "lv": "lav", "ku": "kmr", "ay": "ayr", "gn": "grn",
    "iu": "iku", "yi": "yid", "ar": "ara", "az": "aze", "pa": "pan", "tl": "tgl", "fil": "tgl",
}  # fmt: skip
#: heliport's labels for a line with no letters, and for a line it will not name.
_NOT_LANGUAGES = ("zxx", "und")


@functools.lru_cache(maxsize=1024)
def heliport_code(lang: str) -> str:
    """heliport's label of a paramine language code (``pl`` -> ``pol``, ``hr`` -> ``hbs``)."""
    import langcodes

    low = lang.lower().replace("_", "-")
    primary = low.split("-", 1)[0]
    for key in (low, primary):
        if key in _HELIPORT_CODE:
            return _HELIPORT_CODE[key]
    try:
        return str(langcodes.Language.get(primary).to_alpha3())
    except (ValueError, LookupError):
        return primary


def require_heliport(flag: str = "--language-id heliport") -> None:
    """A UsageError saying how to install heliport where it is not (``flag``: what needs it).

    It looks for the module without importing it: settings check it before a run starts.
    """
    if importlib.util.find_spec("heliport") is None:
        raise UsageError(
            f"{flag} needs heliport, which is not installed: pip install "
            "'paramine[heliport]' (heliport is GPL-3.0; docs/filters.md)"
        )


def _identifier() -> Any:
    require_heliport()
    import heliport

    return heliport.Identifier()


class HeliportCheck:
    """heliport's verdicts on the languages lines declare; one per worker.

    Unlike py3langid's check it takes no list of the run's languages: a line
    is weighed against its own language's competitors, whatever else a run
    declares, so its verdict does not depend on the batches before it.

    Args:
        margin: The rule's margin (per word, log10).
    """

    name = "heliport"

    def __init__(self, margin: float = MARGIN) -> None:
        self.margin = margin
        self._identifier: Any = None
        self._known: frozenset[str] = frozenset()
        self._cache: dict[tuple[str, str], Evidence | None] = {}

    def _load(self) -> Any:
        if self._identifier is None:
            self._identifier = _identifier()
            self._known = frozenset(self._identifier.get_confidence_all())
        return self._identifier

    @staticmethod
    @functools.lru_cache(maxsize=1024)
    def _competitors(lang: str) -> frozenset[str]:
        """heliport's labels a line declared ``lang`` is weighed against (as py3langid's)."""
        return frozenset(heliport_code(code) for code in (lang, *competitors(detector_label(lang))))

    def supported(self, lang: str) -> bool:
        """Whether heliport knows the language."""
        self._load()
        return heliport_code(lang) in self._known

    def scripts(self, lang: str) -> frozenset[str] | None:
        """The scripts heliport knows ``lang`` in: not read off its model, so None (all)."""
        return None

    def judge_many(self, lines: Sequence[tuple[str, str]]) -> list[Evidence | None]:
        """What speaks against each ``(text, declared)``; ``None``: a language it does not know."""
        identifier = self._load()
        verdicts: list[Evidence | None] = []
        for text, lang in lines:
            key = (text, lang)
            if key not in self._cache:
                self._cache[key] = self._judge(identifier, text, lang)
            verdicts.append(self._cache[key])
        if len(self._cache) > 1 << 17:
            self._cache.clear()
        return verdicts

    def _judge(self, identifier: Any, text: str, lang: str) -> Evidence | None:
        code = heliport_code(lang)
        if code not in self._known:
            return None
        rivals = self._competitors(lang)
        scores = dict(identifier.identify_topk_with_score(text, len(self._known) + 2))
        if set(scores) <= set(_NOT_LANGUAGES):  # no letters: nothing to judge
            return PASSES
        mine = scores.get(code, float("inf"))
        ahead = {
            label: mine - score
            for label, score in scores.items()
            if label in rivals and label != code and mine - score > self.margin
        }
        if not ahead:
            return PASSES
        best = max(sorted(ahead), key=ahead.__getitem__)
        strong = ahead[best] > self.margin + STRONG_GAP
        return Evidence(
            (best,) if strong else (),
            tuple(sorted(label for label in ahead if label != best or not strong)),
        )
