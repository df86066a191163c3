"""MiningSettings: each stage option declared once by its stage, parsed once, checked once."""

from __future__ import annotations

import dataclasses
import sys

import pytest
from paramine.pipelines.core.groups import (
    ContestOptions,
    GroupOptions,
    MakePairsOptions,
    PostFilterOptions,
)
from paramine.pipelines.formats import ReaderOptions
from paramine.pipelines.settings.job import build_parser, parse_command_line
from paramine.pipelines.settings.mining import INPUT_FORMATS, MiningSettings
from paramine.pipelines.settings.running import RunSettings
from paramine.pipelines.stages.cut.rules.cuts import CalibrationOptions
from paramine.pipelines.stages.cut.rules.margin import MarginOptions
from paramine.pipelines.stages.filter.rules.pair_judge import PrefilterOptions
from paramine.pipelines.thresholds.coherence import CoherenceOptions
from paramine.schemas.errors import UsageError
from paramine.schemas.options import flag_name


def test_every_field_is_a_flag_with_help_and_the_same_default() -> None:
    parser = build_parser()
    actions = {a.dest: a for a in parser._actions if a.dest != "help"}
    for kind in (MiningSettings, RunSettings):
        for field in dataclasses.fields(kind):
            action = actions[field.name]
            assert flag_name(field.name, kind) in action.option_strings
            assert action.help and len(action.help) > 20, field.name
    # Settings from an empty command line are the settings of the defaults.
    line = parse_command_line([])
    assert line.mining == line.running == {} and line.rest == [] and line.config is None
    assert MiningSettings.from_mapping(line.mining) == MiningSettings()
    assert RunSettings.from_mapping(line.running) == RunSettings()


#: Each stage's options and the settings that set them: (options, its field, the setting),
#: read from the settings' fields (``schemas.options.declared`` names the declaration).
STAGE_OPTIONS = [
    (*field.metadata["declared_by"], field.name)
    for field in dataclasses.fields(MiningSettings)
    if "declared_by" in field.metadata
]


#: The settings a launcher reads itself, before any stage: the sides, the
#: format, and the evaluation sentences read into keys before the graph is built.
LAUNCHERS_OWN = {
    "src_lang",
    "tgt_lang",
    "input_format",
    "exclude_sentences",
    "exclude_suite",
    "suite_data",
}


def test_every_setting_but_the_launchers_own_is_a_stages_declaration() -> None:
    own = {f.name for f in dataclasses.fields(MiningSettings)} - {s for *_, s in STAGE_OPTIONS}
    assert own == LAUNCHERS_OWN
    owners = {options.__name__ for options, _, _ in STAGE_OPTIONS}
    assert owners == {
        "ReaderOptions",
        "EncoderOptions",
        "CutOptions",
        "MarginOptions",
        "CalibrationOptions",
        "PrefilterOptions",
        "ProfileOptions",
        "GroupOptions",
        "MakePairsOptions",
        "ContestOptions",
        "CoherenceOptions",
        "PostFilterOptions",
    }


@pytest.mark.parametrize(("options", "name", "setting"), STAGE_OPTIONS)
def test_a_stages_defaults_are_stated_once(options: type, name: str, setting: str) -> None:
    """A stage's options hold its defaults; the settings, the flags and their help read them."""
    default = next(field.default for field in dataclasses.fields(options) if field.name == name)
    assert getattr(MiningSettings(), setting) == default
    # What --help shows: argparse fills %(default)s from the flag's own default.
    action = next(a for a in build_parser()._actions if a.dest == setting)
    assert action.default == default
    if "%(default)s" in (action.help or ""):
        assert f"(default: {default})" in action.help % {"default": action.default}


@pytest.mark.parametrize(("options", "name", "setting"), STAGE_OPTIONS)
def test_a_declared_option_is_parsed_by_its_stages_parser_alone(
    options: type, name: str, setting: str
) -> None:
    stage = next(f for f in dataclasses.fields(options) if f.name == name)
    declared = next(f for f in dataclasses.fields(MiningSettings) if f.name == setting)
    for key in ("parse", "help", "choices", "switch", "metavar"):
        assert declared.metadata[key] == stage.metadata[key], key
    assert flag_name(setting, MiningSettings) == flag_name(name, options)


