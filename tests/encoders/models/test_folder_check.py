"""The model folder checks: a folder is read as a worker will load it, before anything runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from paramine.encoders.models.folder_check import check_model_folder
from paramine.schemas.errors import ModelError


def test_check_model_folder_reads_every_file_a_worker_will(tiny_model_copy: Path) -> None:
    check_model_folder(str(tiny_model_copy), "tiny")  # a good folder passes

    pooling = tiny_model_copy / "1_Pooling" / "config.json"
    good = pooling.read_bytes()
    pooling.write_text('{"word_embedding_dimension": 32,', encoding="utf-8")
    with pytest.raises(ModelError, match=r"1_Pooling/config\.json is not valid JSON \(.* line 1"):
        check_model_folder(str(tiny_model_copy), "tiny")
    pooling.write_bytes(good)

    tokenizer = tiny_model_copy / "tokenizer.json"
    tokenizer.write_text('{"version": "1.0", "model": {"type": "Nope"}}', encoding="utf-8")
    with pytest.raises(ModelError, match=r"the tokenizer in .*tiny-model-copy does not load"):
        check_model_folder(str(tiny_model_copy), "tiny")

    (tiny_model_copy / "modules.json").write_text('{"path": ""}', encoding="utf-8")
    with pytest.raises(ModelError, match=r"modules\.json is not a sentence-transformers module"):
        check_model_folder(str(tiny_model_copy), "tiny")


def test_a_config_that_needs_the_models_own_code_is_named_as_such(tiny_model_copy: Path) -> None:
    config_file = tiny_model_copy / "config.json"
    config = json.loads(config_file.read_text())
    config["model_type"] = "own_bert"  # not a transformers architecture
    config["auto_map"] = {"AutoConfig": "own_config.OwnConfig", "AutoModel": "own_model.OwnModel"}
    config_file.write_text(json.dumps(config))
    with pytest.raises(ModelError) as raised:
        check_model_folder(str(tiny_model_copy), "tiny")
    assert str(raised.value) == (
        f"--model tiny: the config in {tiny_model_copy} needs code that comes with the model "
        "(trust_remote_code), which paramine never runs; choose a model that transformers' own "
        "classes load"
    )


def test_settings_asking_for_trust_remote_code_do_not_skip_the_check(tiny_model_copy: Path) -> None:
    # sentence-transformers drops the flag from a folder's settings, and
    # paramine never passes it: the folder is read as the workers will read it.
    settings_file = tiny_model_copy / "sentence_bert_config.json"
    settings = json.loads(settings_file.read_text())
    settings_file.write_text(json.dumps({**settings, "model_args": {"trust_remote_code": True}}))
    check_model_folder(str(tiny_model_copy), "tiny")  # a good folder still passes
    (tiny_model_copy / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "Nope"}}')
    with pytest.raises(ModelError, match=r"the tokenizer in .*tiny-model-copy does not load"):
        check_model_folder(str(tiny_model_copy), "tiny")


def test_settings_a_module_does_not_take_are_refused_naming_the_file(tiny_model_copy: Path) -> None:
    settings_file = tiny_model_copy / "sentence_bert_config.json"
    settings = json.loads(settings_file.read_text())
    settings_file.write_text(json.dumps({**settings, "trust_remote_code": True, "colour": 1}))
    with pytest.raises(ModelError) as raised:
        check_model_folder(str(tiny_model_copy), "tiny")
    assert str(raised.value).startswith(
        f"--model tiny: {settings_file}, the settings of its Transformer module, holds colour, "
        "trust_remote_code, which the installed sentence-transformers' Transformer does not take"
    )
    # The names older sentence-transformers wrote are read as today's.
    settings_file.write_text(json.dumps({**settings, "tokenizer_args": {}}))
    check_model_folder(str(tiny_model_copy), "tiny")


@pytest.mark.pipeline
def test_evaluate_refuses_such_a_folder_in_one_line(tiny_model_copy: Path, tmp_path: Path) -> None:
    settings_file = tiny_model_copy / "sentence_bert_config.json"
    settings = json.loads(settings_file.read_text())
    settings_file.write_text(json.dumps({**settings, "trust_remote_code": True}))
    sts = tmp_path / "sts.tsv"
    sts.write_text("a\tb\t1\nc\td\t2\n", encoding="utf-8")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "paramine.pipelines.cli", "evaluate"),
            *(str(tiny_model_copy), "--eval-sts", str(sts)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("paramine: error:")]
    assert done.returncode == 2, done.stderr
    assert len(errors) == 1 and "holds trust_remote_code" in errors[0], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.pipeline
def test_weights_cut_short_are_one_line_naming_the_file(
    tiny_model_copy: Path, tmp_path: Path
) -> None:
    weights = tiny_model_copy / "model.safetensors"
    whole = weights.read_bytes()
    weights.write_bytes(whole[: len(whole) // 2])  # a copy stopped half way
    with pytest.raises(ModelError, match=r"model\.safetensors is cut short or damaged \(.* bytes"):
        check_model_folder(str(tiny_model_copy), "tiny")
    weights.write_bytes(b"\x05\x00")
    with pytest.raises(ModelError, match=r"model\.safetensors is cut short or damaged"):
        check_model_folder(str(tiny_model_copy), "tiny")
    # As `paramine mine --model` says it: one line, before anything runs.
    weights.write_bytes(whole[: len(whole) // 2])
    bitext = tmp_path / "in.tsv"
    bitext.write_text("Hello.\tCześć.\nHi.\tHej.\n", encoding="utf-8")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "paramine.pipelines.cli", "mine", str(bitext)),
            *("--model", str(tiny_model_copy), "--output", str(tmp_path / "out")),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("paramine: error:")]
    assert len(errors) == 1 and "model.safetensors is cut short" in errors[0], done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()
