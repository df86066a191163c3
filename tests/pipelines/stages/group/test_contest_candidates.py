"""Rival pivots: a candidate that translates another pivot better leaves this one's group."""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.core.accounting import counts_from_rows
from paramine.pipelines.core.groups import ContestOptions
from paramine.pipelines.core.origins import Origins
from paramine.pipelines.mining.mine_paraphrases import MINE_STAGES, MineParaphrases
from paramine.pipelines.run.mine import run
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.group.contest_candidates import (
    MAX_RIVALS,
    ContestCandidates,
    LowestRivalsFn,
    RivalPairs,
)
from paramine.schemas.errors import UsageError
from paramine.schemas.records import AlignedPair, ScoredPair
from paramine.schemas.stages import accounting_errors
from paramine.schemas.text_keys import stable_hash

from tests.pipelines.formats.helpers import write_tsv

#: The default rival margin.
CONTEST = ContestOptions(0.02)


def aligned(pivot: str, candidate: str, line: int) -> AlignedPair:
    return AlignedPair(pivot, candidate, "en", "pl", "fixture", "mem://bitext", line)


def scored(pivot: str, candidate: str, score: float, line: int = 1) -> ScoredPair:
    return ScoredPair(aligned(pivot, candidate, line), score)


@pytest.mark.pipeline
@pytest.mark.parametrize("entries", [False, True], ids=["records", "entries"])
def test_rival_pairs_are_the_other_pivots_of_grouped_candidates(entries: bool) -> None:
    # From records, or from the prefilter's entries (the same rivals, as records).
    grouped = [
        aligned("I smoke.", "Palę.", 1),
        aligned("I smoke.", "Ja palę.", 2),
    ]
    prefiltered = [
        *grouped,
        aligned("I am smoking.", "Palę.", 3),  # a rival of a grouped candidate
        aligned("i am smoking.", "palę.", 4),  # the same rival, spelled otherwise: once
        aligned("I smoke.", "Palę.", 5),  # its own pivot again: no rival
        aligned("Good night.", "Dobranoc.", 6),  # not a grouped candidate: no rival
    ]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        grouped_pc = pipeline | "Grouped" >> beam.Create(grouped)
        origins = Origins(["mem://bitext"], ["fixture"]) if entries else None
        given = [origins.entry(p) for p in prefiltered] if origins else prefiltered
        rivals = pipeline | "All" >> beam.Create(given) | RivalPairs(grouped_pc, origins)
        assert_that(rivals, equal_to([aligned("I am smoking.", "Palę.", 3)]))


@pytest.mark.pipeline
def test_a_hot_candidate_brings_a_bounded_number_of_rivals() -> None:
    grouped = [aligned("Yes.", "Tak.", 1), aligned("Yes.", "Owszem.", 2)]
    others = [aligned(f"Yes {i}.", "Tak.", 10 + i) for i in range(3 * MAX_RIVALS)]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        grouped_pc = pipeline | "Grouped" >> beam.Create(grouped)
        rivals = pipeline | "All" >> beam.Create(grouped + others) | RivalPairs(grouped_pc)
        assert_that(
            rivals | beam.combiners.Count.Globally(),
            equal_to([MAX_RIVALS]),
        )


def test_the_rivals_combine_is_the_same_in_any_order_and_split() -> None:
    import random

    rng = random.Random(7)
    # 60 rival pivots, some spelled two ways, each on several lines.
    pairs = [
        aligned(rng.choice([f"Yes {i}.", f"yes {i}."]), "Tak.", rng.randrange(10_000))
        for i in range(60)
        for _ in range(rng.randrange(1, 4))
    ]
    earliest: dict[str, AlignedPair] = {}
    for pair in pairs:
        key = pair.pivot.casefold()
        if key not in earliest or pair.line < earliest[key].line:
            earliest[key] = pair
    lowest = sorted(earliest, key=lambda k: (stable_hash(k), k))[:MAX_RIVALS]
    expected = [earliest[key] for key in sorted(lowest)]
    combine = LowestRivalsFn()
    for _ in range(20):
        rng.shuffle(pairs)
        cuts = sorted(rng.sample(range(1, len(pairs)), rng.randrange(0, 5)))
        parts = [pairs[a:b] for a, b in zip([0, *cuts], [*cuts, len(pairs)], strict=True)]
        accumulators = []
        for part in parts:
            accumulator = combine.create_accumulator()
            for pair in part:
                accumulator = combine.add_input(accumulator, pair)
            assert len(accumulator) <= MAX_RIVALS
            accumulators.append(accumulator)
        got = combine.extract_output(combine.merge_accumulators(accumulators))
        assert got == expected