def test_the_settings_hand_each_stage_its_options() -> None:
    """One property per stage (one method for the readers, whose span size is a run setting)."""
    assert MiningSettings().reader_options() == ReaderOptions()  # the defaults agree
    settings = MiningSettings(
        min_words=2,
        max_words=40,
        max_group_size=7,
        margin_k=5,
        pair_mode="all",
        max_line_chars=500,
        on_length_mismatch="reject_tail",
    )
    reader = settings.reader_options(1234)
    assert (reader.max_line_chars, reader.on_length_mismatch, reader.split_bytes) == (
        500,
        "reject_tail",
        1234,
    )
    prefilter = settings.prefilter_options
    assert (prefilter.min_words, prefilter.max_words) == (2, 40)
    assert prefilter.junk_rules == tuple(settings.filters["junk_rules"])
    assert settings.group_options == GroupOptions(7)
    assert settings.margin_options == MarginOptions(5)
    assert settings.make_pairs_options.mode == "all"
    assert MiningSettings(rival_margin=None).contest_options == ContestOptions(None)
    checks = MiningSettings(max_false_accept=0.01, coherence_min_group=None).coherence_options
    assert checks == CoherenceOptions(0.01, None, 0.1, None)
    # Group support needs the vectors of a group's candidates, where the cut is calibrated.
    assert checks.needs_vectors(calibrated=True) and not checks.needs_vectors(calibrated=False)
    assert CoherenceOptions(0.01, None, None, 0.05).needs_vectors(calibrated=False)


@pytest.mark.parametrize(
    ("options", "values", "settings"),
    [
        (PrefilterOptions, {"min_words": 9, "max_words": 3}, {"min_words": 9, "max_words": 3}),
        (PrefilterOptions, {"max_length_ratio": 0.5}, {"max_length_ratio": 0.5}),
        (GroupOptions, {"max_group_size": 1}, {"max_group_size": 1}),
        (CalibrationOptions, {"max_false_accept": 1.5}, {"max_false_accept": 1.5}),
        (CalibrationOptions, {"sample_size": 0}, {"calibration_sample": 0}),
        (MarginOptions, {"k": 0}, {"margin_k": 0}),
        (MakePairsOptions, {"mode": "some"}, {"pair_mode": "some"}),
        (MakePairsOptions, {"max_pairs_per_group": 0}, {"max_pairs_per_group": 0}),
        (PostFilterOptions, {"near_equal": 1.5}, {"near_equal": 1.5}),
        (PostFilterOptions, {"near_duplicates": 1.5}, {"near_duplicates": 1.5}),
        (ReaderOptions, {"xces_links": "many"}, {"xces_links": "many"}),
        (ReaderOptions, {"invalid_utf8": "drop"}, {"invalid_utf8": "drop"}),
        (ReaderOptions, {"max_line_chars": 0}, {"max_line_chars": 0}),
        (ReaderOptions, {"on_length_mismatch": "x"}, {"on_length_mismatch": "x"}),
        (ReaderOptions, {"on_malformed_xml": "x"}, {"on_malformed_xml": "x"}),
        (
            CoherenceOptions,
            {"group_support": 0.1, "max_false_accept": 0.2},
            {"group_support": 0.1, "max_false_accept": 0.2},
        ),
    ],
)
def test_a_stages_checks_give_one_message_from_either_door(
    options: type, values: dict, settings: dict
) -> None:
    """One check, one error type: the same message, naming the flag, from settings or stage."""
    with pytest.raises(UsageError) as from_settings:
        MiningSettings(**settings)
    with pytest.raises(UsageError) as from_options:
        options(**values)
    assert str(from_settings.value) == str(from_options.value)
    assert str(from_options.value).startswith(flag_name(next(iter(settings)), MiningSettings))


