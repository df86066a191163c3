"""pipelines/stages/filter/rules/column_judge.py: the column path's verdicts are the object path's.

``ColumnJudge.judge`` (the rules over a batch's columns, ``pair_columns``) against
``PairJudge.judge`` (the rules pair by pair), Verdict for Verdict:
reason, sides, kept, pending, notes and figures. On every Tatoeba set of
../shared/ (a sample of each), with the curated profile's defaults as a run
of the set's languages sets them, with and without the language check and
with the sentence count; and on random Unicode and planted junk, every rule
on, languages mixed within a batch.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from paramine.pipelines.core.text import canonical_lang
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.filter.rules.column_judge import ColumnJudge
from paramine.pipelines.stages.filter.rules.detectors import language_detector
from paramine.pipelines.stages.filter.rules.junk import RULES, Limits
from paramine.pipelines.stages.filter.rules.pair_columns import Batch, PairColumns
from paramine.pipelines.stages.filter.rules.pair_judge import PairJudge, PrefilterOptions
from paramine.pipelines.stages.filter.rules.verdict import Verdict

from tests.paths import TATOEBA
from tests.pipelines.stages.filter.rules.helpers import random_line

STEM = "tatoeba-test-v2021-08-07"
#: Pairs compared per set: a seeded sample of its aligned lines, in file order.
SAMPLE = 500
#: Pairs per batch: smaller than the prefilter's 1,024, so that a set's
#: sample spans several batches and the judges' memos carry across them.
BATCH = 250

Pair = tuple[str, str, str, str]


def tatoeba_sets() -> list[Path]:
    """Every folder of aligned Tatoeba files (``eng-pol``, ``scripts/eng-zho``, ...)."""
    return sorted({path.parent for path in TATOEBA.rglob(f"{STEM}.*")})


def set_pairs(folder: Path, n: int = SAMPLE) -> list[Pair]:
    """A sample of a set's aligned lines as pairs, pivots the folder's first language."""
    pivot_ext, candidate_ext = folder.name.split("-", 1)
    # By "\n" alone: the Japanese file holds U+2028, which splitlines() splits at.
    pivots, candidates = (
        (folder / f"{STEM}.{ext}").read_text(encoding="utf-8").rstrip("\n").split("\n")
        for ext in (pivot_ext, candidate_ext)
    )
    rows = sorted(random.Random(folder.name).sample(range(len(pivots)), min(n, len(pivots))))
    pivot_lang, lang = canonical_lang(pivot_ext), canonical_lang(candidate_ext)
    return [(pivots[i], candidates[i], pivot_lang, lang) for i in rows]


def differences(
    old: PairJudge, new: ColumnJudge, pairs: Sequence[Pair], batch: int = BATCH
) -> tuple[list[Verdict], list[tuple[Pair, Verdict, Verdict]]]:
    """Both judges' verdicts of ``pairs`` in batches: the new ones, and each pair they differ on."""
    verdicts, differ = [], []
    for start in range(0, len(pairs), batch):
        chunk = pairs[start : start + batch]
        expected, found = old.judge(chunk), new.judge(chunk)
        assert len(found) == len(chunk)
        differ += [
            (pair, e, f) for pair, e, f in zip(chunk, expected, found, strict=True) if e != f
        ]
        verdicts += found
    return verdicts, differ


