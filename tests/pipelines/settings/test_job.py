"""Job files and the command line: each setting of one kind, a bad key named by file and line."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from paramine.pipelines.run.mine import MineJob, job_from_command_line
from paramine.pipelines.settings.job import setting_kind
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import RunSettings
from paramine.schemas.errors import InputError, ParamineError, UsageError


def test_no_setting_is_of_both_kinds() -> None:
    mining = {f.name for f in dataclasses.fields(MiningSettings)}
    running = {f.name for f in dataclasses.fields(RunSettings)}
    assert mining.isdisjoint(running)
    assert setting_kind("threshold") is MiningSettings
    assert setting_kind("--batch-tokens") is RunSettings
    assert setting_kind("format") is MiningSettings  # a flag that is not its field's name
    assert setting_kind("runner") is None  # Beam's


def test_command_line_mapping_and_python_agree() -> None:
    job = job_from_command_line(
        ["a.tsv", "--output", "o", "--tgt-lang", "cs", "--threshold", "0.8", "--tsv-columns", "3,4"]
    )
    from_mapping = MiningSettings.from_mapping(
        {"tgt-lang": "cs", "threshold": 0.8, "tsv_columns": "3,4"}
    )
    from_python = MiningSettings(tgt_lang="cs", threshold="0.8", tsv_columns=(3, 4))
    assert job.mining == from_mapping == from_python
    assert job.running == RunSettings(inputs=("a.tsv",), output="o")
    assert from_python.cut_options.resolved_score() == "cosine"
    assert from_python.to_record()["tsv_columns"] == [3, 4]


def test_bad_flag_is_a_usage_error_not_an_exit() -> None:
    with pytest.raises(UsageError, match=r"--format: invalid choice"):
        job_from_command_line(["a.tsv", "--output", "o", "--format", "xlsx"])
    with pytest.raises(UsageError, match=r"--output is required"):
        job_from_command_line(["a.tsv"])
    with pytest.raises(UsageError, match=r"demo is English-Polish"):
        job_from_command_line(["--tgt-lang", "cs"])


def job_of(tmp_path: Path, text: str, *argv: str) -> MineJob:
    path = tmp_path / "job.yaml"
    path.write_text(text, encoding="utf-8")
    return job_from_command_line(["--config", str(path), *argv])


def test_a_job_file_gives_the_settings_of_the_same_flags(tmp_path: Path) -> None:
    from_file = job_of(
        tmp_path,
        "inputs: [a.tsv, b.tsv]\noutput: out\nsrc_lang: en\ntgt-lang: cs\n"
        "threshold: '0.85'\nmax_words: 40\ndrop_inflection_pairs: true\ndevice: cpu\n"
        "exclude_sentences: eval.txt\nbeam_args: [--direct_num_workers=2]\n",
    )
    from_flags = job_from_command_line(
        [
            "a.tsv",
            "b.tsv",
            "--output",
            "out",
            "--tgt-lang",
            "cs",
            "--threshold",
            "0.85",
            "--max-words",
            "40",
            "--drop-inflection-pairs",
            "--device",
            "cpu",
            "--exclude-sentences",
            "eval.txt",
            "--direct_num_workers=2",
        ]
    )
    assert from_file.mining == from_flags.mining
    assert from_file.running == from_flags.running
    assert sorted(from_file.beam_args) == sorted(from_flags.beam_args)


def test_flags_override_the_job_file(tmp_path: Path) -> None:
    job = job_of(
        tmp_path,
        "inputs: [a.tsv]\noutput: out\nthreshold: '0.85'\nmax_words: 40\n",
        "b.tsv",
        "--threshold",
        "0.9",
    )
    assert job.mining.threshold == 0.9 and job.mining.max_words == 40
    assert job.running.inputs == ("b.tsv",) and job.running.output == "out"
    # A bad value the command line overrides is no error.
    job = job_of(tmp_path, "inputs: [a.tsv]\noutput: out\nthreshold: high\n", "--threshold", "0.9")
    assert job.mining.threshold == 0.9


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("output: o\nthresold: 0.8\n", r"job\.yaml:2: 'thresold' is not a paramine mine setting"),
        ("output: o\n\nthreshold: high\n", r"job\.yaml:3: threshold: 'high': give 'auto'"),
        ("output: o\nmax-words: -3\n", r"job\.yaml:2: max-words: -3 is not a positive integer"),
        ("output: o\ndevice: tpu\n", r"job\.yaml:2: device: 'tpu'; allowed: auto, cpu"),
        ("output: o\nbeam_args: --runner=X\n", r"job\.yaml:2: beam_args: a list of Beam flags"),
        ("- a\n- b\n", r"job\.yaml: a job file is a YAML mapping"),
        ("output: [o\n", r"job\.yaml:2:1: not valid YAML: .*flow sequence that starts at 1:9"),
    ],
)
def test_a_bad_job_file_is_one_line_naming_the_file_line_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(ParamineError, match=message) as raised:
        job_of(tmp_path, text, "a.tsv")
    assert "\n" not in str(raised.value)


def test_an_input_of_a_job_file_that_matches_nothing_is_named_by_its_line(
    tmp_path: Path,
) -> None:
    from paramine.pipelines.run.mine import run_job

    bitext = tmp_path / "a.tsv"
    bitext.write_text("Hello.\tCześć.\n")
    config = tmp_path / "job.yaml"
    config.write_text(f"src_lang: en\ninputs:\n  - {bitext}\n  - 5\noutput: {tmp_path / 'o'}\n")
    job = job_from_command_line(["--config", str(config)])
    with pytest.raises(InputError, match=r"job\.yaml:2: inputs: input '5' matches no file"):
        run_job(job)
    # An input given on the command line is the command line's: named as it was given.
    job = job_from_command_line(["--config", str(config), str(tmp_path / "b.tsv")])
    with pytest.raises(InputError, match=r"^input '.*b\.tsv' matches no file"):
        run_job(job)
    assert not (tmp_path / "o").exists()