@pytest.mark.parametrize(
    ("kind", "settings", "message"),
    [
        (MiningSettings, {"threshold": "2"}, r"--threshold 2.0 is not a cosine"),
        (MiningSettings, {"threshold": "high"}, r"--threshold 'high': give 'auto'"),
        (RunSettings, {"batch_tokens": 0}, r"--batch-tokens 0 is not a positive integer"),
        (MiningSettings, {"input_format": "xlsx"}, r"--format 'xlsx'; allowed: auto, moses"),
        (MiningSettings, {"max_false_accept": 1.5}, r"--max-false-accept 1.5 is not a share"),
        (MiningSettings, {"tsv_columns": "2,2"}, r"--tsv-columns '2,2': columns .* must differ"),
        (MiningSettings, {"min_words": 9, "max_words": 3}, r"--min-words 9 is above --max-words"),
        (
            MiningSettings,
            {"score": "margin", "threshold": "0.8"},
            r"--score margin needs --threshold auto",
        ),
        (RunSettings, {"gpu_type": "nvidia-gtx"}, r"--gpu-type 'nvidia-gtx'; allowed: nvidia-a100"),
    ],
)
def test_bad_values_name_the_flag_and_what_is_allowed(
    kind: type, settings: dict, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        kind(**settings)


@pytest.mark.parametrize(("src", "tgt"), [("pl", "pl"), ("en", "eng"), ("pol", "PL")])
def test_same_language_on_both_sides_is_refused(src: str, tgt: str) -> None:
    # Defect 8: --src-lang and --tgt-lang naming one language were accepted.
    with pytest.raises(UsageError, match="are the same language"):
        MiningSettings(src_lang=src, tgt_lang=tgt)


@pytest.mark.parametrize(
    ("module", "settings", "message"),
    [
        (
            "heliport",
            {"language_id": "py3langid+heliport"},
            "--language-id py3langid\\+heliport needs heliport",
        ),
        (
            "faiss",
            {"hard_negative_accept": "0.1"},
            "--hard-negative-accept searches neighbours with faiss",
        ),
    ],
)
def test_an_extra_a_setting_needs_is_asked_for_before_the_run(
    monkeypatch: pytest.MonkeyPatch, module: str, settings: dict, message: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as where it is not installed
    with pytest.raises(UsageError, match=message + ".*pip install 'paramine\\["):
        MiningSettings(**settings)


def test_unknown_setting_names_its_source() -> None:
    with pytest.raises(UsageError, match=r"refresh\.yaml: 'min-word' is not a paramine mine"):
        MiningSettings.from_mapping({"min-word": 2}, source="refresh.yaml")


def test_settings_are_frozen() -> None:
    settings = MiningSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.threshold = "0.5"  # type: ignore[misc]
    # Numbers are numbers once parsed (issue 27): a fixed threshold is a float.
    assert settings.replace(threshold="0.5").threshold == 0.5
    with pytest.raises(UsageError):
        settings.replace(threshold="5")


def test_format_choices_are_the_selectable_readers() -> None:
    from paramine.pipelines.formats import selectable_formats

    assert sorted(INPUT_FORMATS) == sorted(["auto", *selectable_formats()])


#: A value other than the default for each stage's option that can take one beside the others.
NOT_DEFAULTS = {
    "tsv_columns": "3,4",
    "score_column": 5,
    "min_score": 0.5,
    "min_adequacy": 0.2,
    "min_language_score": 0.5,
    "max_rejects_per_reason": 0,
    "xces_links": "join",
    "invalid_utf8": "reject",
    "max_line_chars": 100,
    "on_length_mismatch": "reject_tail",
    "on_malformed_xml": "reject",
    "model": "some/folder",
    "prefix": "p: ",
    "threshold": "0.8",
    "score": "cosine",
    "margin_k": 4,
    "max_false_accept": 0.05,
    "calibration_sample": 500,
    "backend": "onnx",
    "quantize": "int8",
    "min_words": 2,
    "max_words": 40,
    "max_length_ratio": 3,
    "sentence_count_filter": True,
    "profile": "web",
    "junk_rules": "urls",
    "language_check": "off",
    "min_letter_share": 0.4,
    "min_script_share": 0.7,
    "pair_mode": "all",
    "max_group_size": 10,
    "max_pairs_per_group": 5,
    "rival_margin": 0.05,
    "coherence_min_group": 5,
    "group_support": 0.5,
    "hard_negative_accept": 0.01,
    "near_equal": 0.9,
    "drop_inflection_pairs": True,
    "near_duplicates": 0.9,
}


def test_settings_and_their_stages_options_survive_their_own_record() -> None:
    """The settings make stage options from values parsed once: parsing them again changes none."""
    settings = MiningSettings.from_mapping(NOT_DEFAULTS)
    defaults = MiningSettings()
    for name in NOT_DEFAULTS:
        assert getattr(settings, name) != getattr(defaults, name), name
    again = MiningSettings.from_mapping(settings.to_record())
    assert again == settings
    assert again.profile_options == settings.profile_options
    assert again.prefilter_options == settings.prefilter_options
    assert again.reader_options() == settings.reader_options()
    assert (again.cut_options.fixed_threshold, again.encoder_options.quantize) == (0.8, "int8")