@pytest.mark.skipif(not TATOEBA.is_dir(), reason="needs ../shared/corpora")
@pytest.mark.parametrize(
    ("checked", "sentence_count_filter"),
    [(False, False), (True, False), (False, True)],
    ids=["rules", "language-check", "sentence-count"],
)
def test_the_columns_judge_every_tatoeba_set_as_the_objects_do(
    checked: bool, sentence_count_filter: bool
) -> None:
    sets = tatoeba_sets()
    assert len(sets) >= 45  # eng-pol, ces-eng, scripts/, small/, x-pol/
    # One detector per judge for every set, as a worker's: the languages
    # the sets declare restrict it again, set after set, in both alike.
    detectors = [language_detector("py3langid") if checked else None for _ in range(2)]
    compared: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for folder in sets:
        pairs = set_pairs(folder)
        _, _, pivot_lang, lang = pairs[0]
        settings = MiningSettings(
            src_lang=pivot_lang, tgt_lang=lang, sentence_count_filter=sentence_count_filter
        )
        old = PairJudge(settings.prefilter_options, detectors[0])
        new = ColumnJudge(settings.prefilter_options, detectors[1])
        verdicts, differ = differences(old, new, pairs)
        assert not differ, (folder.name, differ[:3])
        compared[folder.name] = len(verdicts)
        reasons.update(v.reason or ("pending" if v.pending else "kept") for v in verdicts)
    # Every set, its lines or a sample of SAMPLE of them.
    assert min(compared.values()) >= 200 and sum(compared.values()) >= 20_000, compared
    # The sets reach the rules, both paths and the check's drops.
    assert {"kept", "pending", "untranslated", "wrong_script"} <= set(reasons), reasons
    if checked:
        assert reasons["wrong_language_candidate"] > 100, reasons
    if sentence_count_filter:
        assert reasons["sentence_count_mismatch"] > 50, reasons


# ---------------------------------------------------------------- random Unicode and junk

#: Code points drawn from: ASCII, Latin with marks, Greek, Cyrillic, Hebrew,
#: Arabic, Devanagari, Thai, Han, kana, combining marks, spaces and punctuation.
_RANGES = [
    (0x20, 0x7E), (0xC0, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF),
    (0x590, 0x5FF), (0x600, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F), (0x2000, 0x206F),
    (0x3000, 0x30FF), (0x4E00, 0x4FFF),
]  # fmt: skip

#: Lines each rule drops, and lines the rules keep, in several scripts.
PLANTED = [
    "", "   ", "Tak.", "Hello there.", "hello there", "...", "!!!",
    "Visit https://example.com now.",
    "Write to ann@example.org today.", "Go to www.example.com please.", "<i>Hello</i> there.",
    "Tom &amp; Mary left.", "{\\an8}Look out!", "12345 678 90", "% $ # @ 1 2 3 a",
    "Noooooo way!", "no no no, said Tom.", "Where are you going?", "I am going home.",
    "I have 3 cats.", "Mam 4 koty.", "Mam 3 koty.", "Dokąd idziesz?", "Idę do domu.",
    "Hi. How are you? Fine.", "Cześć, jak się masz?", "Я иду домой.", "Куда ты идёшь?",
    "私は家に帰ります。", "你去哪里？", "我回家。", "Ben eve gidiyorum.", "Мин өйгә кайтам.",
    "Min öygä qaytam.", "Ana yemekten sonra geliyor.", "שלום לכולם.", "مرحبا بالجميع.",
    "नमस्ते सब को।", "สวัสดีครับ", "Prosím, pomôžte mi.", "To je moja hiša.",
    " ".join(["word"] * 90), " ".join(["słowo"] * 14), "one two three four five six seven",
]  # fmt: skip

#: Languages a batch mixes: known scripts, a named script (zh-hant, tt-latn),
#: scripts outside the tables (lad, an unknown code), scripts the detector
#: was not trained on for the language (Latin Tatar and Belarusian).
LANGUAGES = [
    ("en", "pl"), ("en", "ru"), ("pl", "ja"), ("en", "zh-hant"), ("en", "tt"), ("en", "tt-latn"),
    ("en", "lad"), ("en", "xq"), ("ru", "be"), ("en", "sk"), ("en", "sl"), ("en", "he"),
]  # fmt: skip


def junk_pairs(n: int, seed: int) -> list[Pair]:
    """Pairs of random Unicode, planted junk and real lines, sides and languages drawn at random."""
    rng = random.Random(seed)
    real = [line for pair in set_pairs(TATOEBA / "eng-pol", 200) for line in pair[:2]]
    pool = real + [random_line(rng, _RANGES) for _ in range(400)]

    def line() -> str:
        return rng.choice(PLANTED if rng.random() < 0.4 else pool)

    pairs = []
    for _ in range(n):
        pivot = line()
        candidate = pivot if rng.random() < 0.03 else line()
        pairs.append((pivot, candidate, *rng.choice(LANGUAGES)))
    return pairs


