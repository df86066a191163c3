"""paramine refresh's results: the pairs of one run, new candidates, retraction, settings changes.

Every refresh here is a real one: a Beam pipeline on the DirectRunner with
the tiny offline model, real Delta commits through ``deltalake``.
"""

from __future__ import annotations

import dataclasses
import io
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import yaml
from paramine.pipelines.cli import main
from paramine.pipelines.refresh.config import RefreshConfig
from paramine.pipelines.refresh.table import (
    history,
)
from paramine.pipelines.refresh.update import refresh
from paramine.pipelines.run.preflight import unchecked_languages, warnings_before_reading
from paramine.schemas import read_pairs
from paramine.schemas.table import (
    STATE_DIR,
    open_table,
)

from tests.pipelines.refresh.helpers import (
    CES_ENG,
    FIXED_ALL,
    PIVOTS,
    VARIANTS,
    input_folder,
    make_config,
    mined_ids,
    names,
    pair_ids,
    write_shard,
)

pytestmark = pytest.mark.pipeline


def test_two_refreshes_equal_one_run_on_real_bitext(
    tmp_path: Path, tiny_model_dir: Path, shared_corpora: Path
) -> None:
    """Refresh shard A, then A and B: the pair_ids of one `paramine mine` over A and B."""
    source = shared_corpora / CES_ENG
    english = (source.parent / (source.name + ".eng")).read_text(encoding="utf-8").splitlines()
    czech = (source.parent / (source.name + ".ces")).read_text(encoding="utf-8").splitlines()
    inputs = input_folder(tmp_path)
    # Tatoeba is sorted by the Czech sentence: the halves share many pivots.
    for name, rows in (("a", slice(0, 1500)), ("b", slice(1500, 3000))):
        (tmp_path / f"{name}.en").write_text("\n".join(english[rows]) + "\n", encoding="utf-8")
        (tmp_path / f"{name}.cs").write_text("\n".join(czech[rows]) + "\n", encoding="utf-8")
    root = tmp_path / "table"
    config = RefreshConfig(
        output=str(root),
        inputs=[str(inputs)],
        src_lang="en",
        tgt_lang="cs",
        model=str(tiny_model_dir),
        options=FIXED_ALL,
        buckets=8,
    )
    for name in ("a", "b"):
        for lang in ("en", "cs"):
            os.replace(tmp_path / f"{name}.{lang}", inputs / f"{name}.{lang}")
        if name == "a":
            first = refresh(config)
            assert first.version == 1
    second = refresh(config)
    assert second.version == 2
    expected = mined_ids(tmp_path, tiny_model_dir, [inputs], ("en", "cs"), **FIXED_ALL)
    assert len(expected) > 100
    assert pair_ids(root) == expected
    # The second commit paired new candidates with old ones across the shards.
    assert second.manifest is not None
    assert second.manifest.counts["AffectedPivots"]["dropped"]["unchanged"] > 0
    assert second.manifest.accounting_errors() == []
    # Nothing new: nothing committed.
    again = refresh(config)
    assert again.noop and open_table(str(root)).version() == 2


@pytest.mark.parametrize(
    ("rival_margin", "encoded"),
    [
        # The contest's relative rule compares the group's candidates by their
        # vectors: the changed group is encoded, its pivot and three candidates.
        (0.02, 4),
        # Without it, a stored cosine stands: the new candidate and its pivot.
        ("off", 2),
    ],
)
def test_a_new_candidate_encodes_at_most_its_group(
    tmp_path: Path, tiny_model_dir: Path, rival_margin: Any, encoded: int
) -> None:
    """A new candidate of an old pivot is encoded, never the untouched groups, and paired."""
    inputs = input_folder(tmp_path, ("a", range(2)))
    options = {"pair-mode": "all", "rival-margin": rival_margin}
    config = make_config(tmp_path / "t", tiny_model_dir, [inputs], **options)
    refresh(config)
    (inputs / "b.tsv").write_text(f"{PIVOTS[0]}\tzupełnie nowe zdanie\n", encoding="utf-8")
    result = refresh(config)
    assert result.manifest is not None
    assert result.manifest.counts["encoding"]["texts_encoded"] == encoded
    table, _ = read_pairs(str(tmp_path / "t"))
    new = [
        r for r in table.to_pylist() if "zupełnie nowe zdanie" in (r["sentence_a"], r["sentence_b"])
    ]
    assert len(new) == 2  # with each old candidate of "Good morning."
    assert pair_ids(tmp_path / "t") == mined_ids(
        tmp_path,
        tiny_model_dir,
        [inputs],
        ("en", "pl"),
        threshold=-1.0,
        pair_mode="all",
        rival_margin=rival_margin,
    )


