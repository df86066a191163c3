"""The prefilter's junk rules and language check in a real mine: reasons counted, books balanced."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from paramine.pipelines.core.text import normalize
from paramine.pipelines.run.mine import run
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.prefilter import PrefilterOptions, text_rule_reason

from tests.pipelines.run.test_mine import write_moses

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
    return {"dropped": prefilter["dropped"], "filters": manifest.extra["filters"]}


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


def _aligned(
    folder: str, pivot_ext: str, candidate_ext: str, n: int = 400
) -> list[tuple[str, str]]:
    from tests.paths import TATOEBA

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
    reasons = Counter(
        text_rule_reason(pivot, candidate, pivot_lang, lang, options) for pivot, candidate in pairs
    )
    dropped = sum(n for reason, n in reasons.items() if reason)
    # Tatoeba's Khmer file holds Latin transliterations ("Baəy !"): wrong_script.
    assert dropped <= 0.03 * len(pairs), reasons


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
    assert manifest.extra["unchecked_languages"] == {"language": ["bo"], "sentence_count": ["bo"]}
    # Said before the run starts, in one line.
    err = capsys.readouterr().err
    warning = [line for line in err.splitlines() if "cannot be judged" in line]
    assert len(warning) == 1 and "language check: bo" in warning[0], err