@pytest.mark.pipeline
def test_the_contest_drops_a_candidate_that_translates_a_rival_better() -> None:
    group = [
        scored("I smoke.", "Palę.", 0.90),
        scored("I smoke.", "Ja palę.", 0.88),
        # The misaligned line: it translates "I have a cat." (0.93), not this pivot.
        scored("I smoke.", "Mam kota.", 0.84),
        # Close to its rival (within the margin): it stays.
        scored("I smoke.", "Palę papierosy.", 0.86),
    ]
    rivals = [
        scored("I have a cat.", "Mam kota.", 0.93),
        scored("I smoke cigarettes.", "Palę papierosy.", 0.87),
    ]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        rival_pc = pipeline | "Rivals" >> beam.Create(rivals)
        contested = pipeline | "Scored" >> beam.Create(group) | ContestCandidates(rival_pc, CONTEST)
        assert_that(
            contested.kept | beam.Map(lambda s: s.pair.candidate),
            equal_to(["Palę.", "Ja palę.", "Palę papierosy."]),
            label="Kept",
        )
        assert_that(contested.dropped, equal_to([("rival_pivot", 1)]), label="Dropped")


@pytest.mark.pipeline
def test_the_contest_compares_candidates_across_groups_too() -> None:
    # The same candidate in two groups: it stays only where it scores best.
    group = [
        scored("I smoke.", "Palę.", 0.95),
        scored("I am smoking.", "Palę.", 0.80),
    ]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        none = pipeline | "NoRivals" >> beam.Create([])
        contested = (
            pipeline
            | "Scored" >> beam.Create(group)
            | ContestCandidates(none, ContestOptions(0.05))
        )
        assert_that(
            contested.kept | beam.Map(lambda s: s.pair.pivot),
            equal_to(["I smoke."]),
        )


def test_rival_margin_is_checked_and_can_be_turned_off() -> None:
    assert MiningSettings(rival_margin="off").rival_margin is None  # type: ignore[arg-type]
    assert MiningSettings().rival_margin == 0.02
    with pytest.raises(UsageError, match="rival-margin"):
        MiningSettings(rival_margin=-0.1)


BITEXT = [
    aligned("Good night.", "Dobranoc.", 1),
    aligned("Good night.", "Spokojnej nocy.", 2),
    aligned("Thank you.", "Dziękuję.", 3),
    aligned("Thank you.", "Dobranoc.", 4),  # misaligned: it is "Good night."'s
    aligned("Sleep well.", "Dobranoc.", 5),  # a rival pivot with one candidate
]


@pytest.mark.pipeline
def test_the_books_balance_with_the_contest(tiny_model_dir: Path) -> None:
    # A margin of 0 means any better rival wins: "Dobranoc." keeps one pivot.
    config = MiningSettings(model=str(tiny_model_dir), threshold="-1.0", rival_margin=0.0)

    def check(rows: list) -> None:
        counts = counts_from_rows(rows)
        assert accounting_errors(counts, MINE_STAGES) == []
        contest = counts.stage("ContestCandidates")
        assert contest.taken_in == counts.stage("GroupByPivot").kept == 4
        assert contest.dropped.get("rival_pivot", 0) >= 1
        assert counts.stage("ThresholdFilter").taken_in == contest.kept
        # Two pivots are new texts for the contest: one rival, spelled once.
        assert counts.note("encoding")["texts_encoded"] == 2 + 3 + 1

    with TestPipeline(runner="FnApiRunner") as pipeline:
        mined = pipeline | beam.Create(BITEXT) | MineParaphrases(config)
        assert_that(mined.counts, check)


