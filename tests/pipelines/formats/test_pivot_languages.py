"""Several pivot languages in one run: each input says its own, and groups never mix them.

Real slices of the Tatoeba test sets with Polish on one side (x-pol), copied
into ``tmp_path``, mined by real Beam pipelines on the FnApiRunner with the
tiny offline model. Every pair passes ``--threshold -1`` and the contest is
off, so which pairs are written depends on grouping and pairing alone, not
on the random model's cosines.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import apache_beam as beam
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from paramine.pipelines.core.origins import Origins
from paramine.pipelines.formats import ReaderOptions, read_shard, resolve_inputs
from paramine.pipelines.run.mine import run
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.stages.group.group_by_pivot import GroupByPivot
from paramine.schemas.errors import InputError, UsageError
from paramine.schemas.records import AlignedPair

TEST_SETS = "tatoeba_test_v2021-08-07"
STEM = "tatoeba-test-v2021-08-07"
#: Every pair passes; no contest: the pairs depend on grouping and pairing only.
ALL_PASS = ("--threshold", "-1", "--rival-margin", "off", "--quiet")

#: The pair_ids that paramine wrote for the first 300 lines of Tatoeba epo-pol
#: (--src-lang eo, ALL_PASS) before pivot languages were part of a group's key.
#: The 4-candidate group makes the cover's seeded shuffle count.
EPO_POL_300_COVER = [
    "1c0648705f191fe3",
    "1d453035ee88f700",
    "55317fcb029eb8ec",
    "5c065027ffec288b",
    "6ade77728a2e9ac6",
    "7a50374930c011fb",
    "7e424787eab39f53",
    "cfcfd7356c587a4b",
]


def lines_of(shared_corpora: Path, folder: str, code: str, n: int) -> list[str]:
    text = (shared_corpora / TEST_SETS / folder / f"{STEM}.{code}").read_text(encoding="utf-8")
    return text.split("\n")[:n]


def write_moses(
    shared_corpora: Path, folder: Path, pair: str, pivot_code: str, n: int, extra: tuple = ()
) -> Path:
    """The first ``n`` lines of an x-pol test set as ``folder/STEM.<code>`` + ``.pol``."""
    folder.mkdir(parents=True, exist_ok=True)
    sides = {
        code: lines_of(shared_corpora, f"x-pol/{pair}", code, n) for code in (pivot_code, "pol")
    }
    for pivot, candidate in extra:
        sides[pivot_code].append(pivot)
        sides["pol"].append(candidate)
    for code, lines in sides.items():
        (folder / f"{STEM}.{code}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / STEM


def pair_rows(output: Path) -> list[dict]:
    return pq.read_table(output / "pairs").to_pylist()


def mine(tmp_path: Path, model: Path, *args: str, name: str = "out") -> tuple[Path, object]:
    output = tmp_path / name
    manifest = run([*args, "--model", str(model), "--output", str(output), *ALL_PASS])
    return output, manifest


@pytest.mark.pipeline
def test_two_pivot_languages_in_one_run_never_share_a_group(
    shared_corpora: Path, tmp_path: Path, tiny_model_dir: Path
) -> None:
    """German Moses files and an English Tatoeba TSV, mined together into one Polish dataset.

    "Gift." is a pivot in both: German (poison, "Trucizna.") and English (a
    present, "Prezent."). By its text alone it would be one pivot with two
    candidates, a pair; as two pivots each has one candidate and makes none.
    """
    german = write_moses(
        shared_corpora, tmp_path / "deu-pol", "deu-pol", "deu", 200, (("Gift.", "Trucizna."),)
    )
    tatoeba = (shared_corpora / TEST_SETS / "eng-pol" / "test.txt").read_text(encoding="utf-8")
    english = tmp_path / "eng-pol.txt"
    english.write_text(
        "\n".join([*tatoeba.split("\n")[:300], "eng\tpol\tGift.\tPrezent."]) + "\n",
        encoding="utf-8",
    )
    output, manifest = mine(
        tmp_path, tiny_model_dir, str(german), str(english), "--src-lang", "auto"
    )

    rows = pair_rows(output)
    assert {row["pivot_lang"] for row in rows} == {"de", "en"}
    assert "Gift." not in {row["pivot_sentence"] for row in rows}
    # Every pair's two sentences translate its pivot in its own language.
    aligned = defaultdict(set)
    pivots = german.parent.joinpath(f"{STEM}.deu").read_text(encoding="utf-8").splitlines()
    targets = german.parent.joinpath(f"{STEM}.pol").read_text(encoding="utf-8").splitlines()
    for pivot, candidate in zip(pivots, targets, strict=True):
        aligned[("de", pivot.casefold())].add(candidate)
    for line in english.read_text(encoding="utf-8").splitlines():
        _, _, pivot, candidate = line.split("\t")
        aligned[("en", pivot.casefold())].add(candidate)
    for row in rows:
        candidates = aligned[(row["pivot_lang"], row["pivot_sentence"].casefold())]
        assert {row["sentence_a"], row["sentence_b"]} <= candidates, row
    # 6 German groups in the slice, 7 English ones (one of three candidates).
    assert len({(r["pivot_lang"], r["pivot_sentence"]) for r in rows}) == 13

    assert manifest.accounting_errors() == []
    assert manifest.counts["ReadBitext"]["in"] == 502
    assert {(i.format, i.pivot_lang) for i in manifest.inputs} == {
        ("moses", "de"),
        ("tsv", "auto"),
    }
    stats = json.loads((output / "stats.json").read_text(encoding="utf-8"))
    assert set(stats["languages"]["pivots"]) == {"de", "en"}
    card = (output / "README.md").read_text(encoding="utf-8")
    assert "pivots in 2 languages (`de`, `en`)" in card
    assert "language:\n- pl\n- de\n- en\n" in card


@pytest.mark.pipeline
def test_one_pivot_language_mines_the_pairs_it_mined_before(
    shared_corpora: Path, tmp_path: Path, tiny_model_dir: Path
) -> None:
    """One pivot language: the same pair_ids as before the change, and with ``auto``."""
    prefix = write_moses(shared_corpora, tmp_path / "epo-pol", "epo-pol", "epo", 300)
    ids = {}
    for spec in ("eo", "auto"):
        output, _ = mine(tmp_path, tiny_model_dir, str(prefix), "--src-lang", spec, name=spec)
        ids[spec] = sorted(row["pair_id"] for row in pair_rows(output))
    assert ids["eo"] == EPO_POL_300_COVER
    assert ids["auto"] == ids["eo"]


@pytest.mark.pipeline
@pytest.mark.parametrize("entries", [False, True], ids=["records", "entries"])
def test_same_text_in_two_languages_is_two_pivots(entries: bool) -> None:
    """GroupByPivot keys by language and text; script subtags are one language.

    The same from the prefilter's entries, whose key holds the language part
    only, as from records.
    """
    pairs = [
        AlignedPair("Gift.", "Trucizna.", "de", "pl", "c", "de", 1),
        AlignedPair("Gift.", "Prezent.", "en", "pl", "c", "en", 1),
        AlignedPair("Hallo.", "Cześć.", "de", "pl", "c", "de", 2),
        AlignedPair("Hallo.", "Witaj.", "de", "pl", "c", "de", 3),
        # The same Japanese sentence from Tatoeba's jpn and jpn_Hira sets.
        AlignedPair("猫です。", "To kot.", "ja", "pl", "c", "ja", 1),
        AlignedPair("猫です。", "Jest kotem.", "ja-hira", "pl", "c", "ja-hira", 1),
    ]
    with TestPipeline(runner="FnApiRunner") as pipeline:
        origins = Origins({p.shard for p in pairs}, ["c"]) if entries else None
        given = [origins.entry(p) for p in pairs] if origins else pairs
        grouped = pipeline | beam.Create(given) | GroupByPivot(origins=origins)
        assert_that(
            grouped.kept | beam.Map(lambda p: (p.pivot_lang, p.candidate)),
            equal_to(
                [("de", "Cześć."), ("de", "Witaj."), ("ja", "To kot."), ("ja-hira", "Jest kotem.")]
            ),
        )


@pytest.mark.pipeline
def test_a_moses_file_without_the_target_language_is_one_line_naming_it(
    shared_corpora: Path, tmp_path: Path
) -> None:
    prefix = write_moses(shared_corpora, tmp_path / "deu-pol", "deu-pol", "deu", 20)
    german = f"{prefix}.deu"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "paramine.pipelines.cli", "mine", german),
            *("--src-lang", "auto", "--tgt-lang", "cs", "--output", str(tmp_path / "o")),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if "apitools" not in line]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"paramine: error: {german}: a Moses file in de (its suffix .deu)")
    assert "(its other sides: .pol)" in lines[0] and "--tgt-lang cs" in lines[0]
    assert not (tmp_path / "o").exists()
    # In a directory, the same file is named when nothing else is left to read.
    with pytest.raises(InputError, match=r"no bitext to read in .*deu-pol \(file://.*\.deu: a "):
        resolve_inputs([str(tmp_path / "deu-pol")], "auto", "cs")


def test_each_input_says_its_pivot_language(shared_corpora: Path, tmp_path: Path) -> None:
    """Moses suffixes (either order of folder name), a list, and the TSV's language columns."""
    write_moses(shared_corpora, tmp_path / "deu-pol", "deu-pol", "deu", 5)
    write_moses(shared_corpora, tmp_path / "pol-ukr", "pol-ukr", "ukr", 5)
    write_moses(shared_corpora, tmp_path / "jpn_Hira-pol", "jpn_Hira-pol", "jpn_Hira", 5)
    every = resolve_inputs([str(tmp_path)], "auto", "pl")
    assert sorted(s.pivot_lang for s in every) == ["de", "ja-hira", "uk"]
    assert all(s.companion.endswith(f"{STEM}.pol") for s in every)
    # A list: the Japanese set's Polish side has no partner, as with one --src-lang.
    chosen = resolve_inputs([str(tmp_path)], "uk, de", "pl")
    assert sorted((s.format, s.pivot_lang) for s in chosen) == [
        ("moses", "de"),
        ("moses", "uk"),
        ("unpaired", "de,uk"),
    ]

    tsv = tmp_path / "mixed.tsv"
    tsv.write_text(
        "deu\tpol\tHallo.\tCześć.\npol\tepo\tCześć.\tSaluton.\neng\tces\tHi.\tAhoj.\n",
        encoding="utf-8",
    )
    (shard,) = resolve_inputs([str(tsv)], "auto", "pl")
    read = list(read_shard(shard, ReaderOptions()))
    assert [(r.pivot_lang, r.pivot, r.candidate) for r in read[:2]] == [
        ("de", "Hallo.", "Cześć."),
        ("eo", "Saluton.", "Cześć."),
    ]
    assert read[2].reason == "language_mismatch"


