"""Each mining stage on its own, in a real Beam pipeline on the DirectRunner."""

from __future__ import annotations

import math
import random
from collections import Counter

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.checks.line_checks import decide, resolve
from paramine.pipelines.checks.pair_judge import PairJudge, PrefilterOptions
from paramine.pipelines.core.accounting import (
    KEPT,
    CountStage,
    GatherCounts,
    StageResult,
    _CountOut,
    _FirstAndCount,
    counts_from_rows,
)
from paramine.pipelines.core.groups import Group, group_weight
from paramine.pipelines.core.origins import Origins
from paramine.pipelines.formats import Shard
from paramine.pipelines.stages.cut.threshold_filter import ThresholdFilter
from paramine.pipelines.stages.filter.post_filter import PostFilter, postfilter_reason
from paramine.pipelines.stages.filter.prefilter import Prefilter
from paramine.pipelines.stages.group.group_by_pivot import GROUP_BY_PIVOT
from paramine.pipelines.stages.group.regroup_by_pivot import CandidateGroupFn, RegroupByPivot
from paramine.pipelines.stages.make_pairs import MAKE_PAIRS, MakePairs, make_pairs, pair_id
from paramine.schemas.records import AlignedPair, ParaphrasePair, ScoredPair
from paramine.schemas.stages import ALIGNED_PAIR, Stage


def aligned(pivot: str, candidate: str, line: int = 1, shard: str = "s") -> AlignedPair:
    return AlignedPair(pivot, candidate, "en", "pl", "test", shard, line)


def scored(pivot: str, candidate: str, score: float = 0.9, line: int = 1) -> ScoredPair:
    return ScoredPair(aligned(pivot, candidate, line), score)


def paraphrase(a: str, b: str, pivot: str = "Hi.") -> ParaphrasePair:
    return ParaphrasePair(a, b, "pl", pivot, "en", 0.9, 0.8, 2, "test", pair_id("pl", a, b))


def counts_equal(stage: str, expected: dict):
    """A matcher of CountStage rows: the stage's counts equal ``expected``."""

    def check(rows: list) -> None:
        actual = counts_from_rows(rows)[stage]
        assert actual == expected, f"{actual} != {expected}"

    return check


def check_stage(transform: beam.PTransform, elements: list, kept, counts: dict) -> None:
    """Apply a stage to ``elements``; assert on what it keeps and its counts."""
    with TestPipeline(runner="FnApiRunner") as p:
        result = p | beam.Create(elements) | transform
        assert_that(result.kept, kept, label="Kept")
        stage = Stage("s", ALIGNED_PAIR, None, "the stage under test")
        assert_that(result | CountStage(stage), counts_equal("s", counts), label="Counts")


class TestCountBooks:
    def test_a_row_per_bundle(self) -> None:
        count = _CountOut("s", KEPT, "pair", progress=False)
        rows = []
        for bundle in (["a", "b"], [], ["c"]):
            count.start_bundle()
            for element in bundle:
                list(count.process(element))
            rows += [row.value for row in count.finish_bundle()]
        assert rows == [("s", KEPT, 2), ("s", KEPT, 0), ("s", KEPT, 1)]

    def test_gathered_rows_are_summed_and_every_book_is_opened(self) -> None:
        seen, empty = (Stage(name, ALIGNED_PAIR, None, "a stage") for name in ("seen", "empty"))
        partial = [("seen", "kept", 2), ("seen", "kept", 3), ("seen", "empty", 1)]
        with TestPipeline(runner="FnApiRunner") as p:
            rows = p | "Rows" >> beam.Create(partial)
            nothing = StageResult(p | "None" >> beam.Create([]), p | "NoDrops" >> beam.Create([]))
            books = nothing | CountStage(empty, taken_in=p | "NoInput" >> beam.Create([]))
            gathered = (rows, books) | GatherCounts([seen, empty], [("encoding", "texts")])

            def check(rows: list) -> None:
                assert len({row[:2] for row in rows}) == len(rows), rows  # summed per key
                counts = counts_from_rows(rows)
                assert counts["seen"] == {"in": 6, "kept": 5, "dropped": {"empty": 1}}
                # An empty collection may run no bundle: the opening rows are
                # what put the empty stage and the note in the books.
                assert counts["empty"] == {"in": 0, "kept": 0, "dropped": {}}
                assert counts["encoding"] == {"texts": 0}

            assert_that(gathered, check)


