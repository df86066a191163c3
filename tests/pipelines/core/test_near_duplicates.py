"""Near-duplicate pairs: the 3-gram sets, the bucket rule, the PostFilter drop, the config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apache_beam.testing.util import equal_to
from paramine.pipelines.core.groups import PostFilterOptions
from paramine.pipelines.core.near_duplicates import (
    Shingled,
    bucket_duplicates,
    jaccard,
    near_duplicates,
    pair_shingles,
)
from paramine.pipelines.refresh.config import RefreshConfig
from paramine.pipelines.run.mine import run
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.filter.post_filter import PostFilter
from paramine.schemas.errors import UsageError

from tests.pipelines.formats.helpers import write_tsv
from tests.pipelines.stages.helpers import check_stage, paraphrase

# Real near-duplicates from the x-pol dataset of docs/training.md, and pairs
# that share words without repeating each other.
THANKS = paraphrase("Dziękuję!", "Dzięki!")
THANKS_AGAIN = paraphrase("Dzięki.", "Dziękuję.")
HUNGRY = paraphrase("Zawsze jestem głodny.", "Jestem wiecznie głodny.")
HUNGRY_SHE = paraphrase("Jestem wiecznie głodny.", "Zawsze jestem głodna.")
MONDAY = paraphrase("Dziś jest poniedziałek.", "Dzisiaj mamy poniedziałek.")
TUESDAY = paraphrase("Dziś jest wtorek.", "Dzisiaj mamy wtorek.")
TIRED = paraphrase("Jestem zmęczony.", "Padam z nóg.")


def shingled(*pairs):
    return [Shingled(p.pair_id, pair_shingles(p.sentence_a, p.sentence_b)) for p in pairs]


class TestShingles:
    def test_order_case_and_punctuation_do_not_matter(self) -> None:
        assert pair_shingles("Dziękuję!", "Dzięki!") == pair_shingles("dzięki", "DZIĘKUJĘ...")

    def test_a_gram_of_one_side_does_not_match_the_other(self) -> None:
        # The same two sentences, but each side's words moved to the other.
        x = pair_shingles("Ala ma kota.", "Ola ma psa.")
        y = pair_shingles("Ala ma psa.", "Ola ma kota.")
        assert jaccard(x, y) < 0.6

    def test_similarities_of_real_pairs(self) -> None:
        (thanks, again, hungry, she, monday, tuesday) = (
            s.shingles for s in shingled(THANKS, THANKS_AGAIN, HUNGRY, HUNGRY_SHE, MONDAY, TUESDAY)
        )
        assert jaccard(thanks, again) == 1.0
        assert 0.85 <= jaccard(hungry, she) < 1.0
        assert jaccard(monday, tuesday) < 0.7


class TestRule:
    def test_the_smallest_id_of_a_set_stays(self) -> None:
        members = shingled(THANKS, THANKS_AGAIN)
        first, second = sorted(m.pair_id for m in members)
        assert list(bucket_duplicates(members, 0.8)) == [(second, first)]

    def test_found_across_the_dataset_and_nothing_else(self) -> None:
        pairs = shingled(THANKS, HUNGRY, MONDAY, TIRED, HUNGRY_SHE, TUESDAY, THANKS_AGAIN)
        found = near_duplicates(pairs, 0.8)
        expected = {
            max(THANKS.pair_id, THANKS_AGAIN.pair_id): min(THANKS.pair_id, THANKS_AGAIN.pair_id),
            max(HUNGRY.pair_id, HUNGRY_SHE.pair_id): min(HUNGRY.pair_id, HUNGRY_SHE.pair_id),
        }
        assert found == expected
        # The input's order does not decide.
        assert near_duplicates(pairs[::-1], 0.8) == expected

    def test_similarity_decides(self) -> None:
        pairs = shingled(HUNGRY, HUNGRY_SHE)
        assert near_duplicates(pairs, 0.8)
        assert not near_duplicates(pairs, 0.95)

    def test_many_copies_keep_one(self) -> None:
        copies = [paraphrase(f"Tak{p}", f"Jasne{q}") for p in ".!?" for q in ".!…"]
        found = near_duplicates(shingled(*copies), 0.8)
        ids = sorted(p.pair_id for p in copies)
        assert set(found) == set(ids[1:])
        assert set(found.values()) == {ids[0]}


class TestPostFilterDrop:
    @pytest.mark.pipeline
    def test_dropped_and_counted(self) -> None:
        elements = [THANKS, HUNGRY, MONDAY, TIRED, HUNGRY_SHE, TUESDAY, THANKS_AGAIN]
        later = {max(THANKS, THANKS_AGAIN, key=lambda p: p.pair_id)} | {
            max(HUNGRY, HUNGRY_SHE, key=lambda p: p.pair_id)
        }
        check_stage(
            PostFilter(PostFilterOptions(near_duplicates=0.8)),
            elements,
            equal_to([p for p in elements if p not in later]),
            {"in": 7, "kept": 5, "dropped": {"near_duplicate": 2}},
        )

    @pytest.mark.pipeline
    def test_off_keeps_them(self) -> None:
        elements = [THANKS, THANKS_AGAIN]
        check_stage(
            PostFilter(),
            elements,
            equal_to(elements),
            {"in": 2, "kept": 2, "dropped": {}},
        )

    def test_bound_is_checked(self) -> None:
        with pytest.raises(UsageError, match=r"^--near-duplicates 0.0 is not a share in \(0, 1\)"):
            PostFilter(PostFilterOptions(near_duplicates=0.0))


class TestOption:
    def test_parsed_and_off_by_default(self) -> None:
        base = {"src_lang": "en", "tgt_lang": "pl"}
        assert MiningSettings(**base).near_duplicates is None
        assert MiningSettings(**base, near_duplicates="0.8").near_duplicates == 0.8
        assert MiningSettings(**base, near_duplicates="off").near_duplicates is None
        with pytest.raises(UsageError, match="near-duplicates"):
            MiningSettings(**base, near_duplicates="1.5")

    def test_refresh_refuses_to_drop(self, tmp_path) -> None:
        with pytest.raises(UsageError, match="near_duplicates"):
            RefreshConfig(
                output=str(tmp_path / "table"),
                inputs=[str(tmp_path / "a.tsv")],
                options={"near-duplicates": 0.8},
            )


@pytest.mark.pipeline
def test_a_run_counts_them_in_its_stats_and_drops_them_on_request(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    bitext = [
        # Two gender variants of one pair: 3-grams overlapping by 0.81.
        ("I'm always hungry.", "Zawsze jestem głodny."),
        ("I'm always hungry.", "Jestem wiecznie głodny."),
        ("I am always hungry.", "Zawsze jestem głodna."),
        ("I am always hungry.", "Jestem wiecznie głodna."),
        ("Are you crazy?", "Odbiło ci?"),
        ("Are you crazy?", "Zwariowałeś?"),
    ]
    tsv = write_tsv(tmp_path / "bitext.tsv", bitext)
    for drop in (False, True):
        output = tmp_path / f"out-{drop}"
        flags = ["--threshold", "-1"] + (["--near-duplicates", "0.8"] if drop else [])
        manifest = run([str(tsv), "--output", str(output), "--model", str(tiny_model_dir), *flags])
        assert manifest.accounting_errors() == []
        dropped = manifest.counts["PostFilter"]["dropped"].get("near_duplicate", 0)
        found = json.loads((output / "stats.json").read_text())["near_duplicates"]
        report = (output / "report.html").read_text()
        if drop:
            assert (dropped, manifest.rows.pairs) == (1, 2)
            assert found["pairs"] == 0 and found["dropped"] == 1
            assert "The run dropped 1 of them" in report
        else:
            assert (dropped, manifest.rows.pairs) == (0, 3)
            assert (found["pairs"], found["share"], found["similarity"]) == (1, 0.3333, 0.8)
            [example] = found["examples"]
            assert {*example["pair"], *example["repeats"]} == {
                "Zawsze jestem głodny.",
                "Jestem wiecznie głodny.",
                "Zawsze jestem głodna.",
                "Jestem wiecznie głodna.",
            }
            assert "1 written pairs (33.3%) are near-duplicates" in report
