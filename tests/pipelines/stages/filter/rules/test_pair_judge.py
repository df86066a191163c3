"""pipelines/stages/filter/rules/pair_judge.py: the Prefilter's verdict on each pair, its rules.

The Prefilter's transform (reading, duplicates, the books) is tested in
tests/pipelines/stages/filter/test_prefilter.py; here the judge, on pairs and
on the scripts and small languages of ../shared/.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from paramine.pipelines.core.text import normalize
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.filter.rules.line_checks import decide, resolve
from paramine.pipelines.stages.filter.rules.pair_judge import PairJudge, PrefilterOptions
from paramine.schemas.errors import UsageError
from paramine.schemas.records import AlignedPair

from tests.paths import CORPORA, TATOEBA
from tests.pipelines.stages.helpers import aligned

SMALL = TATOEBA / "small"


def _aligned(
    folder: str, pivot_ext: str, candidate_ext: str, n: int = 400
) -> list[tuple[str, str]]:
    base = TATOEBA / folder / "tatoeba-test-v2021-08-07"
    pivot, candidate = (Path(f"{base}.{ext}") for ext in (pivot_ext, candidate_ext))
    if not pivot.is_file():
        pytest.skip(f"{pivot} is not here (../shared/corpora)")
    # By "\n" alone: the Japanese file holds U+2028, which splitlines() splits at.
    pairs = zip(
        pivot.read_text(encoding="utf-8").rstrip("\n").split("\n"),
        candidate.read_text(encoding="utf-8").rstrip("\n").split("\n"),
        strict=True,
    )
    return [(normalize(a), normalize(b)) for a, b in pairs][:n]


@pytest.mark.parametrize(
    ("folder", "pivot_ext", "candidate_ext", "pivot_lang", "lang"),
    [
        ("x-pol/jpn-pol", "jpn", "pol", "ja", "pl"),  # a Japanese pivot group
        ("scripts/eng-tha", "eng", "tha", "en", "th"),  # a Thai candidate group
        ("scripts/eng-zho", "eng", "zho", "en", "zh"),
        ("scripts/eng-khm", "eng", "khm", "en", "km"),
        ("scripts/eng-mar", "eng", "mar", "en", "mr"),
    ],
)
def test_the_length_and_letter_rules_keep_true_pairs_in_every_script(
    folder: str, pivot_ext: str, candidate_ext: str, pivot_lang: str, lang: str
) -> None:
    # Japanese and Chinese lines were one "word": 12,340 of 13,862 Japanese
    # lines were dropped as length_ratio; Marathi's vowel signs were no letters.
    options = PrefilterOptions(junk_rules=("urls", "markup", "letters", "script"))
    pairs = _aligned(folder, pivot_ext, candidate_ext)
    # The tables' scripts alone: a line outside them waits for the run's
    # decision, which a Tatoeba set of one script never changes.
    judge = PairJudge(options, None)
    reasons = Counter(
        "wrong_script"
        if verdict.pending is not None and verdict.pending.scripts
        else verdict.reason
        for verdict in judge.judge([(p, c, pivot_lang, lang) for p, c in pairs])
    )
    dropped = sum(n for reason, n in reasons.items() if reason)
    # Tatoeba's Khmer file holds Latin transliterations ("Baəy !"): wrong_script.
    assert dropped <= 0.03 * len(pairs), reasons


#: Slovenian written for this test (not Tatoeba's: see the next test).
SLOVENIAN = [
    "Ali imate rezervacijo?", "Kje je postaja?", "Hvala lepa.", "Jutri bom doma.",
    "To je moja hiša.", "Ne vem, kaj naj rečem.", "Rad imam kavo.", "Kako ti je ime?",
    "Danes je lepo vreme.", "Pojdi domov.", "Kupil sem novo knjigo.", "Ne morem spati.",
    "Moj brat živi v Ljubljani.", "Ta avto je zelo drag.", "Odpusti in pozabi.",
    "Pomoč je že na poti.", "Poklical sem te.", "Nikamor ne grem.", "Se vidimo jutri?",
    "Si v redu?", "Večerja je ob šestih.", "Vlak je zamudil.", "Tom je bil tam.",
    "Dobro jutro!", "Lahko noč.", "Prosim, sedite.", "Kdo je to?", "Mačka spi.",
    "Pes laja.", "Ne vstopaj!",
]  # fmt: skip


def judged_side(lines: list[str], lang: str) -> tuple[list[str], dict]:
    """Each line's prefilter reason on one side of a run made of these lines, and the decisions."""
    from collections import Counter as Tally

    from paramine.pipelines.stages.filter.rules.detectors import language_detector
    from paramine.pipelines.stages.filter.rules.line_checks import decide, resolve
    from paramine.pipelines.stages.filter.rules.pair_judge import PairJudge

    options = MiningSettings(src_lang="en", tgt_lang=lang).prefilter_options
    judge = PairJudge(options, language_detector("py3langid"))
    verdicts = judge.judge([("Hello there, my friend.", line, "en", lang) for line in lines])
    profile = Tally(key for verdict in verdicts for key in verdict.figures)
    decisions = decide(profile)
    reasons = [
        resolve(v.pending, decisions, 0.8).reason if v.pending is not None else v.reason
        for v in verdicts
    ]
    return reasons, decisions[f"candidate:{lang}"].present