class TestKeepFirst:
    def test_the_first_and_the_count_in_any_order_and_split(self) -> None:
        import random

        rng = random.Random(3)
        combine = _FirstAndCount(None)
        for n in (1, 2, 3, 10):
            values = [f"shard\x00{rng.randrange(1000):020d}" for _ in range(n)]
            for _ in range(10):
                rng.shuffle(values)
                cut = rng.randrange(0, n + 1)
                accumulators = []
                for part in (values[:cut], values[cut:]):
                    accumulator = combine.create_accumulator()
                    for value in part:
                        accumulator = combine.add_input(accumulator, value)
                    accumulators.append(accumulator)
                merged = combine.merge_accumulators(accumulators)
                assert combine.extract_output(merged) == (min(values), n)

    def test_a_key_seen_once_holds_its_element_alone(self) -> None:
        # The runner holds one accumulator per distinct key: no tuple beside it.
        combine = _FirstAndCount(len)
        once = combine.add_input(combine.create_accumulator(), "abc")
        assert once == "abc"
        assert combine.merge_accumulators([None, once, None]) == "abc"
        twice = combine.add_input(once, "ab")
        assert combine.extract_output(twice) == ("ab", 2)
        with pytest.raises(TypeError, match="no lists"):
            combine.add_input(once, ["a list"])


def reason_of(pair: AlignedPair, options: PrefilterOptions) -> str:
    """The prefilter's verdict on one pair, its rules alone (no language check), as a run of it."""
    [verdict] = PairJudge(options, None).judge(
        [(pair.pivot, pair.candidate, pair.pivot_lang, pair.lang)]
    )
    if verdict.pending is None:
        return verdict.reason
    decisions = decide(Counter(verdict.figures))
    return resolve(verdict.pending, decisions, options.limits.min_script_share).reason


