"""benchmarks/quality/peers/prefilter.py: OpusFilter's filters, chosen to match paramine's."""

from __future__ import annotations

from benchmarks.quality.peers import prefilter


def test_opusfilter_config_follows_paramine_defaults(tmp_path):
    config = prefilter.opusfilter_config(tmp_path / "c", ("en", "pl"), ("en", "pl"), tmp_path)
    steps = [s["type"] for s in config["steps"]]
    assert steps == ["preprocess", "remove_duplicates", "filter"]
    specs = config["steps"][2]["parameters"]["filters"]
    filters = {next(iter(f)): next(iter(f.values())) for f in specs}
    assert list(filters) == [
        "LengthFilter", "LengthRatioFilter", "SimilarityFilter", "RegExpFilter", "HtmlTagFilter",
        "AlphabetRatioFilter", "CharacterScoreFilter", "LangidFilter",
    ]  # fmt: skip
    assert (filters["LengthFilter"]["min_length"], filters["LengthFilter"]["max_length"]) == (1, 80)
    assert filters["LengthRatioFilter"]["threshold"] == 2.5
    assert filters["AlphabetRatioFilter"]["threshold"] == 0.5
    assert filters["CharacterScoreFilter"]["thresholds"] == [0.8, 0.8]
    assert {"en", "pl", "cs", "sk"} <= set(filters["LangidFilter"]["langid_languages"])


def test_opusfilter_is_given_only_the_labels_its_py3langid_knows(tmp_path):
    # OpusFilter's py3langid (0.3.0) refuses a label it lacks: "Unknown language code bcl".
    config = prefilter.opusfilter_config(
        tmp_path / "c", ("en", "pl"), ("en", "pl"), tmp_path, frozenset({"en", "pl", "cs"})
    )
    (langid,) = [
        f["LangidFilter"]
        for f in config["steps"][2]["parameters"]["filters"]
        if "LangidFilter" in f
    ]
    assert langid["langid_languages"] == ["cs", "en", "pl"]