def test_close_languages_are_told_apart_by_the_evidence_of_the_run() -> None:
    # "Mačka spi." leans to Croatian and "Pes laja." to Spanish, weakly: with
    # neither present on the side, they are Slovenian lines and stay.
    reasons, present = judged_side(SLOVENIAN, "sl")
    assert reasons == [""] * len(SLOVENIAN) and present == {}
    # Slovak lines planted on the side are Slovak by strong evidence: dropped,
    # and Slovak is then present; the Slovenian lines still all stay.
    slovak = lines(CORPORA / "laser_tatoeba_v1" / "tatoeba.slk-eng.slk", 200)[:10]
    reasons, present = judged_side(SLOVENIAN + slovak, "sl")
    assert reasons[: len(SLOVENIAN)] == [""] * len(SLOVENIAN)
    assert reasons[len(SLOVENIAN) :] == ["wrong_language_candidate"] * len(slovak)
    assert "sk" in present  # and Czech: Slovak lines are Czech rather than Slovenian too


def test_a_line_strong_evidence_drops_is_settled_without_waiting_for_the_run() -> None:
    from paramine.pipelines.stages.filter.rules.detectors import language_detector
    from paramine.pipelines.stages.filter.rules.pair_judge import PairJudge

    options = MiningSettings(src_lang="en", tgt_lang="sl").prefilter_options
    judge = PairJudge(options, language_detector("py3langid"))
    slovak = lines(CORPORA / "laser_tatoeba_v1" / "tatoeba.slk-eng.slk", 200)[:10]
    verdicts = judge.judge([("Hello there, my friend.", line, "en", "sl") for line in slovak])
    # Whatever else the run holds, a line Slovak by strong evidence is
    # dropped: it does not wait. Only weak evidence waits for the run.
    settled = [v for v in verdicts if v.pending is None]
    assert len(settled) == 9
    for v in settled:
        assert v.reason == "wrong_language_candidate"
        assert "candidate:sl:drop:wrong_language_candidate" in v.figures
    waiting = [v.pending for v in verdicts if v.pending is not None]
    assert [need.strong for p in waiting for need in p.languages] == [()]


def test_a_language_that_takes_more_words_keeps_its_long_renderings() -> None:
    """A side whose pairs run to 2.8 times the pivot's words learns that band.

    Toki Pona says with many short words what English says with few (its
    held-out Tatoeba set lost 3.1% of its true lines to the fixed band); the
    side's median ratio moves the band's top, and a pair far outside it
    still drops.
    """
    from paramine.pipelines.stages.filter.rules.line_checks import decide, resolve

    options = PrefilterOptions()
    judge = PairJudge(options, None)
    pivot = "we go home now"
    candidate = "mi en jan ante mute li tawa tomo mi lon tenpo ni {}"  # 13 words: 14 / 5
    pairs = [(pivot, candidate.format(i), "en", "tok") for i in range(60)]
    pairs.append((pivot, " ".join(["ni"] * 40) + ".", "en", "tok"))  # 41 / 5
    verdicts = judge.judge(pairs)
    assert all(v.pending is not None and v.pending.length is not None for v in verdicts)
    decisions = decide(Counter(key for v in verdicts for key in v.figures))
    assert decisions["candidate:tok"].length_scales == {"en": 2.8577}  # bin 21: e^1.05
    reasons = [resolve(v.pending, decisions, 0.8).reason for v in verdicts if v.pending]
    assert reasons == [""] * 60 + ["length_ratio"]
    # Alone, the same pair is outside the fixed band.
    [alone] = judge.judge(pairs[:1])
    assert alone.pending is not None
    assert resolve(alone.pending, decide(Counter(alone.figures)), 0.8).reason == "length_ratio"