class TestPrefilter:
    def test_reasons(self) -> None:
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

    def test_sentence_count_filter_is_optional(self) -> None:
        pair = aligned("Hi. How are you?", "Cześć, jak się masz?")
        assert reason_of(pair, PrefilterOptions()) == ""
        on = PrefilterOptions(sentence_count_filter=True)
        assert reason_of(pair, on) == "sentence_count_mismatch"

    @pytest.mark.parametrize("listed", [False, True], ids=["unlisted", "listed"])
    def test_normalizes_and_dedups_keeping_the_first(self, listed: bool) -> None:
        shards = [Shard("tsv", url, "test", "en", "pl") for url in ("t", "s")] if listed else []
        pairs = [
            aligned("Yes.", "Tak.", line=3),
            aligned("Yes. ", "Tak.", line=1),
            aligned("Yes.", "Tak.", line=2, shard="t"),
            aligned("No.", "", line=4),
            aligned("No.", "Nie.", line=5),
        ]
        check_stage(
            Prefilter(shards=shards),
            pairs,
            equal_to([aligned("Yes.", "Tak.", 1), aligned("No.", "Nie.", 5)]),
            {"in": 5, "kept": 2, "dropped": {"duplicate_pair": 2, "empty": 1}},
        )

    def test_origins_sort_as_the_records_do_and_give_them_back(self) -> None:
        # URLs that are prefixes of one another, line numbers of 1 to 12
        # digits, pivot languages with subtags, two corpora on one file.
        urls = ["s", "s2", "s/a", "gs://b/x.tsv", "gs://b/x.tsv.gz", "zip://m::a.zip"]
        corpora = ["opus", "ccmatrix", "op"]
        shards = [Shard("tsv", url, corpus, "en", "pl") for url in urls for corpus in corpora[:2]]
        shards.append(Shard("tsv", urls[0], corpora[2], "en", "pl"))
        rng = random.Random(7)
        records = [
            (
                rng.choice(urls),
                rng.choice([0, 1, 9, 10, 99, 100, 12_345, 99_999_999, 123_456_789_012]),
                rng.choice(["en", "en-GB", "ja-Hira", "ja"]),
                rng.choice(corpora),
            )
            for _ in range(2_000)
        ]
        key = ("Yes.", "Tak.", "pl", "en")
        listed = Origins([s.url for s in shards], [s.corpus for s in shards])
        for origins in (listed, Origins()):
            values = [origins.value(*record) for record in records]
            assert sorted(records) == [
                records[i] for i in sorted(range(2_000), key=values.__getitem__)
            ]
            for record, value in zip(records, values, strict=True):
                pair = origins.pair(key, value)
                assert (pair.shard, pair.line, pair.pivot_lang, pair.corpus) == record
                assert (pair.pivot, pair.candidate, pair.lang) == key[:3]
                assert origins.record(origins.entry(pair)) == pair
        # Named by number: the entry is short whatever the URL's length.
        long_url = "gs://a-bucket/opus/OpenSubtitles/v2018/moses/en-pl/shard-00042.tsv.gz"
        one = Origins([long_url], ["OpenSubtitles"])
        assert len(one.value(long_url, 12_345_678, "en", "OpenSubtitles")) < 20

    def test_invalid_options_are_refused(self) -> None:
        with pytest.raises(ValueError, match="min_words"):
            PrefilterOptions(min_words=5, max_words=2)


class TestThresholdFilter:
    def test_fixed_cut(self) -> None:
        elements = [scored("a", "b", 0.5), scored("c", "d", 0.84), scored("e", "f", 0.85)]
        check_stage(
            ThresholdFilter(0.84),
            elements,
            equal_to(elements[1:]),
            {"in": 3, "kept": 2, "dropped": {"below_threshold": 1}},
        )

    def test_cut_from_a_side_input(self) -> None:
        with TestPipeline(runner="FnApiRunner") as p:
            cut = p | "Cut" >> beam.Create([0.6])
            scores = p | "Scores" >> beam.Create([scored("a", "b", 0.5), scored("c", "d", 0.7)])
            result = scores | ThresholdFilter(cut)
            assert_that(result.kept | beam.Map(lambda s: s.score), equal_to([0.7]))


class TestGroupByPivot:
    def test_groups_distinct_candidates_by_normalized_pivot(self) -> None:
        elements = [
            scored("Thank you.", "Dziękuję.", line=1),
            scored("thank you.", "Dzięki.", line=2),
            scored("Thank you.", "Dziękuję.", line=3),
            scored("Alone.", "Sam.", line=4),
        ]

        def one_group(groups: list[Group]) -> None:
            assert len(groups) == 1
            group = groups[0]
            assert (group.key, group.pivot) == ("thank you.", "Thank you.")
            # The first occurrence (line 1) stands for the duplicate candidate.
            assert sorted((c.pair.candidate, c.pair.line) for c in group.candidates) == [
                ("Dzięki.", 2),
                ("Dziękuję.", 1),
            ]

        with TestPipeline(runner="FnApiRunner") as p:
            result = p | beam.Create(elements) | RegroupByPivot(max_group_size=50)
            assert_that(result.kept, one_group, label="Kept")
            rows = result | CountStage(GROUP_BY_PIVOT, weight=group_weight)
            expected = {
                "in": 4,
                "kept": 2,
                "dropped": {"duplicate_candidate": 1, "singleton_group": 1},
            }
            assert_that(rows, counts_equal("GroupByPivot", expected), label="Counts")

    def test_cap_is_deterministic_and_counted(self) -> None:
        elements = [scored("Yes.", f"Tak {i}.", line=i) for i in range(40)]
        fn = CandidateGroupFn(cap=5)
        forward = fn.extract_output(
            fn.merge_accumulators(
                [
                    _fold(fn, elements[:13]),
                    _fold(fn, elements[13:]),
                ]
            )
        )
        backward = fn.extract_output(
            fn.merge_accumulators([_fold(fn, elements[::-1][:7]), _fold(fn, elements[::-1][7:])])
        )
        assert set(forward.kept) == set(backward.kept)
        assert len(forward.kept) == 5 and forward.seen == 40

    def test_cap_below_two_is_refused(self) -> None:
        with pytest.raises(ValueError, match="at least 2"):
            RegroupByPivot(max_group_size=1)


