"""TrainConfig and EvaluateConfig: flags generated from fields, values checked once."""

from __future__ import annotations

import dataclasses

import pytest
from paramine.encoders.evaluation.config import EvaluateConfig
from paramine.encoders.training.config import DEFAULT_NEAR_IDENTICAL, TrainConfig
from paramine.schemas.errors import UsageError
from paramine.schemas.options import ConfigParser, add_fields, flag_name, parse_config

REQUIRED = {"dataset": "d", "base": "e5-small", "output": "o"}


@pytest.mark.parametrize("config", [TrainConfig, EvaluateConfig])
def test_every_field_is_an_argument_with_help(config: type) -> None:
    parser = add_fields(ConfigParser(prog="p"), config)
    actions = {a.dest: a for a in parser._actions if a.dest != "help"}
    assert set(actions) == {f.name for f in dataclasses.fields(config)}
    for f in dataclasses.fields(config):
        action = actions[f.name]
        if not f.metadata["positional"]:
            assert flag_name(f.name, config) in action.option_strings
        assert action.help and len(action.help) > 10, f.name


def test_command_line_and_python_agree_and_numbers_are_numbers() -> None:
    argv = ["d", "--base", "e5-small", "--output", "o", "--lr", "1e-5", "--batch-size", "32"]
    argv += ["--drop-near-identical", "--eval-bitext", "a.pol", "a.eng", "--eval-sts", "s.tsv"]
    argv += ["--eval-sts", "t.tsv", "--bidirectional"]
    from_cli = parse_config(TrainConfig, "paramine train", "", argv)
    from_python = TrainConfig(
        **REQUIRED,
        lr="1e-5",
        batch_size=32,
        drop_near_identical=DEFAULT_NEAR_IDENTICAL,
        eval_bitext=[["a.pol", "a.eng"]],
        eval_sts=["s.tsv", "t.tsv"],
        bidirectional=True,
    )
    assert from_cli == from_python
    assert from_cli.lr == 1e-5 and isinstance(from_cli.batch_size, int)
    assert from_cli.eval_bitext == (("a.pol", "a.eng"),)
    assert from_cli.checkpoints == "o-checkpoints"
    # Defaults are the paper's, and a command line with only the required ones gives them.
    defaults = parse_config(
        TrainConfig, "paramine train", "", ["d", "--base", "b", "--output", "o"]
    )
    assert (defaults.pooling, defaults.batch_size, defaults.lr, defaults.epochs) == (
        "lstm",
        64,
        2e-6,
        3.0,
    )


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"batch_size": 1}, r"--batch-size must be >= 2"),
        ({"lstm_hidden": 0}, r"--lstm-hidden 0 is not a positive integer"),
        ({"drop_near_identical": 1.5}, r"--drop-near-identical 1.5 is not a similarity"),
        ({"warmup": 1.0}, r"--warmup 1.0 is not a share in \[0, 1\)"),
        ({"eval_share": -0.1}, r"--eval-share -0.1 is not a share"),
        ({"max_steps": 0}, r"--max-steps must be > 0"),
        ({"pooling": "max"}, r"--pooling 'max'; allowed: lstm, mean, lstm-residual"),
        ({"lr": "fast"}, r"--lr could not convert"),
        ({"head_lr": 0}, r"--lr and --head-lr must be > 0"),
        ({"recipe": "huge"}, r"--recipe 'huge'; allowed: paper, small"),
        ({"loss": "triplet"}, r"--loss 'triplet'; allowed: mnrl, cached"),
        ({"select_on": "dev"}, r"--select-on dev .* give --suite"),
        ({"select_every": 5}, r"--select-every and --select-tasks need --select-on dev"),
        ({"hard_negative_margin": 1.0}, r"--hard-negative-margin 1.0 is not a share"),
        ({"seeds": 0}, r"--seeds 0 is not a positive integer"),
        ({"eval_bitext": [["a", "b", "c"]]}, r"--eval-bitext .* give two line-aligned files"),
    ],
)
def test_bad_train_values_name_the_flag(settings: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        TrainConfig(**REQUIRED, **settings)


def test_a_recipe_gives_defaults_and_explicit_flags_override_it() -> None:
    def parse(*flags: str) -> TrainConfig:
        return parse_config(
            TrainConfig, "paramine train", "", ["d", "--base", "b", "--output", "o", *flags]
        )

    def recipe_settings(config: TrainConfig) -> tuple:
        return (
            config.pooling,
            config.lr,
            config.head_lr,
            config.batch_size,
            config.epochs,
            config.loss,
        )

    assert recipe_settings(parse()) == ("lstm", 2e-6, 2e-6, 64, 3.0, "mnrl")
    assert recipe_settings(parse("--recipe", "small")) == (
        "lstm-residual",
        2e-5,
        1e-4,
        64,
        3.0,
        "cached",
    )
    # An explicit flag wins over the recipe, and only that setting changes.
    small = parse("--recipe", "small", "--pooling", "mean", "--lr", "3e-5", "--loss", "mnrl")
    assert recipe_settings(small) == ("mean", 3e-5, 1e-4, 64, 3.0, "mnrl")
    # The paper's head learns at the Transformer's rate, whichever rate that is.
    assert parse("--lr", "1e-5").head_lr == 1e-5
    assert parse("--lr", "1e-5", "--head-lr", "1e-3").head_lr == 1e-3
    # Python resolves as the command line does.
    python = TrainConfig(
        dataset="d", base="b", output="o", recipe="small", lr=3e-5, pooling="mean", loss="mnrl"
    )
    assert python == small
    from paramine.encoders.training.recipes import overrides

    settings = {key: getattr(small, key) for key in ("pooling", "lr", "head_lr", "batch_size")}
    settings |= {"epochs": small.epochs, "loss": small.loss}
    assert overrides("small", settings) == {"pooling": "mean", "lr": 3e-5, "loss": "mnrl"}
    assert overrides("paper", {**settings, "lr": 1e-5, "head_lr": 1e-5}) == {
        "pooling": "mean",
        "lr": 1e-5,
    }
    adapt = parse("--recipe", "adapt", "--train-on", "bitext")
    assert recipe_settings(adapt) == ("lstm-residual", 5e-5, 1e-4, 32, 1.0, "mnrl")
    assert adapt.train_on == "bitext"
    assert parse("--recipe", "small", "--loss-directions", "all").loss_directions == "all"
    assert overrides("small", {**settings, "loss_directions": "both"})["loss_directions"] == "both"
    assert overrides("adapt", {**settings, "pooling": "lstm-residual", "train_on": "bitext"}) == {
        "lr": 3e-5,
        "batch_size": 64,
        "epochs": 3.0,
        "train_on": "bitext",
    }


def test_a_missing_required_flag_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"--base"):
        parse_config(TrainConfig, "paramine train", "", ["d", "--output", "o"])


def test_evaluate_config() -> None:
    config = parse_config(
        EvaluateConfig,
        "paramine evaluate",
        "",
        ["m1", "m2", "--base", "b", "--suite", "pl", "--json", "out.json", "--batch-size", "8"],
    )
    assert config.models == ("m1", "m2") and config.json_path == "out.json"
    assert config.scored == ["b", "m1", "m2"] and config.batch_size == 8
    with pytest.raises(UsageError, match=r"give --dataset DIR"):
        EvaluateConfig(models=["m"])
    with pytest.raises(UsageError, match=r"--suite prints its own table"):
        EvaluateConfig(models=["m"], suite="pl", eval_sts=["s.tsv"])
    with pytest.raises(UsageError, match=r"--split 'test'; allowed: eval, train, all"):
        EvaluateConfig(models=["m"], dataset="d", split="test")
