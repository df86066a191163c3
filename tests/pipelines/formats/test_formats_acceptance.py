"""Issue 4's acceptance: the real OPUS and Tatoeba files in ../shared/corpora.

The small XCES files mine end to end through ``paramine mine``; the 10,099
pair files are checked at the reader (Beam's ReadBitext, with the same count
rows the manifest is made of), and the TMX also end to end.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.core.accounting import CountStage, GatherCounts
from paramine.pipelines.formats import ReaderOptions, resolve_inputs
from paramine.pipelines.run.mine import run
from paramine.pipelines.stages.read.read_bitext import READ_BITEXT, ReadBitext

XCES = "opus_rf_xces/t/xml"


def mine(tmp_path: Path, model: Path, *args: str) -> object:
    output = tmp_path / "out"
    return run([*args, "--model", str(model), "--output", str(output), "--threshold", "0.0"])


@pytest.mark.parametrize(
    ("path", "src", "tgt", "options", "expected"),
    [
        ("derived_formats/tatoeba-test.en-pl.tmx", "en", "pl", {}, {"kept": 10099}),
        ("derived_formats/Tatoeba-test.en-pl.txt.zip", "en", "pl", {}, {"kept": 10099}),
        ("derived_formats/tatoeba-test.en-pl.tsv", "en", "pl", {}, {"kept": 10099}),
        (
            "tatoeba_test_v2021-08-07/eng-pol/tatoeba-test-v2021-08-07.eng",
            "en",
            "pl",
            {"split_bytes": 64 * 1024},  # several spans, read in lockstep
            {"kept": 10099},
        ),
        (
            "tatoeba_test_v2021-08-07/ces-eng/tatoeba-test-v2021-08-07.ces",
            "cs",
            "en",
            {},
            {"kept": 13824},
        ),
        (
            f"{XCES}/en-fr.xml.gz",
            "en",
            "fr",
            {},
            {"kept": 174, "unaligned_link_1_0": 5, "many_to_one_link": 1},
        ),
        (
            f"{XCES}/en-fr.xml.gz",
            "en",
            "fr",
            {"xces_links": "join"},
            {"kept": 175, "unaligned_link_1_0": 5},
        ),
        (
            f"{XCES}/en-fr",
            "en",
            "fr",
            {},
            {"kept": 174, "unaligned_link_1_0": 5, "many_to_one_link": 1},
        ),
        (
            f"{XCES}/sv-de-en.xml",
            "sv",
            "en",
            {},
            {"kept": 7, "many_to_one_link": 2, "language_mismatch": 9},
        ),
        (
            f"{XCES}/sv-de-en.xml",
            "de",
            "sv",
            {"xces_links": "join"},
            {"kept": 9, "language_mismatch": 9},
        ),
    ],
)
@pytest.mark.pipeline
def test_read_counts(
    shared_corpora: Path,
    path: str,
    src: str,
    tgt: str,
    options: dict,
    expected: dict[str, int],
) -> None:
    shards = resolve_inputs([str(shared_corpora / path)], src, tgt)
    rows = [("ReadBitext", key, n) for key, n in expected.items()]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        read = pipeline | ReadBitext(shards, ReaderOptions(**options))
        # Summed: the books emit a row per bundle.
        counts = (read | CountStage(READ_BITEXT),) | GatherCounts([READ_BITEXT], [])
        assert_that(counts, equal_to(rows))


@pytest.mark.pipeline
class TestMine:
    def test_xces_en_fr(self, shared_corpora: Path, tiny_model_dir: Path, tmp_path: Path) -> None:
        manifest = mine(
            tmp_path,
            tiny_model_dir,
            str(shared_corpora / XCES / "en-fr.xml.gz"),
            "--src-lang",
            "en",
            "--tgt-lang",
            "fr",
        )
        assert manifest.counts["ReadBitext"] == {
            "in": 180,
            "kept": 174,
            "dropped": {"many_to_one_link": 1, "unaligned_link_1_0": 5},
        }
        assert manifest.accounting_errors() == []
        rejects = pq.read_table(tmp_path / "out" / "rejects").to_pylist()
        assert sorted(r["line"] for r in rejects if r["reason"] == "many_to_one_link") == [7]
        assert all(r["shard"].endswith("en-fr.xml.gz") for r in rejects)

    def test_xces_two_link_groups_joined(
        self, shared_corpora: Path, tiny_model_dir: Path, tmp_path: Path
    ) -> None:
        manifest = mine(
            tmp_path,
            tiny_model_dir,
            str(shared_corpora / XCES / "sv-de-en.xml"),
            "--src-lang",
            "en",
            "--tgt-lang",
            "sv",
            "--xces-links",
            "join",
        )
        assert manifest.counts["ReadBitext"] == {
            "in": 18,
            "kept": 9,
            "dropped": {"language_mismatch": 9},
        }
        assert manifest.accounting_errors() == []

    @pytest.mark.slow
    def test_tmx(self, shared_corpora: Path, tiny_model_dir: Path, tmp_path: Path) -> None:
        manifest = mine(
            tmp_path, tiny_model_dir, str(shared_corpora / "derived_formats/tatoeba-test.en-pl.tmx")
        )
        assert manifest.counts["ReadBitext"] == {"in": 10099, "kept": 10099, "dropped": {}}
        assert manifest.accounting_errors() == []
        assert manifest.rows.pairs > 0