def _fold(fn: CandidateGroupFn, elements: list[ScoredPair]):
    acc = fn.create_accumulator()
    for element in elements:
        acc = fn.add_input(acc, element)
    return acc


def _group(n: int, pivot: str = "Yes.") -> Group:
    candidates = tuple(scored(pivot, f"Zdanie numer {i}.", line=i) for i in range(n))
    return Group(pivot.casefold(), pivot, "en", "pl", candidates)


class TestMakePairs:
    @pytest.mark.parametrize("n", [2, 3, 4, 5, 9])
    def test_cover_mode_covers_every_candidate(self, n: int) -> None:
        pairs = make_pairs(_group(n), "cover")
        assert len(pairs) == math.ceil(n / 2)
        covered = {s for p in pairs for s in (p.sentence_a, p.sentence_b)}
        assert covered == {f"Zdanie numer {i}." for i in range(n)}
        assert all(p.sentence_a != p.sentence_b for p in pairs)
        assert all(p.group_size == n for p in pairs)

    def test_all_mode_is_every_pair_capped(self) -> None:
        assert len(make_pairs(_group(5), "all")) == 10
        assert len(make_pairs(_group(10), "all", max_pairs=7)) == 7

    def test_seeded_from_the_pivot(self) -> None:
        assert make_pairs(_group(9), "cover") == make_pairs(_group(9), "cover")

    def test_transform(self) -> None:
        with TestPipeline(runner="FnApiRunner") as p:
            pairs = p | beam.Create([_group(3), _group(2, "No.")]) | MakePairs("cover")
            pairs = pairs.pairs
            assert_that(pairs | beam.combiners.Count.Globally(), equal_to([3]))

    @pytest.mark.parametrize(
        ("mode", "books"),
        [
            ("cover", {"in": 10, "kept": 10, "dropped": {}}),
            # Two pairs of ten candidates leave six in no pair.
            ("all", {"in": 10, "kept": 4, "dropped": {"over_pair_cap": 6}}),
        ],
    )
    def test_books_count_candidates_and_those_the_cap_leaves_unpaired(
        self, mode: str, books: dict
    ) -> None:
        with TestPipeline(runner="FnApiRunner") as p:
            groups = p | beam.Create([_group(10)])
            made = groups | MakePairs(mode, max_pairs=2)
            rows = made.books | CountStage(
                MAKE_PAIRS, taken_in=groups, weight=lambda n: n, in_weight=group_weight
            )
            assert_that(rows, counts_equal("MakePairs", books))

    def test_unknown_mode_is_refused(self) -> None:
        with pytest.raises(ValueError, match="cover, all"):
            MakePairs("some")


