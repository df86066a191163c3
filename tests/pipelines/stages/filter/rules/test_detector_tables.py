"""rules/detector_tables.py: generated from the installed py3langid, and still what it says."""

from __future__ import annotations

import pytest
from paramine.pipelines.stages.filter.rules.detector_tables import (
    DETECTOR_SCRIPTS,
    MACROLANGUAGES,
    NEIGHBOURS,
)

from benchmarks.lib import detector_tables


@pytest.fixture(scope="module")
def identifier():  # type: ignore[no-untyped-def]
    return detector_tables.identifier()


@pytest.mark.slow
def test_the_scripts_are_the_models_own(identifier) -> None:  # type: ignore[no-untyped-def]
    scripts = detector_tables.detector_scripts(
        identifier, detector_tables.feature_texts(identifier)
    )
    folded, _ = detector_tables.folded_tables(scripts, {})
    assert folded == DETECTOR_SCRIPTS
    # Tatar and Kazakh in Cyrillic only, Uzbek in both, Serbo-Croatian (hr, sr, bs) in both.
    assert DETECTOR_SCRIPTS["tt"] == ("Cyrl",) and DETECTOR_SCRIPTS["kk"] == ("Cyrl",)
    assert DETECTOR_SCRIPTS["hr"] == ("Cyrl", "Latn") and DETECTOR_SCRIPTS["pl"] == ("Latn",)


@pytest.mark.parametrize("label", ["pl", "cs", "sl", "tt", "es", "no", "hi", "zh"])
def test_the_neighbours_are_the_models_nearest(identifier, label: str) -> None:  # type: ignore[no-untyped-def]
    near = detector_tables.neighbours(identifier, [label])
    assert near[label] == NEIGHBOURS[label]


def test_neighbours_are_what_a_linguist_would_list() -> None:
    assert NEIGHBOURS["pl"][:2] == ("sk", "cs")
    assert NEIGHBOURS["tt"][:3] == ("ba", "ky", "kk")
    assert {"hr", "sk"} <= set(NEIGHBOURS["sl"])
    assert NEIGHBOURS["no"][:2] == ("da", "sv")
    # Folded labels stand for their folds: no "sr", "bs", "nb" or "id" anywhere.
    assert not {"sr", "bs", "nb", "nn", "id"} & {n for near in NEIGHBOURS.values() for n in near}


def test_macrolanguages_are_the_registrys(identifier) -> None:  # type: ignore[no-untyped-def]
    assert detector_tables.macrolanguages(identifier) == MACROLANGUAGES
    assert MACROLANGUAGES["zh"] == ("wuu", "yue") and MACROLANGUAGES["ar"] == ("ary", "arz")


def test_a_line_declared_a_macrolanguage_is_in_its_members() -> None:
    from paramine.pipelines.stages.filter.rules.language_id import PASSES, LanguageCheck

    cantonese = "中國係亞洲最大嘅國家。"
    check = LanguageCheck(["zh", "yue"])
    [as_chinese] = check.judge_many([(cantonese, "zh")])
    assert as_chinese == PASSES  # Cantonese is Chinese
    mandarin = "中国是亚洲最大的国家。"
    [evidence] = check.judge_many([(mandarin, "yue")])  # Mandarin is not Cantonese
    assert evidence is not None and evidence != PASSES
