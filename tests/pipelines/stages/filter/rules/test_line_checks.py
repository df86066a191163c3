"""rules/line_checks.py: each side's decisions from the run's figures, and the held-back pairs."""

from __future__ import annotations

from paramine.pipelines.stages.filter.rules.line_checks import (
    LanguageNeed,
    LengthNeed,
    Pending,
    decide,
    length_band,
    ratio_bin,
    resolve,
)

from tests.pipelines.stages.filter.rules.helpers import figures


def test_a_script_that_carries_a_fifth_of_a_sides_lines_is_learned() -> None:
    # Tatoeba's Ladino: 672 of 768 lines in Latin letters; CLDR knows Hebrew.
    ladino = figures("candidate:lad", lines=768, scripted=768, script_Latn=672, script_Hebr=96)
    decision = decide(ladino)["candidate:lad"]
    assert decision.scripts == frozenset({"Hebr", "Latn"})
    assert decision.learned == {"Latn": 0.875}
    assert decision.source == "tables+run"


def test_a_few_lines_in_another_script_are_not_learned() -> None:
    # 13% Cyrillic lines on a Polish side: under a fifth, so they stay wrong_script.
    polish = figures("candidate:pl", lines=100, scripted=100, script_Latn=87, script_Cyrl=13)
    assert decide(polish)["candidate:pl"].scripts == frozenset({"Latn"})
    # A fifth of very few lines is no evidence: fewer than ten lines are never learned.
    tiny = figures("candidate:pl", lines=10, scripted=10, script_Latn=7, script_Cyrl=3)
    assert decide(tiny)["candidate:pl"].learned == {}


def test_a_language_no_table_knows_gets_the_scripts_of_its_lines() -> None:
    klingon = figures("candidate:tlh", lines=50, scripted=50, script_Latn=50)
    decision = decide(klingon)["candidate:tlh"]
    assert (decision.scripts, decision.source) == (frozenset({"Latn"}), "run")
    # Nothing learned and nothing known: no script to judge against.
    assert (
        decide(figures("candidate:tlh", lines=5, scripted=5, script_Latn=5))[
            "candidate:tlh"
        ].scripts
        is None
    )


def test_a_script_the_user_names_is_the_only_one() -> None:
    tatar = figures("candidate:tt-latn", lines=100, scripted=100, script_Cyrl=90, script_Latn=10)
    decision = decide(tatar, {"tt-latn": frozenset({"Latn"})})["candidate:tt-latn"]
    assert (decision.scripts, decision.learned, decision.source) == (
        frozenset({"Latn"}),
        {},
        "declared",
    )


def test_a_language_is_present_where_enough_lines_are_it_by_strong_evidence() -> None:
    side = figures("candidate:pl", lines=2000, judged=2000, strong_cs=40, strong_sk=1)
    assert decide(side)["candidate:pl"].present == {"cs": 40}
    # At least 0.2% of the judged lines, and at least two.
    few = figures("candidate:pl", lines=3000, judged=3000, strong_cs=5)
    assert decide(few)["candidate:pl"].present == {}


def pending(**kwargs: object) -> Pending:
    return Pending(("Where is it?", "Gdzie to jest?"), **kwargs)  # type: ignore[arg-type]