class TestPostFilter:
    def test_drops_trivial_near_equal_and_cross_group_duplicates(self) -> None:
        elements = [
            paraphrase("Nie rozumiem.", "nie rozumiem"),
            paraphrase(
                "To jest bardzo długie zdanie o kotach.", "To jest bardzo długie zdanie o kotach!"
            ),
            paraphrase(
                "To jest bardzo długie zdanie o kotach.", "To jest bardzo dlugie zdanie o kotach."
            ),
            paraphrase("Idę spać.", "Kładę się spać.", pivot="I'm going to bed."),
            paraphrase("Kładę się spać.", "Idę spać.", pivot="I go to bed."),
            paraphrase("Dziękuję.", "Dzięki."),
        ]
        # Of the two orders of one pair, the row of the smallest pivot stays.
        check_stage(
            PostFilter(near_equal=0.95),
            elements,
            equal_to([elements[4], elements[5]]),
            {
                "in": 6,
                "kept": 2,
                "dropped": {
                    "duplicate_across_groups": 1,
                    "equal_after_normalization": 2,
                    "near_equal": 1,
                },
            },
        )

    def test_near_equal_bound_is_checked(self) -> None:
        with pytest.raises(ValueError, match="near_equal"):
            PostFilter(near_equal=1.5)

    def test_word_ending_variants_follow_drop_inflections_whatever_their_length(self) -> None:
        # Edit similarity 0.97: near-equal by that measure, yet a gender
        # variant like the short "Jesteś zła?" / "Jesteś zły?", which stays.
        long = (
            "Nikdy jsem neřekl, že jsi nudná a že tě nemám rád.",
            "Nikdy jsem neřekl, že jsi nudný a že tě nemám rád.",
        )
        short = ("Jesteś zła?", "Jesteś zły?")
        for a_, b_ in (long, short):
            assert postfilter_reason(paraphrase(a_, b_), 0.95) == ""
            assert postfilter_reason(paraphrase(a_, b_), 0.95, True) == "inflection_variant"
        # A changed letter inside a word is no ending: still near-equal.
        typo = paraphrase("To jest bardzo długie zdanie.", "To jest bardzo dlugie zdanie.")
        assert postfilter_reason(typo, 0.95, True) == "near_equal"


class TestCoverAvoidsTrivialPairs:
    def _group(self, texts: list[str]) -> Group:
        candidates = tuple(scored("Are you angry?", t, line=i) for i, t in enumerate(texts))
        return Group("are you angry?", "Are you angry?", "en", "pl", candidates)

    def test_trivial_variants_are_paired_with_others(self) -> None:
        texts = ["Jesteś zły?", "jesteś zły", "Czy jesteś zły?", "Czy jesteś zły"]
        for seed in range(20):
            group = self._group(texts)
            group = Group(f"k{seed}", group.pivot, "en", "pl", group.candidates)
            pairs = make_pairs(group, "cover")
            kept = [p for p in pairs if not postfilter_reason(p, 0.95)]
            covered = {s for p in kept for s in (p.sentence_a, p.sentence_b)}
            assert covered == set(texts), seed
            assert len(pairs) == 2

    def test_a_group_of_only_variants_still_pairs_and_postfilter_drops_it(self) -> None:
        pairs = make_pairs(self._group(["Tak.", "tak"]), "cover")
        assert len(pairs) == 1 and postfilter_reason(pairs[0], 0.95) == "equal_after_normalization"

    def test_with_drop_inflections_word_ending_variants_are_paired_with_others(self) -> None:
        texts = ["Jesteś zły?", "Jesteś zła?", "Czy jesteś zły?", "Czy jesteś zła?"]
        for seed in range(20):
            group = self._group(texts)
            group = Group(f"k{seed}", group.pivot, "en", "pl", group.candidates)
            pairs = make_pairs(group, "cover", drop_inflections=True)
            kept = [p for p in pairs if not postfilter_reason(p, 0.95, True)]
            covered = {s for p in kept for s in (p.sentence_a, p.sentence_b)}
            assert covered == set(texts), seed

    def test_odd_one_out_avoids_its_variant(self) -> None:
        texts = ["Jesteś zły?", "Czy jesteś zły?", "jesteś zły"]
        for seed in range(20):
            group = self._group(texts)
            group = Group(f"k{seed}", group.pivot, "en", "pl", group.candidates)
            kept = [p for p in make_pairs(group, "cover") if not postfilter_reason(p, 0.95)]
            assert {s for p in kept for s in (p.sentence_a, p.sentence_b)} == set(texts), seed
