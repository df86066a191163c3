"""Evaluation sentences kept out of a mined dataset: --exclude-sentences, --exclude-suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.pipelines.refresh.config import RefreshConfig
from paramine.pipelines.run.eval_exclusion import exclusion_keys
from paramine.pipelines.run.mine import run
from paramine.pipelines.settings.mining import MiningSettings
from paramine.schemas.errors import InputError, UsageError

from tests.pipelines.formats.helpers import write_tsv


@pytest.mark.pipeline
def test_evaluation_sentences_are_kept_out_on_request(tmp_path: Path, tiny_model_dir: Path) -> None:
    bitext = [
        ("Are you crazy?", "Odbiło ci?"),
        ("Are you crazy?", "Zwariowałeś?"),
        ("I'm tired.", "Jestem zmęczony."),
        ("I'm tired.", "Padam z nóg."),
    ]
    tsv = write_tsv(tmp_path / "bitext.tsv", bitext)
    # An evaluation file, one sentence a line; case and punctuation differ.
    held = tmp_path / "test.pol"
    held.write_text("ODBIŁO CI\nKot śpi.\n", encoding="utf-8")
    output = tmp_path / "out"
    argv = [str(tsv), "--output", str(output), "--model", str(tiny_model_dir)]
    manifest = run([*argv, "--threshold", "-1", "--exclude-sentences", str(held)])
    assert manifest.accounting_errors() == []
    assert manifest.counts["PostFilter"]["dropped"] == {"eval_overlap": 1}
    assert manifest.rows.pairs == 1
    assert manifest.extra.eval_exclusion == {"sentences": 2}
    # A missing file stops the run before anything is written.
    with pytest.raises(InputError, match=r"missing\.pol"):
        run([*argv[:1], "--output", str(tmp_path / "never"), "--model", str(tiny_model_dir),
             "--exclude-sentences", str(tmp_path / "missing.pol")])  # fmt: skip
    assert not (tmp_path / "never").exists()


def test_refresh_refuses_evaluation_exclusion(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="exclude_sentences"):
        RefreshConfig(
            output=str(tmp_path / "table"),
            inputs=[str(tmp_path / "a.tsv")],
            options={"exclude-sentences": ["x.pol"]},
        )


def test_a_suite_gives_every_split_s_sentences(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "toy").mkdir(parents=True)
    for split, sentence in {"train": "Ala ma kota.", "dev": "Pies śpi.", "test": "Kot je."}.items():
        (data / "toy" / f"{split}.txt").write_text(f"1 {sentence}\n", encoding="utf-8")
    suite = tmp_path / "toy.yaml"
    suite.write_text(
        "name: toy\ntasks:\n  - name: TOY\n    kind: classify\n    format: label_text\n"
        "    train: toy/train.txt\n    dev: toy/dev.txt\n    test: toy/test.txt\n",
        encoding="utf-8",
    )
    config = MiningSettings(
        src_lang="en",
        tgt_lang="pl",
        exclude_suite=str(suite),
        suite_data=str(data),
    )
    assert exclusion_keys(config) == {"alamakota", "piesśpi", "kotje"}
    # A suite whose files are missing stops the run, naming them.
    (data / "toy" / "dev.txt").unlink()
    with pytest.raises(InputError, match=r"toy/dev\.txt"):
        exclusion_keys(config)
    # An unknown suite is named with the option that named it.
    unknown = MiningSettings(src_lang="en", tgt_lang="pl", exclude_suite="nosuch")
    with pytest.raises(UsageError, match=r"^--exclude-suite 'nosuch' is neither a built-in suite"):
        exclusion_keys(unknown)


def test_a_file_not_in_utf8_is_refused_naming_its_line(tmp_path: Path) -> None:
    # Read with replacement characters, "Zażółć gęślą jaźń" in cp1250 would
    # match no pair: the sentences meant to be kept out would stay in.
    held = tmp_path / "eval.pol"
    held.write_bytes("Kot śpi.\nZażółć gęślą jaźń.\n".encode("cp1250"))
    settings = MiningSettings(src_lang="en", tgt_lang="pl", exclude_sentences=(str(held),))
    with pytest.raises(InputError) as error:
        exclusion_keys(settings)
    message = str(error.value)
    assert message.startswith(f"--exclude-sentences {held}: line 1 is not UTF-8 text (byte 0x9c)")
    assert "convert the file to UTF-8" in message and "\n" not in message
    # The same sentences in UTF-8 are read.
    held.write_text("Kot śpi.\nZażółć gęślą jaźń.\n", encoding="utf-8")
    assert exclusion_keys(settings) == {"kotśpi", "zażółćgęśląjaźń"}