def junk_options(**changes: object) -> PrefilterOptions:
    """Every rule, tighter limits, two named scripts; ``changes`` to the fields."""
    fields: dict = {
        "min_words": 2,
        "max_words": 12,
        "max_length_ratio": 2.0,
        "junk_rules": tuple(RULES),
        "limits": Limits(min_letter_share=0.6, min_script_share=0.9),
        "language_ratio": 0.3,
        "declared_scripts": (
            ("zh-hant", frozenset({"Hani", "Bopo"})),
            ("tt-latn", frozenset({"Latn"})),
        ),
    }
    return PrefilterOptions(**{**fields, **changes})


@pytest.mark.parametrize("checked", [False, True], ids=["rules", "language-check"])
@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"sentence_count_filter": True},
        {"junk_rules": ("urls", "markup", "letters", "script")},
        {"junk_rules": ("letters", "script", "letters")},  # a rule named twice
        {"junk_rules": (), "min_words": 0},
    ],
    ids=["every-rule", "sentence-count", "curated-rules", "twice", "no-rule"],
)
def test_the_columns_judge_random_unicode_and_junk_as_the_objects_do(
    checked: bool, changes: dict
) -> None:
    options = junk_options(**changes)
    detectors = [language_detector("py3langid") if checked else None for _ in range(2)]
    old, new = PairJudge(options, detectors[0]), ColumnJudge(options, detectors[1])
    pairs = junk_pairs(1500, seed=len(changes) + 10 * checked)
    verdicts, differ = differences(old, new, pairs, batch=300)
    assert not differ, differ[:3]
    if changes:
        return
    # Every branch is met: each rule's drops, the waits, the notes.
    reasons = Counter(v.reason for v in verdicts)
    assert set(REASONS_OF_ALL_RULES) <= set(reasons), reasons
    pending = [v.pending for v in verdicts if v.pending is not None]
    assert any(p.scripts for p in pending) and any(p.length for p in pending)
    assert any(p.after for p in pending)
    if checked:
        assert reasons["wrong_language_candidate"] and reasons["wrong_language_pivot"]
        notes = {note for v in verdicts for note in v.notes}
        assert {"language_unchecked.tt-Latn", "language_unchecked.be-Latn"} <= notes, notes


REASONS_OF_ALL_RULES = (
    "empty", "untranslated", "too_short", "too_long",
    *(rule.reason for rule in RULES.values()),
)  # fmt: skip


def test_an_empty_batch_and_one_pair() -> None:
    judge, reference = ColumnJudge(junk_options(), None), PairJudge(junk_options(), None)
    assert judge.judge([]) == reference.judge([]) == []
    pair = [("Where are you going?", "Dokąd idziesz?", "en", "pl")]
    assert judge.judge(pair) == reference.judge(pair)
    [verdict] = judge.judge(pair)
    assert verdict.kept == ("Where are you going?", "Dokąd idziesz?", "en")


@pytest.mark.skipif(not TATOEBA.is_dir(), reason="needs ../shared/corpora")
def test_the_columns_settle_nearly_every_pair_of_a_curated_set_themselves() -> None:
    pairs = set_pairs(TATOEBA / "eng-pol", 1000)
    options = MiningSettings(src_lang="en", tgt_lang="pl").prefilter_options
    judge = PairJudge(options, None)
    batch = Batch(pairs, options)
    sides = [(judge.side("pivot", p), judge.side("candidate", c)) for p, c in batch.groups]
    columns = PairColumns(batch, options, sides, checked=False)
    # The object path judges only the pairs that wait on the run.
    assert columns.fallback.mean() < 0.05
    assert np.array_equal(columns.open | columns.fallback | (columns.reason != ""), [True] * 1000)
    waiting = [v.pending is not None for v in judge.judge(pairs)]
    assert columns.fallback.tolist() == waiting
