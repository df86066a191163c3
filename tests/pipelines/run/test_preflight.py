"""The line a run prints before it starts about what its checks cannot judge (run/preflight.py)."""

from __future__ import annotations

from paramine.pipelines.run.preflight import unchecked_warning


def test_nothing_unchecked_prints_nothing() -> None:
    assert unchecked_warning({}) is None


def test_scripts_alone_say_which_check_cannot_judge_them() -> None:
    # Kabyle: the detector knows it in Latin; CLDR writes it in Arabic and Tifinagh too.
    warning = unchecked_warning({"language": ["kab-Arab", "kab-Tfng"]})
    assert warning is not None
    assert warning.startswith(
        "paramine: warning: the language check cannot judge kab lines in Arab or Tfng "
        "(the detector knows the language in another script)."
    ), warning


def test_scripts_after_a_whole_language_go_on_with_nor() -> None:
    warning = unchecked_warning({"language": ["tok", "tt-Latn", "kab-Arab", "kab-Tfng"]})
    assert warning is not None
    assert warning.startswith(
        "paramine: warning: the language check cannot judge tok (no detector knows it); "
        "nor tt lines in Latn, kab lines in Arab or Tfng "
        "(the detector knows the language in another script)."
    ), warning


def test_every_check_is_named_and_where_the_count_is_kept() -> None:
    warning = unchecked_warning({"script": ["xyz"], "sentence_count": ["kab"]})
    assert warning is not None
    assert "no table knows the scripts of xyz: they are learned from the run's own lines" in warning
    assert "the sentence count check cannot judge kab" in warning
    assert warning.endswith("counted as <check>_unchecked in the manifest and the report")