def test_cover_mode_keeps_old_pairs_and_covers_every_candidate(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    inputs = input_folder(tmp_path, "a")
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs])
    refresh(config)
    old = pair_ids(root)
    (inputs / "b.tsv").write_text(
        "".join(f"{pivot}\t{VARIANTS[3]} {i} b\n" for i, pivot in enumerate(PIVOTS)),
        encoding="utf-8",
    )
    refresh(config)
    assert old <= pair_ids(root)  # old pairs stay
    table, _ = read_pairs(str(root))
    covered = set(table.column("sentence_a").to_pylist()) | set(
        table.column("sentence_b").to_pylist()
    )
    every = {line.split("\t")[1] for f in inputs.iterdir() for line in f.read_text().splitlines()}
    assert covered == every


def test_changed_and_removed_shards_are_retracted(tmp_path: Path, tiny_model_dir: Path) -> None:
    inputs = input_folder(tmp_path, "a", "b")
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs], **{"pair-mode": "all"})
    refresh(config)
    assert any(" a" in s for s in read_pairs(str(root))[0].column("sentence_a").to_pylist())

    write_shard(inputs / "a.tsv", "changed", range(2))
    changed = refresh(config)
    assert names(changed.plan.retracted) == names(changed.plan.reasons) == ["a.tsv"]
    sentences = read_pairs(str(root))[0].column("sentence_a").to_pylist()
    assert not any(s.endswith(" a") for s in sentences)
    assert any(s.endswith(" changed") for s in sentences)

    (inputs / "a.tsv").unlink()
    removed = refresh(config)
    assert names(removed.plan.removed) == ["a.tsv"] and not removed.plan.to_mine
    assert pair_ids(root) == mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "pl"), threshold=-1.0, pair_mode="all"
    )
    state = open_table(str(root / STATE_DIR)).to_pyarrow_table()
    assert set(names(pa.table(state).column("shard").to_pylist())) == {"b.tsv"}


def test_retraction_repairs_cover(tmp_path: Path, tiny_model_dir: Path) -> None:
    """A candidate whose partner is retracted gets a new pair (cover mode)."""
    inputs = input_folder(tmp_path, ("a", range(1)), ("b", range(1, 2)), ("c", range(2, 3)))
    root = tmp_path / "t"
    config = make_config(root, tiny_model_dir, [inputs])
    refresh(config)
    (inputs / "b.tsv").unlink()
    refresh(config)
    table, _ = read_pairs(str(root))
    sentences = set(table.column("sentence_a").to_pylist()) | set(
        table.column("sentence_b").to_pylist()
    )
    assert not any(s.endswith(" b") for s in sentences)
    # Three candidates per pivot before, two left: each of them is in a pair.
    assert sum(s.endswith(" a") for s in sentences) == len(PIVOTS)
    assert sum(s.endswith(" c") for s in sentences) == len(PIVOTS)


def test_settings_change_mines_everything_again(tmp_path: Path, tiny_model_dir: Path) -> None:
    inputs = input_folder(tmp_path, "a")
    root = tmp_path / "t"
    refresh(make_config(root, tiny_model_dir, [inputs]))
    result = refresh(make_config(root, tiny_model_dir, [inputs], **{"pair-mode": "all"}))
    assert set(result.plan.reasons.values()) == {"settings changed"}
    assert names(result.plan.retracted) == ["a.tsv"]
    assert pair_ids(root) == mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "pl"), threshold=-1.0, pair_mode="all"
    )


