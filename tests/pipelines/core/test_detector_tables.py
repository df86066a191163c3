"""core/detector_tables.py: generated from the installed py3langid, and still what it says."""

from __future__ import annotations

import detector_tables
import pytest
from paramine.pipelines.core.detector_tables import DETECTOR_SCRIPTS, NEIGHBOURS


@pytest.fixture(scope="module")
def identifier():  # type: ignore[no-untyped-def]
    return detector_tables.identifier()


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
