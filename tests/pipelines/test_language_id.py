"""The declared-language check: py3langid, restricted, the ratio rule, on real lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.pipelines.core.language_id import LanguageCheck, detector_label

TATOEBA = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "tatoeba_test_v2021-08-07"


def lines(path: Path, n: int = 400) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()[:n]


@pytest.fixture(scope="module")
def check() -> LanguageCheck:
    return LanguageCheck(["en", "pl"])


def test_polish_lines_pass_and_close_or_other_languages_do_not(check: LanguageCheck) -> None:
    polish = lines(TATOEBA / "eng-pol" / "tatoeba-test-v2021-08-07.pol")
    czech = lines(TATOEBA / "ces-eng" / "tatoeba-test-v2021-08-07.ces")
    english = lines(TATOEBA / "eng-pol" / "tatoeba-test-v2021-08-07.eng")
    dropped = sum(not check.passes(line, "pl") for line in polish)
    assert dropped <= 4, dropped  # 1%: measured 8 of all 10,101 lines at ratio 0.5
    assert sum(not check.passes(line, "pl") for line in czech) >= 0.95 * len(czech)
    assert sum(not check.passes(line, "pl") for line in english) >= 0.95 * len(english)


def test_short_lines_and_lines_without_letters(check: LanguageCheck) -> None:
    assert check.passes("Mam kota.", "pl") and check.passes("Tak.", "pl")
    assert check.passes("123", "pl")  # no features: no evidence against it
    assert not check.passes("Mám kočku.", "pl")
    assert not check.passes("I have a cat.", "pl")


def test_folded_and_unsupported_languages() -> None:
    assert detector_label("sr-latn") == detector_label("hr") == detector_label("bs") == "hr"
    assert detector_label("nb") == "no" and detector_label("zh-hans") == "zh"
    check = LanguageCheck(["hr", "sr-latn", "xx"])
    croatian = "Ne znam što bih ti rekao, ali mislim da je to dobra ideja."
    assert check.passes(croatian, "sr-latn") and check.passes(croatian, "hr")
    assert check.supported("hr") and not check.supported("xx")
    assert check.passes("anything at all", "xx")  # not checked, never dropped


def test_ratio_is_checked() -> None:
    with pytest.raises(ValueError, match="ratio"):
        LanguageCheck(["pl"], ratio=0.0)


CORPORA = TATOEBA.parent
#: (file, its language, a close language it is declared in, least caught of 12),
#: the least set a little under what was measured at the default ratio 0.3
#: (11, 12, 10, 8, 11, 10, 11).
CLOSE_CASES = [
    (TATOEBA / "x-pol" / "ces-pol" / "tatoeba-test-v2021-08-07.ces", "cs", "pl", 10),
    (TATOEBA / "x-pol" / "ces-pol" / "tatoeba-test-v2021-08-07.pol", "pl", "cs", 11),
    (CORPORA / "laser_tatoeba_v1" / "tatoeba.slk-eng.slk", "sk", "cs", 9),
    (CORPORA / "laser_tatoeba_v1" / "tatoeba.ces-eng.ces", "cs", "sk", 7),
    (CORPORA / "laser_tatoeba_v1" / "tatoeba.ukr-eng.ukr", "uk", "ru", 10),
    (CORPORA / "laser_tatoeba_v1" / "tatoeba.rus-eng.rus", "ru", "uk", 9),
    (TATOEBA / "x-pol" / "bel-pol" / "tatoeba-test-v2021-08-07.bel", "be", "ru", 10),
]


@pytest.mark.parametrize(("path", "true", "declared", "least_caught"), CLOSE_CASES)
def test_a_dozen_short_sentences_per_close_language_pair(
    path: Path, true: str, declared: str, least_caught: int
) -> None:
    short = [line for line in lines(path, 2000) if 2 <= len(line.split()) <= 6][:12]
    assert len(short) == 12
    check = LanguageCheck([true, declared])
    assert sum(check.passes(line, true) for line in short) >= 10  # measured: 10-12
    assert sum(not check.passes(line, declared) for line in short) >= least_caught