@pytest.mark.pipeline
def test_a_mine_run_records_the_contest_in_its_manifest(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    tsv = tmp_path / "bitext.tsv"
    tsv.write_text("".join(f"{p.pivot}\t{p.candidate}\n" for p in BITEXT), encoding="utf-8")
    for margin in ("0", "off"):
        output = tmp_path / f"out-{margin}"
        manifest = run(
            [
                str(tsv),
                "--output",
                str(output),
                "--model",
                str(tiny_model_dir),
                "--threshold",
                "-1",
                "--rival-margin",
                margin,
            ]
        )
        assert manifest.accounting_errors() == []
        assert "ContestCandidates" in [stage["name"] for stage in manifest.stages]
        dropped = manifest.counts["ContestCandidates"]["dropped"].get("rival_pivot", 0)
        assert (dropped >= 1) if margin == "0" else (dropped == 0)


# ------------------------------------------------------- inflection variants


@pytest.mark.parametrize(
    ("a", "b", "variants"),
    [
        ("Nic nie podpisywałem.", "Nic nie podpisywałam.", True),
        ("Byl jsem velmi vzrušený.", "Byla jsem velmi vzrušená.", True),
        ("Jesteś zła?", "Jesteś zły?", True),
        ("Odbiło ci?", "Zwariowałeś?", False),  # another wording: a real paraphrase
        ("Znikł bez śladu.", "Zniknął nagle bez śladu.", False),  # a word more
        ("Palę.", "palę!", False),  # case and punctuation only: near-equal, not this
        ("Mam psa.", "Mam kota.", False),  # no shared stem
    ],
)
def test_inflection_variants(a: str, b: str, variants: bool) -> None:
    from paramine.schemas.text_keys import inflection_variants

    assert inflection_variants(a, b) is variants
    assert inflection_variants(b, a) is variants


@pytest.mark.pipeline
def test_inflection_pairs_are_counted_and_dropped_on_request(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    import json

    bitext = [
        ("I didn't sign anything.", "Nic nie podpisywałem."),
        ("I didn't sign anything.", "Nic nie podpisywałam."),
        ("Are you crazy?", "Odbiło ci?"),
        ("Are you crazy?", "Zwariowałeś?"),
    ]
    tsv = write_tsv(tmp_path / "bitext.tsv", bitext)
    written = {}
    for drop in (False, True):
        output = tmp_path / f"out-{drop}"
        flags = ["--threshold", "-1"] + (["--drop-inflection-pairs"] if drop else [])
        manifest = run([str(tsv), "--output", str(output), "--model", str(tiny_model_dir), *flags])
        assert manifest.accounting_errors() == []
        dropped = manifest.counts["PostFilter"]["dropped"].get("inflection_variant", 0)
        written[drop] = manifest.rows.pairs
        stats = json.loads((output / "stats.json").read_text())
        variants = stats["groups"]["inflection_variants"]
        if drop:
            assert dropped == 1 and variants == {"pairs": 0, "share": 0.0}
        else:
            assert dropped == 0 and variants == {"pairs": 1, "share": 0.5}
    assert written == {False: 2, True: 1}


# The relative rule: vectors in three dimensions, cosines computed from them.
def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype="float32")
    return vector / np.linalg.norm(vector)


SMOKE, SMOKING, CAT = unit(1.0, 0.0, 0.0), unit(1.0, 0.1, 0.0), unit(0.0, 1.0, 0.0)
PALE, JA_PALE, MAM_KOTA = unit(1.0, 0.2, 0.2), unit(1.0, 0.15, 0.25), unit(0.98, 1.0, 0.0)


def with_vectors(pivot: str, p: np.ndarray, candidate: str, c: np.ndarray) -> ScoredPair:
    return ScoredPair(aligned(pivot, candidate, 1), float(p @ c), p, c)


@pytest.mark.pipeline
def test_a_candidate_that_alone_prefers_a_rival_pivot_leaves_the_group() -> None:
    # "Mam kota." translates "I have a cat." only 0.014 better than "I smoke.":
    # within the absolute margin. But its group-mate "Palę." is 0.77 closer to
    # "I smoke." than to "I have a cat.": the two pivots are far apart, and only
    # the misaligned line leans to the other one.
    assert 0 < float(CAT @ MAM_KOTA - SMOKE @ MAM_KOTA) < 0.02
    group = [
        with_vectors("I smoke.", SMOKE, "Palę.", PALE),
        with_vectors("I smoke.", SMOKE, "Mam kota.", MAM_KOTA),
    ]
    rivals = [with_vectors("I have a cat.", CAT, "Mam kota.", MAM_KOTA)]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        rival_pc = pipeline | "Rivals" >> beam.Create(rivals)
        contested = pipeline | "Scored" >> beam.Create(group) | ContestCandidates(rival_pc, CONTEST)
        assert_that(
            contested.kept | beam.Map(lambda s: s.pair.candidate),
            equal_to(["Palę."]),
            label="Kept",
        )
        assert_that(contested.dropped, equal_to([("rival_pivot", 1)]), label="Dropped")
    # Without vectors (stored cosines) only the absolute rule applies: it stays.
    bare = [ScoredPair(s.pair, s.score) for s in group]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        rival_pc = pipeline | "Rivals" >> beam.Create([ScoredPair(r.pair, r.score) for r in rivals])
        contested = pipeline | "Scored" >> beam.Create(bare) | ContestCandidates(rival_pc, CONTEST)
        assert_that(contested.dropped, equal_to([]), label="NoneDropped")


@pytest.mark.pipeline
def test_a_candidate_of_two_wordings_of_one_sentence_stays() -> None:
    # "Palę." prefers "I'm smoking." by 0.015, and its mate "Ja palę." by 0.010:
    # the two pivots are one sentence for this model, so no one leaves.
    gap = float(SMOKING @ PALE - SMOKE @ PALE)
    mate_gap = float(SMOKING @ JA_PALE - SMOKE @ JA_PALE)
    assert 0 < gap < 0.02 and gap - mate_gap < 0.01
    group = [
        with_vectors("I smoke.", SMOKE, "Palę.", PALE),
        with_vectors("I smoke.", SMOKE, "Ja palę.", JA_PALE),
    ]
    rivals = [with_vectors("I'm smoking.", SMOKING, "Palę.", PALE)]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        rival_pc = pipeline | "Rivals" >> beam.Create(rivals)
        contested = pipeline | "Scored" >> beam.Create(group) | ContestCandidates(rival_pc, CONTEST)
        assert_that(
            contested.kept | beam.Map(lambda s: s.pair.candidate),
            equal_to(["Palę.", "Ja palę."]),
            label="Kept",
        )
        assert_that(contested.dropped, equal_to([]), label="Dropped")


@pytest.mark.pipeline
def test_a_rival_is_judged_on_the_candidates_own_text() -> None:
    # "Zwariowałeś?" (Are you nuts?) and "Zwariowałeś." (You've gone mad.) share
    # a comparison key, so the rival pair of the second meets the first in the
    # contest. Its own score (0.95) beats the group's (0.84) by far; the group's
    # candidate itself is no closer to "You've gone mad." than to its pivot.
    nuts, mad = unit(1.0, 0.0, 0.0), unit(0.0, 1.0, 0.0)
    question, statement = unit(1.0, 0.3, 0.0), unit(0.2, 1.0, 0.0)
    mate = unit(1.0, 0.25, 0.1)
    group = [
        with_vectors("Are you nuts?", nuts, "Zwariowałeś?", question),
        with_vectors("Are you nuts?", nuts, "Odbiło ci?", mate),
    ]
    rivals = [with_vectors("You've gone mad.", mad, "Zwariowałeś.", statement)]
    assert float(mad @ statement) - float(nuts @ question) > 0.02
    assert float(mad @ question) < float(nuts @ question)
    with TestPipeline(runner="FnApiRunner") as pipeline:
        rival_pc = pipeline | "Rivals" >> beam.Create(rivals)
        contested = pipeline | "Scored" >> beam.Create(group) | ContestCandidates(rival_pc, CONTEST)
        assert_that(contested.dropped, equal_to([]), label="NoneDropped")
    # Without vectors the rival pair's own score is all there is: it is dropped.
    bare = [ScoredPair(s.pair, s.score) for s in group]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        rival_pc = pipeline | "Rivals" >> beam.Create([ScoredPair(r.pair, r.score) for r in rivals])
        contested = pipeline | "Scored" >> beam.Create(bare) | ContestCandidates(rival_pc, CONTEST)
        assert_that(contested.dropped, equal_to([("rival_pivot", 1)]), label="Dropped")
