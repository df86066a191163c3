"""The prefilter's junk rules and language check in a real mine: reasons counted, books balanced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apache_beam.pvalue import TaggedOutput
from apache_beam.testing.util import equal_to
from apache_beam.utils.windowed_value import WindowedValue
from paramine.pipelines.core.accounting import DROPPED
from paramine.pipelines.formats import Shard
from paramine.pipelines.run.mine import run
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.filter import prefilter
from paramine.pipelines.stages.filter.prefilter import FilterFn, Prefilter
from paramine.pipelines.stages.filter.rules.pair_judge import PrefilterOptions

from tests.paths import TATOEBA
from tests.pipelines.formats.helpers import write_moses
from tests.pipelines.stages.helpers import aligned, check_stage

GOOD = [
    ("Where is the station?", "Gdzie jest dworzec?"),
    ("Where is the station?", "Gdzie jest stacja?"),
    ("I like coffee.", "Lubię kawę."),
    ("I like coffee.", "Kocham kawę."),
]
#: (pivot, candidate, reason under the default profile, curated).
JUNK = [
    ("Subtitles by www.addic7ed.com", "Napisy: www.addic7ed.com", "url_or_email"),
    ("<i>Where are you going?</i>", "<i>Dokąd idziesz?</i>", "markup"),
    # A subtitle's timing line: words to the tokenizer, no letters.
    ("00:14:05,120 --> 00:14:07,500", "00:14:05 - 00:14:07", "few_letters"),
    ("How are you?", "Как дела у тебя сегодня?", "wrong_script"),
    ("I don't know what to do now.", "Nevím, co mám teď dělat.", "wrong_language_candidate"),
    (
        "I don't know what to say.",
        "I really do not know what I should say.",
        "wrong_language_candidate",
    ),
    ("Nie wiem, co teraz zrobić.", "Nie wiem, co mam teraz robić.", "wrong_language_pivot"),
]
#: Dropped by the subtitles profile only.
MISMATCHED = [("I have 25 cats.", "Mam 26 kotów.", "numbers_differ")]


def mine_with(tmp_path: Path, model: Path, name: str, *flags: str) -> dict:
    rows = GOOD + [(p, c) for p, c, _ in JUNK + MISMATCHED]
    shard = write_moses(tmp_path / "in", [p for p, _ in rows], [c for _, c in rows])
    output = tmp_path / name
    args = [str(shard), "--src-lang", "en", "--tgt-lang", "pl", "--model", str(model)]
    manifest = run([*args, "--output", str(output), "--threshold", "0.0", *flags])
    prefilter = manifest.counts["Prefilter"]
    # The books balance with the new reasons (run() also checks it).
    assert prefilter["in"] == prefilter["kept"] + sum(prefilter["dropped"].values())
    return {"dropped": prefilter["dropped"], "filters": manifest.extra.filters}


@pytest.mark.slow
def test_default_profile_drops_junk_and_wrong_language_by_reason(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    curated = mine_with(tmp_path, tiny_model_dir, "curated")
    expected: dict[str, int] = {}
    for _, _, reason in JUNK:
        expected[reason] = expected.get(reason, 0) + 1
    assert {k: v for k, v in curated["dropped"].items() if k in expected} == expected
    assert "numbers_differ" not in curated["dropped"]
    assert curated["filters"] == {
        "profile": "curated",
        "junk_rules": ["urls", "markup", "letters", "script"],
        "language_check": 0.3,
        "language_id": "py3langid",
        "min_letter_share": 0.5,
        "min_script_share": 0.8,
    }
    subtitles = mine_with(tmp_path, tiny_model_dir, "subtitles", "--profile", "subtitles")
    assert subtitles["dropped"]["numbers_differ"] == 1
    assert subtitles["filters"]["junk_rules"] == [
        "urls",
        "markup",
        "letters",
        "script",
        "numbers",
        "question",
        "repeats",
    ]
    # Every setting can be overridden; nothing of the above is dropped then.
    off = mine_with(
        tmp_path, tiny_model_dir, "off", "--junk-rules", "none", "--language-check", "off"
    )
    assert not set(off["dropped"]) & {*expected, "numbers_differ"}
    assert off["filters"]["junk_rules"] == [] and off["filters"]["language_check"] is None


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"junk_rules": "urls,emoji"}, r"--junk-rules emoji: rules are urls, markup"),
        ({"language_check": "1.5"}, r"--language-check 1.5 is not a ratio in \(0, 1\]"),
        ({"profile": "books"}, r"--profile 'books'; allowed: curated, subtitles, web"),
        ({"min_letter_share": 0}, r"--min-letter-share 0.0 is not a share"),
    ],
)
def test_bad_filter_settings_name_the_flag(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MiningSettings(**settings)


def test_profiles_set_defaults_and_flags_override_them() -> None:
    web = MiningSettings(profile="web", min_script_share=0.95).filters
    assert web["min_letter_share"] == 0.6 and web["min_script_share"] == 0.95
    assert MiningSettings(junk_rules="numbers,urls").filters["junk_rules"] == ["numbers", "urls"]
    assert MiningSettings(language_check="0.3").filters["language_check"] == 0.3


# ---------------------------------------------------------------- every script


@pytest.mark.pipeline
def test_a_line_no_check_can_judge_is_kept_and_counted(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Tibetan: py3langid does not know it; it has a script (Tibt), and no punkt model.
    bitext = [
        ("Hello.", "བཀྲ་ཤིས་བདེ་ལེགས།"),
        ("How are you?", "ཁྱེད་རང་སྐུ་གཟུགས་བདེ་པོ་ཡིན་པས།"),
        ("Thank you.", "ཐུགས་རྗེ་ཆེ།"),
        ("Thank you.", "ཐུགས་རྗེ་ཆེ་ལགས།"),
    ]
    source = tmp_path / "in.tsv"
    source.write_text("".join(f"{a}\t{b}\n" for a, b in bitext), encoding="utf-8")
    manifest = run(
        [
            *(str(source), "--src-lang", "en", "--tgt-lang", "bo"),
            *("--model", str(tiny_model_dir), "--threshold", "0.0"),
            *("--sentence-count-filter", "--output", str(tmp_path / "out")),
        ]
    )
    assert manifest is not None
    kept = manifest.counts["Prefilter"]["kept"]
    assert kept == 4
    # Every kept Tibetan line counted once per check that could not judge it:
    # the language check (py3langid lacks bo) and punkt (no Tibetan model).
    assert manifest.counts["unchecked"] == {
        "language_unchecked.bo": 4,
        "sentence_count_unchecked.bo": 4,
    }
    assert manifest.extra.unchecked_languages == {"language": ["bo"], "sentence_count": ["bo"]}
    # Said before the run starts, in one line.
    err = capsys.readouterr().err
    warning = [line for line in err.splitlines() if "cannot judge" in line]
    assert len(warning) == 1 and "the language check cannot judge bo" in warning[0], err


# ---------------------------------------------------------------- small languages
# The per-line checks follow the run's own lines (stages/filter/rules/line_checks.py): a
# script that carries a large share of a side is that side's, a close language
# drops a line on weak evidence only where it is present.

SMALL = TATOEBA / "small"


def mine_small(tmp_path: Path, model: Path, folder: str, lang: str, *flags: str) -> object:
    source = SMALL / folder
    if not source.is_dir():
        pytest.skip(f"{source} is not here (../shared/corpora)")
    return run(
        [
            *(str(source / "tatoeba-test-v2021-08-07.eng"), "--src-lang", "en"),
            *("--tgt-lang", lang, "--model", str(model), "--threshold", "0.0"),
            *("--output", str(tmp_path / folder), "--quiet", *flags),
        ]
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("folder", "lang", "learned"),
    [("eng-lad", "lad", {"Latn": 0.875}), ("eng-ota", "ota", {"Latn": 0.4608})],
)
def test_a_side_in_scripts_no_table_expects_keeps_its_lines(
    tmp_path: Path, tiny_model_dir: Path, folder: str, lang: str, learned: dict
) -> None:
    # CLDR writes Ladino in Hebrew and Ottoman Turkish in Arabic; Tatoeba has
    # 672 of 768 Ladino lines in Latin, and 317 of 688 Ottoman lines.
    manifest = mine_small(tmp_path, tiny_model_dir, folder, lang)
    assert manifest is not None
    prefilter = manifest.counts["Prefilter"]
    assert "wrong_script" not in prefilter["dropped"]
    assert prefilter["kept"] >= 0.97 * prefilter["in"]
    side = manifest.extra.line_checks[f"candidate:{lang}"]
    assert side["scripts"]["learned"] == learned
    assert side["scripts"]["source"] == "tables+run"
    # The detector knows neither: every kept line is counted as unchecked.
    assert manifest.counts["unchecked"][f"language_unchecked.{lang}"] == prefilter["kept"]


HINDI = [
    ("I am going home.", "मैं घर जा रहा हूँ।"),
    ("This book is very good.", "यह किताब बहुत अच्छी है।"),
    ("The weather is nice today.", "आज मौसम अच्छा है।"),
    ("I like tea.", "मुझे चाय पसंद है।"),
    ("He goes to school.", "वह स्कूल जाता है।"),
    ("We will meet tomorrow.", "हम कल मिलेंगे।"),
    ("What is your name?", "तुम्हारा नाम क्या है?"),
    ("I have a cat.", "मेरे पास एक बिल्ली है।"),
    ("The water is cold.", "पानी ठंडा है।"),
    ("Close the door.", "दरवाज़ा बंद करो।"),
    ("I ate the food.", "मैंने खाना खा लिया।"),
    ("He runs very fast.", "वह बहुत तेज़ दौड़ता है।"),
]


@pytest.mark.slow
def test_a_line_in_a_script_that_is_neither_known_nor_learned_still_drops(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    tamil = ("I am going home now.", "நான் இப்போது வீட்டுக்குப் போகிறேன்.")
    source = tmp_path / "hi.tsv"
    source.write_text("".join(f"{a}\t{b}\n" for a, b in [*HINDI, tamil]), encoding="utf-8")
    common = ["--model", str(tiny_model_dir), "--threshold", "0.0", "--quiet"]
    hindi = run(
        [
            str(source),
            "--src-lang",
            "en",
            "--tgt-lang",
            "hi",
            "--output",
            str(tmp_path / "hi"),
            *common,
        ]
    )
    assert hindi is not None
    assert hindi.counts["Prefilter"]["dropped"] == {"wrong_script": 1}
    assert hindi.extra.line_checks["candidate:hi"]["scripts"]["learned"] == {}
    # And a Cyrillic line on a Polish side, among GOOD's Polish lines.
    cyrillic = ("How are you today?", "Как у тебя дела сегодня?")
    rows = GOOD * 3 + [cyrillic]
    shard = write_moses(tmp_path / "pl", [p for p, _ in rows], [c for _, c in rows])
    polish = run(
        [
            str(shard),
            "--src-lang",
            "en",
            "--tgt-lang",
            "pl",
            "--output",
            str(tmp_path / "out"),
            *common,
        ]
    )
    assert polish is not None
    assert polish.counts["Prefilter"]["dropped"]["wrong_script"] == 1


@pytest.mark.slow
def test_a_code_the_registry_lacks_runs_and_its_lines_are_counted_unchecked(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toki = [
        ("I eat fruit.", "mi moku e kili."),
        ("I eat fruit.", "mi moku e kili lili."),
        ("You are good.", "sina pona."),
        ("You are good.", "sina jan pona."),
        ("The water is cold.", "telo li lete."),
        ("I love you.", "mi olin e sina."),
    ]
    source = tmp_path / "tok.tsv"
    source.write_text("".join(f"{a}\t{b}\n" for a, b in toki), encoding="utf-8")
    manifest = run(
        [
            *(str(source), "--src-lang", "en", "--tgt-lang", "tok"),
            *("--model", str(tiny_model_dir), "--threshold", "0.0"),
            *("--output", str(tmp_path / "out"), "--quiet"),
        ]
    )
    assert manifest is not None
    kept = manifest.counts["Prefilter"]["kept"]
    assert kept == len(toki)
    assert manifest.counts["unchecked"] == {"language_unchecked.tok": kept}
    assert manifest.extra.unchecked_languages == {"language": ["tok"]}
    err = capsys.readouterr().err
    assert "tok is not in the installed language registry" in err
    assert "the language check cannot judge tok" in err


@pytest.mark.slow
def test_a_script_subtag_names_the_sides_only_script(tmp_path: Path, tiny_model_dir: Path) -> None:
    tatar = [
        ("I am a student.", "Min student."),
        ("I am a student.", "Мин студент."),
        ("I am tired.", "Min arıdım."),
        ("I am tired.", "Мин арыдым."),
    ]
    source = tmp_path / "tt.tsv"
    source.write_text("".join(f"{a}\t{b}\n" for a, b in tatar), encoding="utf-8")
    common = ["--model", str(tiny_model_dir), "--threshold", "0.0", "--quiet"]
    latin = run(
        [
            str(source),
            "--src-lang",
            "en",
            "--tgt-lang",
            "tt-Latn",
            "--output",
            str(tmp_path / "latn"),
            *common,
        ]
    )
    assert latin is not None
    assert latin.counts["Prefilter"]["dropped"] == {"wrong_script": 2}
    scripts = latin.extra.line_checks["candidate:tt-latn"]["scripts"]
    assert (scripts["judged_against"], scripts["source"]) == (["Latn"], "declared")
    both = run(
        [
            str(source),
            "--src-lang",
            "en",
            "--tgt-lang",
            "tt",
            "--output",
            str(tmp_path / "tt"),
            *common,
        ]
    )
    assert both is not None and both.counts["Prefilter"]["dropped"] == {}
    # Latin Tatar is not Tatar to py3langid (trained on Cyrillic): not its to judge.
    assert both.counts["unchecked"] == {"language_unchecked.tt-Latn": 2}


@pytest.mark.slow
def test_a_check_that_drops_a_tenth_of_a_side_is_flagged_everywhere(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    english = [("I don't know what to say.", "I really do not know what I should say.")]
    rows = GOOD * 2 + english * 4
    shard = write_moses(tmp_path / "in", [p for p, _ in rows], [c for _, c in rows])
    output = tmp_path / "out"
    manifest = run(
        [
            *(str(shard), "--src-lang", "en", "--tgt-lang", "pl"),
            *("--model", str(tiny_model_dir), "--threshold", "0.0", "--output", str(output)),
        ]
    )
    assert manifest is not None
    side = manifest.extra.line_checks["candidate:pl"]
    [flag] = side["flagged"]
    assert (flag["reason"], flag["lines"], flag["share"]) == ("wrong_language_candidate", 4, 0.3333)
    assert flag["samples"][0]["candidate"] == english[0][1]
    # A Moses shard is named by its pivot file; the sample names the file
    # and line where its candidate line is, so a user finds that line there.
    sample = flag["samples"][0]
    assert sample["shard"].endswith("corpus.en-pl.en")
    assert sample["file"].endswith("corpus.en-pl.pl")
    candidate_lines = (tmp_path / "in" / "corpus.en-pl.pl").read_text().splitlines()
    assert candidate_lines[sample["line"] - 1] == english[0][1]
    err = capsys.readouterr().err
    assert "check flagged: wrong_language_candidate dropped 33.3% of the candidate pl" in err
    assert f"e.g. {sample['file']}:{sample['line']}: " in err
    stats = json.loads((output / "stats.json").read_text())
    assert stats["line_checks"]["candidate:pl"]["flagged"][0]["reason"] == (
        "wrong_language_candidate"
    )
    page = (output / "report.html").read_text()
    assert "dropped 33.3% of the candidate:pl side" in page and english[0][1] in page
    assert f"<code>{sample['file']}:{sample['line']}</code>" in page


class TestPrefilter:
    @pytest.mark.pipeline
    @pytest.mark.parametrize(
        ("listed", "batch", "held"),
        [(False, None, None), (True, None, None), (True, 1, 1)],
        ids=["unlisted", "listed", "each-pair-its-own-batch-nothing-held"],
    )
    def test_normalizes_and_dedups_keeping_the_first(
        self, listed: bool, batch: int | None, held: int | None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Repeats met in one batch are dropped by the DoFn; with one pair a
        # batch and nothing held, every repeat reaches the duplicate search:
        # the same pair kept, the same books.
        if batch:
            monkeypatch.setattr(prefilter, "BATCH_SIZE", batch)
            monkeypatch.setattr(prefilter, "FIRSTS_SIZE", held)
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


class TestFilterFn:
    def fn(self) -> FilterFn:
        shards = [Shard("tsv", url, "test", "en", "pl") for url in ("s", "t")]
        fn = FilterFn(PrefilterOptions(), Prefilter(shards=shards).origins)
        fn.setup()
        fn.start_bundle()
        return fn

    @staticmethod
    def kept(outputs: list) -> list:
        return [o for o in outputs if not isinstance(o, TaggedOutput)]

    @staticmethod
    def held(fn: FilterFn) -> list:
        """The entries ``fn`` sends on at its bundle's end."""
        rows = [row.value for row in fn.finish_bundle() if isinstance(row, WindowedValue)]
        return [row for row in rows if isinstance(row[0], tuple)]

    @staticmethod
    def duplicates(outputs: list) -> int:
        drops = [o.value for o in outputs if isinstance(o, TaggedOutput) and o.tag == DROPPED]
        return sum(n for reason, n in drops if reason == "duplicate_pair")

    def test_repeats_of_a_bundle_are_dropped_and_the_smallest_origin_held_to_its_end(
        self,
    ) -> None:
        fn = self.fn()
        first = list(
            fn.process_batch([aligned("Yes.", "Tak.", line=3), aligned("Yes. ", "Tak.", 1)])
        )
        second = list(fn.process_batch([aligned("Yes.", "Tak.", line=2, shard="t")]))
        assert self.kept(first) == self.kept(second) == []
        assert self.duplicates(first) == 1 and self.duplicates(second) == 1
        entries = self.held(fn)
        assert len(entries) == 1
        key, origin = entries[0]
        assert key[:2] == ("Yes.", "Tak.")
        assert fn.origins.pair(key, origin) == aligned("Yes.", "Tak.", 1)
        # Sent on once: a new bundle starts with nothing held.
        fn.start_bundle()
        assert self.held(fn) == []

    def test_a_full_table_goes_on_at_once(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(prefilter, "FIRSTS_SIZE", 2)
        fn = self.fn()
        assert self.kept(list(fn.process_batch([aligned("Yes.", "Tak.", 1)]))) == []
        out = list(fn.process_batch([aligned("No.", "Nie.", 2), aligned("No.", "Nie.", 3)]))
        assert sorted(k[:2] for k, _ in self.kept(out)) == [("No.", "Nie."), ("Yes.", "Tak.")]
        assert self.duplicates(out) == 1
        assert self.held(fn) == []