def test_held_back_pairs_are_settled_rule_by_rule() -> None:
    side = figures("candidate:pl", lines=1000, scripted=1000, script_Latn=1000, judged=1000)
    side |= {"candidate:pl:strong:cs": 20}
    decisions = decide(side)
    weak_cs = LanguageNeed("candidate:pl", "wrong_language_candidate", (), ("cs",))
    weak_sk = LanguageNeed("candidate:pl", "wrong_language_candidate", (), ("sk",))
    strong = LanguageNeed("pivot:en", "wrong_language_pivot", ("pl",), ())
    # Weak evidence drops where the language is present, not elsewhere.
    assert resolve(pending(languages=(weak_cs,)), decisions, 0.8).reason == (
        "wrong_language_candidate"
    )
    kept = resolve(pending(languages=(weak_sk,), notes=("a",)), decisions, 0.8)
    assert (kept.reason, kept.notes) == ("", ("a",))
    # Candidate first, then the pivot, whose strong evidence drops it wherever.
    assert resolve(pending(languages=(weak_sk, strong)), decisions, 0.8).reason == (
        "wrong_language_pivot"
    )
    # A line outside its side's scripts: wrong_script before any later reason.
    cyrillic = Pending(("Hello.", "Привет."), scripts=(("candidate:pl", 1),), after="x")
    assert resolve(cyrillic, decisions, 0.8) == ("wrong_script", ("candidate:pl",), ())
    latin = Pending(("Hello.", "Cześć."), scripts=(("candidate:pl", 1),), after="numbers_differ")
    assert resolve(latin, decisions, 0.8).reason == "numbers_differ"


def test_a_sides_typical_length_ratio_widens_its_band_and_never_narrows_it() -> None:
    assert ratio_bin(1.0) == 0 and ratio_bin(2.0) == 14 and ratio_bin(0.5) == -14
    assert length_band(1.0, 2.5) == (0.4, 2.5)
    assert length_band(2.0, 2.5) == (0.4, 5.0)  # longer renderings: the top moves up
    assert length_band(0.5, 2.5) == (0.2, 2.5)  # shorter ones: the bottom moves down
    # 60 pairs at about 1.57 (bin 9), 40 at 1: the median is 1.57 to English;
    # to French, too few pairs to learn from.
    side = {"candidate:tok:ratio:en/9": 60, "candidate:tok:ratio:en/0": 40}
    side |= {"candidate:tok:ratio:fr/9": 49}
    decisions = decide(side)
    assert decisions["candidate:tok"].length_scales == {"en": 1.5683}

    def settled(ratio: float, pivot: str = "en", after: str = "") -> tuple[str, tuple]:
        need = LengthNeed(f"pivot:{pivot}", "candidate:tok", pivot, ratio, 2.5)
        pair = Pending(("Hi.", "toki."), length=need, after=after, after_sides=("pivot:en",))
        found = resolve(pair, decisions, 0.8)
        return found.reason, found.sides

    assert settled(3.5) == ("", ())  # under 1.5683 * 2.5
    assert settled(4.0) == ("length_ratio", ("pivot:en", "candidate:tok"))
    assert settled(0.3) == ("length_ratio", ("pivot:en", "candidate:tok"))
    assert settled(3.5, pivot="fr")[0] == "length_ratio"  # the fixed band
    # A later rule's reason stands once the length passes.
    assert settled(3.5, after="numbers_differ") == ("numbers_differ", ("pivot:en",))


def test_a_side_with_no_script_known_or_learned_is_kept_and_noted() -> None:
    decisions = decide(figures("candidate:tlh", lines=3, scripted=3, script_Latn=3))
    settled = resolve(Pending(("Hi.", "nuqneH"), scripts=(("candidate:tlh", 1),)), decisions, 0.8)
    assert settled == ("", (), ("script_unchecked.tlh",))


def test_a_held_back_pair_travels_as_plain_tuples() -> None:
    need = LanguageNeed("candidate:pl", "wrong_language_candidate", ("cs",), ("sk",))
    length = LengthNeed("pivot:en", "candidate:pl", "en", 3.5, 2.5)
    held = Pending(
        ("Hi.", "Cześć, jak się masz dzisiaj?"),
        scripts=(("candidate:pl", 1),),
        after="numbers_differ",
        languages=(need,),
        notes=("sentence_count_unchecked.pl",),
        length=length,
        after_sides=("pivot:en", "candidate:pl"),
    )
    row = held.row()

    def plain(value: object) -> bool:
        if isinstance(value, tuple):
            return type(value) is tuple and all(plain(item) for item in value)
        return value is None or type(value) in (str, int, float)

    assert plain(row)
    assert Pending.from_row(held.texts, row) == held
    assert Pending.from_row(("a", "b"), pending().row()) == Pending(("a", "b"))
