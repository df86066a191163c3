"""``paramine mine`` end to end: real Beam pipelines, real Parquet, a real (tiny) model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from paramine.pipelines.mining.mine_paraphrases import MINE_STAGES
from paramine.pipelines.run.mine import demo_input, job_from_command_line, run
from paramine.schemas.dataset import (
    PAIRS_SCHEMA,
    PAIRS_SCHEMA_VERSION,
    REJECTS_SCHEMA,
    schema_version,
)
from paramine.schemas.errors import InputError, OutputError
from paramine.schemas.manifest import (
    IncompleteDatasetError,
    read_manifest,
)
from paramine.schemas.reader import read_pairs

from tests.pipelines.formats.helpers import write_moses

TATOEBA = "tatoeba_test_v2021-08-07/eng-pol"


def mine(tmp_path: Path, model: Path, *args: str, name: str = "out") -> tuple[Path, object]:
    output = tmp_path / name
    manifest = run([*args, "--model", str(model), "--output", str(output), "--threshold", "0.0"])
    return output, manifest


class TestMineEndToEnd:
    @pytest.mark.pipeline
    def test_demo_writes_schema_manifest_and_balanced_counts(
        self, tmp_path: Path, tiny_model_dir: Path
    ) -> None:
        output, _ = mine(tmp_path, tiny_model_dir)
        table, read_back = read_pairs(str(output))
        assert table.schema.equals(PAIRS_SCHEMA, check_metadata=False)
        for name in read_back.files.pairs:
            assert schema_version(pq.read_schema(output / name)) == PAIRS_SCHEMA_VERSION
        for name in read_back.files.rejects:
            assert pq.read_schema(output / name).equals(REJECTS_SCHEMA, check_metadata=False)
        counts = read_back.counts
        assert read_back.accounting_errors() == []
        notes = {"repairs", "encoding", "unchecked", "line_checks"}
        assert set(counts) == {*(stage.name for stage in MINE_STAGES), *notes}
        assert [stage["name"] for stage in read_back.stages] == [s.name for s in MINE_STAGES]
        assert counts["repairs"] == {}
        # The demo's languages (en, pl) are both known to the detector.
        assert counts["unchecked"] == {}
        # Every pair adds one line to each side's figures.
        assert counts["line_checks"]["candidate:pl:lines"] == counts["Prefilter"]["in"]
        assert counts["line_checks"]["pivot:en:lines"] == counts["Prefilter"]["in"]
        demo_lines = Path(demo_input()).read_text(encoding="utf-8").count("\n")
        assert counts["ReadBitext"]["in"] == demo_lines
        assert counts["PostFilter"]["kept"] == table.num_rows == read_back.rows.pairs > 100
        # The demo's noise is caught by name.
        assert counts["Prefilter"]["dropped"]["untranslated"] >= 2
        assert counts["Prefilter"]["dropped"]["duplicate_pair"] == 1
        assert counts["Prefilter"]["dropped"]["empty"] == 1
        rows = table.to_pylist()
        assert all(r["sentence_a"] != r["sentence_b"] for r in rows)
        assert len({r["pair_id"] for r in rows}) == len(rows)
        assert all(r["lang"] == "pl" and r["pivot_lang"] == "en" for r in rows)
        assert read_back.threshold == {**read_back.threshold, "mode": "fixed", "value": 0.0}
        assert read_back.model.id == str(tiny_model_dir)
        # No runner named: the in-process one (DirectRunner would fetch Prism).
        assert read_back.extra.runner == "FnApiRunner"

    @pytest.mark.pipeline
    def test_two_runs_give_identical_rows(self, tmp_path: Path, tiny_model_dir: Path) -> None:
        first, _ = mine(tmp_path, tiny_model_dir, demo_input(), name="a")
        second, _ = mine(tmp_path, tiny_model_dir, demo_input(), "--num-shards", "2", name="b")

        def rows(path: Path) -> list[tuple]:
            table, _ = read_pairs(str(path))
            return sorted(tuple(r.values()) for r in table.to_pylist())

        assert rows(first) == rows(second)

    @pytest.mark.pipeline
    def test_many_shards_and_rejects_parquet(self, tmp_path: Path, tiny_model_dir: Path) -> None:
        one = write_moses(
            tmp_path / "one", ["Good night.", "Good night."], ["Dobranoc.", "Spokojnej nocy."]
        )
        two = tmp_path / "two.tsv"
        two.write_bytes(
            "Good night.\tDobrej nocy.\nno tab here\nGood night.\tŚpij dobrze.\n".encode()
        )
        output, manifest = mine(tmp_path, tiny_model_dir, str(one), str(two))
        counts = manifest.counts
        assert counts["ReadBitext"] == {"in": 5, "kept": 4, "dropped": {"column_count": 1}}
        assert counts["GroupByPivot"]["kept"] == 4
        rejects = pq.read_table(output / manifest.files.rejects[0]).to_pylist()
        rejects += [
            r for f in manifest.files.rejects[1:] for r in pq.read_table(output / f).to_pylist()
        ]
        assert [(r["reason"], r["line"], r["record"]) for r in rejects] == [
            ("column_count", 2, "no tab here")
        ]
        assert {s.corpus for s in manifest.inputs} == {"corpus.en-pl", "two"}

    @pytest.mark.pipeline
    def test_input_list_adds_to_the_inputs(self, tmp_path: Path, tiny_model_dir: Path) -> None:
        one = write_moses(tmp_path / "one", ["Good night."], ["Dobranoc."])
        two = tmp_path / "two.tsv"
        two.write_text("Good night.\tDobrej nocy.\n", encoding="utf-8")
        three = tmp_path / "three.tsv"
        three.write_text("Good night.\tSpokojnej nocy.\n", encoding="utf-8")
        listing = tmp_path / "inputs.txt"
        listing.write_text(f"# shards\n{one}\n\n  {two}  \n", encoding="utf-8")
        _, manifest = mine(tmp_path, tiny_model_dir, str(three), "--input-list", str(listing))
        assert manifest.options["inputs"] == [str(three), str(one), str(two)]
        assert {s.corpus for s in manifest.inputs} == {"three", "corpus.en-pl", "two"}
        assert manifest.counts["ReadBitext"]["in"] == 3
        assert manifest.counts["GroupByPivot"]["kept"] == 3  # one pivot, three translations

    def test_missing_input_list_names_the_file(self, tmp_path: Path) -> None:
        with pytest.raises(InputError, match=r"nowhere\.txt"):
            run(["--input-list", str(tmp_path / "nowhere.txt"), "--output", str(tmp_path / "o")])

    @pytest.mark.pipeline
    def test_existing_output_needs_overwrite(self, tmp_path: Path, tiny_model_dir: Path) -> None:
        output, _ = mine(tmp_path, tiny_model_dir)
        with pytest.raises(OutputError, match="--overwrite"):
            mine(tmp_path, tiny_model_dir)
        _, manifest = mine(tmp_path, tiny_model_dir, "--overwrite")
        assert read_manifest(str(output)).rows == manifest.rows

    def test_dataset_without_manifest_is_incomplete(self, tmp_path: Path) -> None:
        (tmp_path / "pairs").mkdir()
        with pytest.raises(IncompleteDatasetError, match=r"no manifest\.json"):
            read_pairs(str(tmp_path))

    @pytest.mark.pipeline
    def test_cli_help_and_run(self, tmp_path: Path, tiny_model_dir: Path) -> None:
        help_text = subprocess.run(
            [sys.executable, "-m", "paramine.pipelines.cli", "mine", "--help"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for flag in (
            "--src-lang",
            "--tgt-lang",
            "--model",
            "--threshold",
            "--pair-mode",
            "--max-group-size",
            "--batch-tokens",
            "--write-scored",
            "--output",
        ):
            assert flag in help_text
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "paramine.pipelines.cli",
                "mine",
                "--model",
                str(tiny_model_dir),
                "--output",
                str(tmp_path / "cli"),
                "--threshold",
                "0.0",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        assert "pairs written" in done.stderr
        manifest = json.loads((tmp_path / "cli" / "manifest.json").read_text())
        assert manifest["counts"]["ReadBitext"]["in"] > 300

    @pytest.mark.pipeline
    def test_tatoeba_groups_yield_pairs(
        self, shared_corpora: Path, tmp_path: Path, tiny_model_dir: Path
    ) -> None:
        source = shared_corpora / TATOEBA / "test.txt"
        output, manifest = mine(
            tmp_path, tiny_model_dir, str(source), "--src-lang", "en", "--tgt-lang", "pl"
        )
        assert manifest.counts["ReadBitext"]["in"] == 10_099
        assert manifest.accounting_errors() == []
        table, _ = read_pairs(str(output))
        # 159 English sentences have two or more Polish translations.
        assert 100 <= len(set(table.column("pivot_sentence").to_pylist())) <= 159


class TestCommandLine:
    def test_beam_flags_with_spaced_values_are_not_inputs(self) -> None:
        argv = [
            "a.txt",
            "--runner",
            "DirectRunner",
            "b.txt",
            "--corpus",
            "b.txt",
            "--overwrite",
            "c",
            "--output",
            "o",
        ]
        job = job_from_command_line(argv)
        assert job.running.inputs == ("a.txt", "b.txt", "c")
        assert job.running.corpus == "b.txt" and job.running.overwrite
        assert job.beam_args == ["--runner", "DirectRunner"]

    def test_input_flag_repeats(self) -> None:
        job = job_from_command_line(["--input", "a.txt", "--output", "o", "--input=b.txt", "c.txt"])
        assert job.running.inputs == ("c.txt", "a.txt", "b.txt")

    @pytest.mark.pipeline
    def test_spaced_runner_flag_mines(self, tmp_path: Path, tiny_model_dir: Path) -> None:
        manifest = run(
            [
                demo_input(),
                "--runner",
                "FnApiRunner",
                "--model",
                str(tiny_model_dir),
                "--output",
                str(tmp_path / "o"),
                "--threshold",
                "0.0",
            ]
        )
        assert manifest.extra.runner == "FnApiRunner"
        assert manifest.options["inputs"] == [demo_input()]


@pytest.mark.pipeline
def test_repairs_are_counted_in_the_manifest(tmp_path: Path, tiny_model_dir: Path) -> None:
    tsv = tmp_path / "bad.tsv"
    tsv.write_bytes(b"Good night.\tDobranoc.\nGood night.\tDobrej \xff nocy.\nonly one column\n")
    output, manifest = mine(tmp_path, tiny_model_dir, str(tsv))
    counts = manifest.counts
    assert counts["repairs"] == {"invalid_utf8_replaced": 1}
    assert counts["ReadBitext"] == {"in": 3, "kept": 2, "dropped": {"column_count": 1}}
    assert manifest.accounting_errors() == []
    table, _ = read_pairs(str(output))
    assert (
        "Dobrej \ufffd nocy."
        in table.column("sentence_b").to_pylist() + table.column("sentence_a").to_pylist()
    )


@pytest.mark.pipeline
def test_a_job_file_mines_what_its_flags_mine_and_a_manifest_makes_one(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    import yaml

    source = write_moses(
        tmp_path / "in",
        ["Good night.", "Good night.", "Good night.", "Thank you.", "Thank you."],
        ["Dobranoc.", "Spokojnej nocy.", "Dobrej nocy.", "Dziękuję.", "Dzięki."],
    )
    flags = ["--threshold", "0.0", "--max-group-size", "2", "--quiet"]
    by_flags = run(
        [str(source), "--model", str(tiny_model_dir), "--output", str(tmp_path / "a"), *flags]
    )
    job = tmp_path / "job.yaml"
    job.write_text(
        yaml.safe_dump(
            {
                "inputs": [str(source)],
                "model": str(tiny_model_dir),
                "output": str(tmp_path / "b"),
                "threshold": "0.0",
                "max_group_size": 2,
                "quiet": True,
            }
        ),
        encoding="utf-8",
    )
    by_file = run(["--config", str(job)])
    ids = [pq.read_table(tmp_path / d / "pairs").column("pair_id").to_pylist() for d in "ab"]
    assert sorted(ids[0]) == sorted(ids[1]) and ids[0]
    assert by_file.options == {**by_flags.options, "output": str(tmp_path / "b")}
    # The manifest's options are such a file: the same pairs again.
    again = tmp_path / "again.yaml"
    again.write_text(
        yaml.safe_dump({**by_file.options, "output": str(tmp_path / "c")}), encoding="utf-8"
    )
    assert run(["--config", str(again)]).options["threshold"] == 0.0
    ids_c = pq.read_table(tmp_path / "c" / "pairs").column("pair_id").to_pylist()
    assert sorted(ids_c) == sorted(ids[0])