def test_inputs_that_cannot_say_their_language_are_refused(tmp_path: Path) -> None:
    two_columns = tmp_path / "plain.tsv"
    two_columns.write_text("Hello.\tCześć.\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"plain\.tsv: with --src-lang auto .* has 2 columns"):
        resolve_inputs([str(two_columns)], "auto", "pl")
    tmx = tmp_path / "memory.tmx"
    tmx.write_text("<tmx version='1.4'><body></body></tmx>\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"memory\.tmx: .* a tmx file is read with one"):
        resolve_inputs([str(tmx)], "de,en", "pl")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"src_lang": "de,pl"}, "are the same language"),
        ({"src_lang": "auto,de"}, r"--src-lang 'auto,de': give one language"),
        ({"src_lang": "de,,en"}, r"--src-lang 'de,,en'"),
        ({"src_lang": "auto", "tsv_columns": "1,2"}, r"--tsv-columns with --src-lang auto"),
        ({"src_lang": "de,xx"}, r"unknown language 'xx'"),
    ],
)
def test_bad_pivot_languages_are_usage_errors(settings: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        MiningSettings(**settings)


def test_pivot_language_lists_are_kept_tidy() -> None:
    assert MiningSettings(src_lang="de, en").src_lang == "de,en"
    assert MiningSettings(src_lang="AUTO").src_lang == "auto"
    assert MiningSettings(src_lang="eng").src_lang == "eng"


@pytest.mark.pipeline
def test_a_refresh_keeps_pivot_languages_apart(
    shared_corpora: Path, tmp_path: Path, tiny_model_dir: Path
) -> None:
    """German first, then English: the table holds what one run over both writes.

    The English "Gift." arrives in the second commit; keyed by its text
    alone it would join the German "Gift." already in the table.
    """
    from paramine.pipelines.refresh.config import RefreshConfig
    from paramine.pipelines.refresh.update import refresh
    from paramine.schemas import read_pairs

    inputs = tmp_path / "in"
    write_moses(
        shared_corpora, inputs / "deu-pol", "deu-pol", "deu", 200, (("Gift.", "Trucizna."),)
    )
    options = {"threshold": -1.0, "rival-margin": "off", "pair-mode": "all"}
    root = tmp_path / "table"
    config = RefreshConfig(
        output=str(root),
        inputs=[str(inputs)],
        src_lang="auto",
        tgt_lang="pl",
        model=str(tiny_model_dir),
        options=options,
        buckets=4,
    )
    assert refresh(config).version == 1
    tatoeba = (shared_corpora / TEST_SETS / "eng-pol" / "test.txt").read_text(encoding="utf-8")
    (inputs / "eng-pol.txt").write_text(
        "\n".join([*tatoeba.split("\n")[:300], "eng\tpol\tGift.\tPrezent."]) + "\n",
        encoding="utf-8",
    )
    second = refresh(config)
    assert second.version == 2 and second.manifest is not None
    assert second.manifest.accounting_errors() == []

    table, _ = read_pairs(str(root))
    rows = table.to_pylist()
    assert {row["pivot_lang"] for row in rows} == {"de", "en"}
    assert "Gift." not in {row["pivot_sentence"] for row in rows}
    one_run = tmp_path / "one-run"
    run(
        [
            *(str(inputs), "--src-lang", "auto", "--model", str(tiny_model_dir)),
            *("--output", str(one_run), "--threshold", "-1", "--rival-margin", "off"),
            *("--pair-mode", "all", "--quiet"),
        ]
    )
    assert {row["pair_id"] for row in rows} == {row["pair_id"] for row in pair_rows(one_run)}
