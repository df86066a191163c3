"""A corpus's own scores as read filters: CzEng's three scores, a TSV column, a TMX property."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.pipelines.formats import ReaderOptions
from paramine.pipelines.formats.scores import czeng_score_reason, score_reason
from paramine.pipelines.run.mine import run
from paramine.pipelines.settings.mining import MiningSettings
from paramine.schemas.errors import UsageError

from tests.pipelines.formats.helpers import read_inputs, reasons

# CzEng 2.0 rows (ID, adequacy, cs language score, en language score, cs, en),
# shaped as the corpus writes them: a clean pair, a misaligned one, one whose
# "Czech" is Slovak, one whose English side is German, a broken score.
CZENG = (
    "news-d1-s1\t0.83\t1.0\t1.0\tDobrý den.\tGood day.\n"
    "paracrawl-d2-s1\t0.004\t0.97\t1.0\tKoupit levně online.\tTerms and conditions.\n"
    "wikimatrix-d3-s1\t0.41\t0.12\t1.0\tĎakujem za pomoc.\tThanks for the help.\n"
    "\n"
    "paracrawl-d4-s2\t0.35\t1.0\t0.08\tKde je nádraží?\tWo ist der Bahnhof?\n"
    "news-d5-s1\tn/a\t1.0\t1.0\tAno.\tYes.\n"
)


def test_score_reason() -> None:
    assert score_reason("0.5", 0.3, "score") == ""
    assert score_reason("0.3", 0.3, "score") == ""  # at the threshold: kept
    assert score_reason("0.29", 0.3, "adequacy") == "low_adequacy"
    assert score_reason("-1.5", -2.0, "score") == ""  # any scale, not only [0, 1]
    assert score_reason("nan", 0.3, "score") == "bad_score"
    assert score_reason("", 0.3, "score") == "bad_score"
    # Thresholds at 0 do not read the scores at all.
    assert czeng_score_reason("n/a", "x", "y", 0.0, 0.0) == ""
    assert czeng_score_reason("0.01", "0.1", "1", 0.02, 0.3) == "low_adequacy"
    assert czeng_score_reason("0.5", "1", "0.1", 0.02, 0.3) == "low_language_score"


class TestCzEng:
    def test_defaults_reject_low_language_scores_only(self, tmp_path: Path) -> None:
        path = tmp_path / "czeng20-train"
        path.write_text(CZENG, encoding="utf-8")
        pairs, rejected, _ = read_inputs([str(path)], "en", "cs")
        assert [p.candidate for p in pairs] == ["Dobrý den.", "Koupit levně online.", "Ano."]
        assert [(r.reason, r.line) for r in rejected] == [
            ("low_language_score", 3),
            ("low_language_score", 5),
        ]

    def test_adequacy_threshold(self, tmp_path: Path) -> None:
        path = tmp_path / "czeng20-train"
        path.write_text(CZENG, encoding="utf-8")
        pairs, rejected, _ = read_inputs([str(path)], "en", "cs", min_adequacy=0.02)
        assert [p.candidate for p in pairs] == ["Dobrý den."]
        assert reasons(rejected) == {"low_adequacy": 1, "low_language_score": 2, "bad_score": 1}
        # Both off: every six-column row is a pair.
        pairs, rejected, _ = read_inputs([str(path)], "en", "cs", min_language_score=0.0)
        assert (len(pairs), rejected) == (5, [])


class TestTsvScoreColumn:
    def test_third_column(self, tmp_path: Path) -> None:
        path = tmp_path / "bicleaned.tsv"
        path.write_text(
            "Hello.\tCześć.\t0.91\nBuy now!!!\tKup teraz.\t0.12\nBye.\tPa.\n", encoding="utf-8"
        )
        pairs, rejected, _ = read_inputs(
            [str(path)], tsv_columns=(1, 2), score_column=3, min_score=0.5
        )
        assert [(p.pivot, p.candidate) for p in pairs] == [("Hello.", "Cześć.")]
        assert [(r.reason, r.line) for r in rejected] == [("low_score", 2), ("column_count", 3)]

    @pytest.mark.parametrize(
        ("options", "message"),
        [
            ({"score_column": 3}, "--min-score"),
            ({"min_score": 0.5}, "--min-score"),
            ({"score_column": 3, "min_score": 0.5}, "--tsv-columns"),
            ({"tsv_columns": (1, 2), "score_column": 2, "min_score": 0.5}, "other than"),
        ],
    )
    def test_incomplete_settings_are_refused(self, options: dict, message: str) -> None:
        with pytest.raises(UsageError, match=message):
            ReaderOptions(**options)


TMX = """<?xml version="1.0" encoding="utf-8"?>
<tmx version="1.4"><header srclang="en"/><body>
  <tu><prop type="score">0.88</prop><tuv xml:lang="en"><seg>Good morning.</seg></tuv>
      <tuv xml:lang="pl"><seg>Dzień dobry.</seg></tuv></tu>
  <tu><prop type="score">0.05</prop><tuv xml:lang="en"><seg>Click here.</seg></tuv>
      <tuv xml:lang="pl"><seg>Dzień dobry.</seg></tuv></tu>
  <tu><tuv xml:lang="en"><seg>Yes.</seg></tuv><tuv xml:lang="pl"><seg>Tak.</seg></tuv></tu>
</body></tmx>
"""


def test_tmx_score_property(tmp_path: Path) -> None:
    path = tmp_path / "memory.tmx"
    path.write_text(TMX, encoding="utf-8")
    pairs, rejected, _ = read_inputs([str(path)], score_property="score", min_score=0.5)
    assert [p.pivot for p in pairs] == ["Good morning."]
    assert [(r.reason, r.line) for r in rejected] == [("low_score", 2), ("missing_score", 3)]
    # Without the setting, the property is not looked at.
    pairs, rejected, _ = read_inputs([str(path)])
    assert (len(pairs), rejected) == (3, [])


def test_flags_are_checked_before_a_run(tmp_path: Path) -> None:
    base = {"src_lang": "en", "tgt_lang": "pl"}
    assert MiningSettings(**base).min_language_score == 0.3
    with pytest.raises(UsageError, match="--tsv-columns"):
        MiningSettings(**base, score_column="3", min_score="0.5")
    with pytest.raises(UsageError, match="min-adequacy"):
        MiningSettings(**base, min_adequacy="1.5")


@pytest.mark.pipeline
def test_a_run_counts_score_rejects(tmp_path: Path, tiny_model_dir: Path) -> None:
    path = tmp_path / "czeng20-train"
    path.write_text(CZENG, encoding="utf-8")
    output = tmp_path / "out"
    manifest = run(
        [
            str(path),
            "--src-lang",
            "en",
            "--tgt-lang",
            "cs",
            "--output",
            str(output),
            "--model",
            str(tiny_model_dir),
            "--threshold",
            "-1",
            "--min-adequacy",
            "0.02",
            "--language-check",
            "off",
        ]
    )
    assert manifest.accounting_errors() == []
    assert manifest.counts["ReadBitext"]["dropped"] == {
        "bad_score": 1,
        "low_adequacy": 1,
        "low_language_score": 2,
    }
    assert manifest.counts["ReadBitext"]["kept"] == 1
    assert manifest.options["min_adequacy"] == 0.02