def test_editing_the_licence_or_corpus_name_mines_nothing_again(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    # license and corpus are where a job's rows come from, not what decides
    # its pairs: they are RunSettings, outside the settings' fingerprint.
    inputs = input_folder(tmp_path, "a")
    root = tmp_path / "t"
    first = make_config(root, tiny_model_dir, [inputs], license="cc-by-2.0")
    refresh(first)
    edited = make_config(root, tiny_model_dir, [inputs], license="cc-by-4.0", corpus="tatoeba")
    assert edited.fingerprint() == first.fingerprint()
    result = refresh(edited)
    assert result.plan.reasons == {} and names(result.plan.retracted) == []
    assert (edited.running.license, edited.running.corpus) == ("cc-by-4.0", "tatoeba")


def test_a_refresh_says_what_its_checks_cannot_judge_as_mine_does(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    # Toki Pona: a code the installed registry lacks, which no detector knows.
    inputs = input_folder(tmp_path, "a")
    config = dataclasses.replace(
        make_config(tmp_path / "t", tiny_model_dir, [inputs]), tgt_lang="tok"
    )
    log = io.StringIO()
    planned = refresh(config, dry_run=True, log=log)
    said = log.getvalue().splitlines()
    unchecked = unchecked_languages(config.mining, planned.plan.to_mine)
    assert unchecked == {"language": ["tok"]}
    # The lines paramine mine prints before it reads (run/preflight.py), before the dry run stops.
    warnings = warnings_before_reading(config.mining, unchecked)
    assert len(warnings) == 2 and said[-len(warnings) - 1 : -1] == warnings
    assert "tok is not in the installed language registry" in warnings[0]
    assert "the language check cannot judge tok" in warnings[1]
    log = io.StringIO()
    committed = refresh(config, log=log)
    # The Beam job's progress goes where the caller's lines go.
    lines = log.getvalue().splitlines()
    assert any(line.startswith("paramine: ") and "read 100.0% (" in line for line in lines), lines
    assert committed.manifest is not None
    assert committed.manifest.extra.unchecked_languages == unchecked
    assert committed.manifest.counts["unchecked"] == {
        "language_unchecked.tok": committed.manifest.counts["Prefilter"]["kept"]
    }


def test_auto_threshold_records_the_cut_of_each_commit(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    inputs = input_folder(tmp_path, "a")
    root = tmp_path / "t"
    config = RefreshConfig(
        output=str(root),
        inputs=[str(inputs)],
        src_lang="en",
        tgt_lang="pl",
        model=str(tiny_model_dir),
        options={"calibration-sample": 200},
        buckets=2,
    )
    result = refresh(config)
    assert result.manifest is not None
    threshold = result.manifest.threshold
    assert threshold["mode"] != "fixed" and isinstance(threshold["value"], float)
    assert read_pairs(str(root))[1].threshold["value"] == threshold["value"]
    assert f"{round(threshold['value'], 6)}" in history(str(root))[1]


def test_a_small_refresh_is_judged_by_the_scripts_of_the_whole_table(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    """A shard too small to learn a script from is judged as one run over the table's input.

    The tables know Ladino in Hebrew only; shard a's 12 Latin lines teach the
    run Latin (stages/filter/rules/line_checks.py). Shard b's 4 Latin lines alone would
    not (``LEARN_LINES``), and were dropped as wrong_script when a refresh
    decided from its own shards.
    """
    inputs = input_folder(tmp_path, "a")
    root = tmp_path / "t"
    config = dataclasses.replace(
        make_config(root, tiny_model_dir, [inputs], **{"pair-mode": "all"}), tgt_lang="lad"
    )
    first = refresh(config)
    assert first.manifest is not None
    assert first.manifest.extra.line_checks["candidate:lad"]["scripts"]["learned"] == {"Latn": 1.0}
    write_shard(inputs / "b.tsv", "b", range(3, 4))
    log = io.StringIO()
    second = refresh(config, log=log)
    assert second.manifest is not None
    assert "wrong_script" not in second.manifest.counts["Prefilter"]["dropped"]
    side = second.manifest.extra.line_checks["candidate:lad"]
    assert side["lines"] == len(PIVOTS)
    assert side["scripts"]["judged_against"] == ["Hebr", "Latn"]
    assert side["decided_on"] == {
        "lines": 3 * len(PIVOTS) + len(PIVOTS),
        "earlier": 3 * len(PIVOTS),
    }
    assert pair_ids(root) == mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "lad"), threshold=-1.0, pair_mode="all"
    )
    # A change of settings mines every shard again, and forgets what earlier runs saw.
    again = refresh(dataclasses.replace(config, options={**config.options, "pair-mode": "cover"}))
    assert again.manifest is not None
    assert again.manifest.extra.line_checks["candidate:lad"]["decided_on"]["earlier"] == 0


def test_a_refresh_says_when_its_lines_move_the_decisions_and_mine_all_judges_again(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Four Latin Ladino lines first (dropped), then twelve: Latin is learned, the four stay out.

    The refresh says so, and ``--mine-all`` mines every shard again, to the
    pairs of one run over all the input.
    """
    inputs = input_folder(tmp_path, ("a", range(1)))
    root = tmp_path / "t"
    config = dataclasses.replace(
        make_config(root, tiny_model_dir, [inputs], **{"pair-mode": "all"}), tgt_lang="lad"
    )
    first = refresh(config)
    assert first.manifest is not None
    assert first.manifest.counts["Prefilter"]["dropped"]["wrong_script"] == len(PIVOTS)
    write_shard(inputs / "b.tsv", "b", range(1, 4))
    log = io.StringIO()
    second = refresh(config, log=log)
    assert second.manifest is not None
    side = second.manifest.extra.line_checks["candidate:lad"]
    assert side["moved"] == {"scripts": [["Hebr"], ["Hebr", "Latn"]]}
    said = log.getvalue()
    assert "decisions moved: candidate lad scripts Hebr -> Hebr, Latn" in said
    assert "refresh --mine-all judges them again" in said
    one_run = mined_ids(
        tmp_path, tiny_model_dir, [inputs], ("en", "lad"), threshold=-1.0, pair_mode="all"
    )
    assert pair_ids(root) < one_run  # shard a's lines were dropped by the old decision
    # `paramine refresh CONFIG --mine-all`, as the line says.
    path = tmp_path / "refresh.yaml"
    record = {k: getattr(config, k) for k in ("output", "inputs", "src_lang", "tgt_lang", "model")}
    path.write_text(yaml.safe_dump({**record, "options": config.options, "buckets": 4}))
    assert main(["refresh", str(path), "--mine-all"]) == 0
    said = capsys.readouterr().err
    assert "shards to mine: 2 (2 requested)" in said and "committed version 3" in said
    again = read_pairs(str(root))[1]
    assert names(again.extra.refresh["retracted"]) == ["a.tsv", "b.tsv"]
    assert again.extra.line_checks["candidate:lad"]["moved"] == {}
    assert pair_ids(root) == one_run
