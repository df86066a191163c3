"""MineConfig: one typed config, parsed once and checked in one place."""

from __future__ import annotations

import dataclasses

import pytest
from paramine.pipelines.run.config import MineConfig, build_parser, parse_command_line
from paramine.pipelines.run.mine import config_from_command_line
from paramine.schemas.errors import UsageError
from paramine.schemas.options import flag_name


def test_every_field_is_a_flag_with_help_and_the_same_default() -> None:
    parser = build_parser()
    actions = {a.dest: a for a in parser._actions if a.dest != "help"}
    for field in dataclasses.fields(MineConfig):
        action = actions[field.name]
        assert flag_name(field.name, MineConfig) in action.option_strings
        assert action.help and len(action.help) > 20, field.name
    # A config from an empty command line is the config of the defaults.
    given, beam_args = parse_command_line([])
    assert given == {} and beam_args == []
    assert MineConfig.from_mapping(given) == MineConfig()


def test_command_line_yaml_and_python_agree() -> None:
    from_cli, _ = config_from_command_line(
        ["a.tsv", "--output", "o", "--tgt-lang", "cs", "--threshold", "0.8", "--tsv-columns", "3,4"]
    )
    from_mapping = MineConfig.from_mapping(
        {
            "inputs": ["a.tsv"],
            "output": "o",
            "tgt-lang": "cs",
            "threshold": 0.8,
            "tsv_columns": "3,4",
        }
    )
    from_python = MineConfig(
        inputs=("a.tsv",), output="o", tgt_lang="cs", threshold="0.8", tsv_columns=(3, 4)
    )
    assert from_cli == from_mapping == from_python
    assert from_python.resolved_score() == "cosine"
    assert from_python.to_record()["tsv_columns"] == [3, 4]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"threshold": "2"}, r"--threshold 2.0 is not a cosine"),
        ({"threshold": "high"}, r"--threshold 'high': give 'auto'"),
        ({"batch_tokens": 0}, r"--batch-tokens 0 is not a positive integer"),
        ({"input_format": "xlsx"}, r"--format 'xlsx'; allowed: auto, moses"),
        ({"max_false_accept": 1.5}, r"--max-false-accept 1.5 is not a share"),
        ({"tsv_columns": "2,2"}, r"--tsv-columns '2,2': columns .* must differ"),
        ({"min_words": 9, "max_words": 3}, r"--min-words 9 is above --max-words 3"),
        ({"score": "margin", "threshold": "0.8"}, r"--score margin needs --threshold auto"),
        ({"gpu_type": "nvidia-gtx"}, r"--gpu-type 'nvidia-gtx'; allowed: nvidia-a100"),
    ],
)
def test_bad_values_name_the_flag_and_what_is_allowed(settings: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        MineConfig(**settings)


@pytest.mark.parametrize(("src", "tgt"), [("pl", "pl"), ("en", "eng"), ("pol", "PL")])
def test_same_language_on_both_sides_is_refused(src: str, tgt: str) -> None:
    # Defect 8: --src-lang and --tgt-lang naming one language were accepted.
    with pytest.raises(UsageError, match="are the same language"):
        MineConfig(src_lang=src, tgt_lang=tgt)


def test_unknown_setting_names_its_source() -> None:
    with pytest.raises(UsageError, match=r"refresh\.yaml: 'min-word' is not a paramine mine"):
        MineConfig.from_mapping({"min-word": 2}, source="refresh.yaml")


def test_bad_flag_is_a_usage_error_not_an_exit() -> None:
    with pytest.raises(UsageError, match=r"--format: invalid choice"):
        config_from_command_line(["a.tsv", "--output", "o", "--format", "xlsx"])
    with pytest.raises(UsageError, match=r"--output is required"):
        config_from_command_line(["a.tsv"])
    with pytest.raises(UsageError, match=r"demo is English-Polish"):
        config_from_command_line(["--tgt-lang", "cs"])


def test_config_is_frozen() -> None:
    config = MineConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.threshold = "0.5"  # type: ignore[misc]
    # Numbers are numbers once parsed (issue 27): a fixed threshold is a float.
    assert config.replace(threshold="0.5").threshold == 0.5
    with pytest.raises(UsageError):
        config.replace(threshold="5")


def test_format_choices_are_the_selectable_readers() -> None:
    from paramine.pipelines.formats import selectable_formats
    from paramine.pipelines.run.config import INPUT_FORMATS

    assert sorted(INPUT_FORMATS) == sorted(["auto", *selectable_formats()])