def lines(path: Path, n: int) -> list[str]:
    if not path.is_file():
        pytest.skip(f"{path} is not here (../shared/corpora)")
    return [normalize(line) for line in path.read_text(encoding="utf-8").splitlines()[:n]]


def test_tatoebas_slovenian_set_is_mostly_slovak_and_the_check_says_so() -> None:
    """What the detector can and cannot tell apart on small/eng-slv, in figures.

    1,492 of its 2,495 "slv" lines (normalized) hold letters Slovenian does
    not write (á ä é í ó ô ú ý ľ ĺ ŕ ň ť ď ě ř ů): they are Slovak (a few
    Czech). The check drops 1,451 of them as another language (97.3%; 30 more
    fail the length ratio); of the other 1,003 it keeps 721, and drops 261,
    short Slovak lines without those letters ("Som žiak.", "Stretneme sa
    zajtra?"). Slovenian lines written for the test above are all kept.
    """
    import re

    slv = lines(SMALL / "eng-slv" / "tatoeba-test-v2021-08-07.slv", 3000)
    foreign = re.compile("[áäéíóôúýľĺŕňťďěřůÁÄÉÍÓÔÚÝĽĹŔŇŤĎĚŘŮ]")
    reasons, present = judged_side(slv, "sl")
    slovak = [r for line, r in zip(slv, reasons, strict=True) if foreign.search(line)]
    rest = [r for line, r in zip(slv, reasons, strict=True) if not foreign.search(line)]
    assert len(slovak) == 1492 and "sk" in present
    assert sum(r == "wrong_language_candidate" for r in slovak) >= 0.97 * len(slovak)
    assert sum(r == "" for r in rest) >= 0.6 * len(rest)


def reason_of(pair: AlignedPair, options: PrefilterOptions) -> str:
    """The prefilter's verdict on one pair, its rules alone (no language check), as a run of it."""
    [verdict] = PairJudge(options, None).judge(
        [(pair.pivot, pair.candidate, pair.pivot_lang, pair.lang)]
    )
    if verdict.pending is None:
        return verdict.reason
    decisions = decide(Counter(verdict.figures))
    return resolve(verdict.pending, decisions, options.limits.min_script_share).reason


# ---------------------------------------------------------------- the rules, pair by pair


def test_reasons() -> None:
    options = PrefilterOptions(min_words=1, max_words=5, max_length_ratio=2.5)
    cases = {
        ("", "Cześć."): "empty",
        ("Hello there.", "Hello there."): "untranslated",
        ("Hello there.", "hello there"): "untranslated",
        ("...", "!!!"): "untranslated",
        ("one two three four five six", "jeden dwa trzy"): "too_long",
        ("I saw it yesterday evening.", "Tak."): "length_ratio",
        ("Good morning.", "Dzień dobry."): "",
    }
    for (pivot, candidate), reason in cases.items():
        assert reason_of(aligned(pivot, candidate), options) == reason, (
            pivot,
            candidate,
        )


def test_sentence_count_filter_is_optional() -> None:
    pair = aligned("Hi. How are you?", "Cześć, jak się masz?")
    assert reason_of(pair, PrefilterOptions()) == ""
    on = PrefilterOptions(sentence_count_filter=True)
    assert reason_of(pair, on) == "sentence_count_mismatch"


def test_invalid_options_are_refused() -> None:
    with pytest.raises(UsageError, match="--min-words 5 is above --max-words 2"):
        PrefilterOptions(min_words=5, max_words=2)
    with pytest.raises(UsageError, match=r"^--min-words -1 is negative$"):
        PrefilterOptions(min_words=-1)
    with pytest.raises(UsageError, match=r"--max-length-ratio 0\.9 must be at least 1"):
        PrefilterOptions(max_length_ratio=0.9)
