"""The real-sentence bitext of benchmarks/lib/real_sentences.py: corpus pairs, seeded, Zipf."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from benchmarks.lib import real_sentences
from tests.benchmarks.harness import TATOEBA_STEM, key_values, run_script, sample_pair
from tests.paths import TATOEBA

ROWS = 5_000


@pytest.fixture(scope="module")
def tatoeba(shared_corpora: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Tatoeba folder of 300 lines of eng-pol and 200 of pol-rus, laid out like the real one."""
    root = tmp_path_factory.mktemp("corpora") / TATOEBA.name
    sample_pair(TATOEBA / "eng-pol", root / "eng-pol", 300, "eng", "pol")
    sample_pair(TATOEBA / "x-pol" / "pol-rus", root / "x-pol" / "pol-rus", 200, "rus", "pol")
    return root


def aligned_lines(root: Path, folder: str, pivot: str, candidate: str) -> set[tuple[str, str]]:
    """The ``(pivot, candidate)`` lines of a pair's two files."""
    sides = [
        (root / folder / f"{TATOEBA_STEM}.{suffix}").read_text(encoding="utf-8").splitlines()
        for suffix in (pivot, candidate)
    ]
    return set(zip(*sides, strict=True))


def read_rows(path: Path) -> list[tuple[str, str]]:
    rows = [tuple(line.split("\t")) for line in path.read_text(encoding="utf-8").splitlines()]
    assert all(len(row) == 2 for row in rows)
    return rows  # type: ignore[return-value]


def test_same_seed_same_bytes_other_seed_other_bytes(tatoeba: Path, tmp_path: Path) -> None:
    paths = [tmp_path / name for name in ("first.tsv", "again.tsv", "other.tsv")]
    for path, seed in zip(paths, (0, 0, 1), strict=True):
        real_sentences.write_tsv(path, ROWS, seed, root=tatoeba)
    first, again, other = (path.read_bytes() for path in paths)
    assert first == again
    assert other != first


def test_every_row_is_an_aligned_corpus_line_and_pivots_repeat(
    tatoeba: Path, tmp_path: Path
) -> None:
    path = tmp_path / "real.tsv"
    shape = real_sentences.Shape(joined_share=0.0)
    summary = real_sentences.write_tsv(path, ROWS, 0, "eng-pol", shape, root=tatoeba)
    rows = read_rows(path)
    corpus = aligned_lines(tatoeba, "eng-pol", "eng", "pol")
    assert len(rows) == summary["pairs"] == ROWS
    assert set(rows) <= corpus
    # Pivots repeat by Zipf: a head seen hundreds of times, the rank after it about half as often.
    counts = collections.Counter(pivot for pivot, _ in rows)
    assert len(counts) < len(rows) // 10
    top = [n for _, n in counts.most_common(3)]
    assert top[0] >= 500 and top[0] > 1.5 * top[1] > top[2]
    assert summary["distinct_pivots"] == len(counts)
    assert summary["top_pivot_count"] == top[0]
    # A repeated pivot takes each of its translations in the corpus.
    candidates = collections.defaultdict(set)
    for pivot, candidate in rows:
        candidates[pivot].add(candidate)
    head = counts.most_common(1)[0][0]
    assert candidates[head] == {c for p, c in corpus if p == head}
    assert len(candidates[head]) >= 2


def test_joined_rows_are_two_aligned_lines_and_their_pivots_are_fresh(
    tatoeba: Path, tmp_path: Path
) -> None:
    path = tmp_path / "real.tsv"
    summary = real_sentences.write_tsv(path, ROWS, 0, "eng-pol", root=tatoeba)
    rows = read_rows(path)
    corpus = aligned_lines(tatoeba, "eng-pol", "eng", "pol")
    pivots = {p for p, _ in corpus}
    joined = [row for row in rows if row not in corpus]
    assert 0.45 < len(joined) / ROWS < 0.55 and len(joined) == summary["joined_pairs"]
    for pivot, candidate in joined:
        # Some split at a space gives two corpus pivots whose candidates join the same way.
        splits = [
            (pivot[:i], pivot[i + 1 :])
            for i, char in enumerate(pivot)
            if char == " " and pivot[:i] in pivots and pivot[i + 1 :] in pivots
        ]
        assert any(
            (a, candidate[: len(ca)]) in corpus and (b, candidate[len(ca) + 1 :]) in corpus
            for a, b in splits
            for ca in {c for p, c in corpus if p == a}
        ), (pivot, candidate)
    # The distinct lines grow past the corpus's, as a dump's do.
    assert len({p for p, _ in rows}) > len(pivots)
    assert summary["pivots_seen_once_share"] > 0.9


def test_a_pair_is_found_whichever_side_its_folder_names_first(tatoeba: Path) -> None:
    corpus = real_sentences.Corpus.read("rus-pol", root=tatoeba)
    assert set(corpus.lines) == aligned_lines(tatoeba, "x-pol/pol-rus", "rus", "pol")
    assert real_sentences.mine_languages("rus-pol") == ("ru", "pl")
    assert real_sentences.mine_languages("eng-zho") == ("en", "zh")
    with pytest.raises(ValueError, match=r"'eng-xyz'.*it has eng-pol, pol-rus"):
        real_sentences.Corpus.read("eng-xyz", root=tatoeba)
    with pytest.raises(ValueError, match="PIVOT-CANDIDATE"):
        real_sentences.split_pair("eng")


@pytest.mark.pipeline
def test_the_script_writes_the_file_and_prints_its_shape(tatoeba: Path, tmp_path: Path) -> None:
    out = tmp_path / "real.tsv"
    done = run_script(
        "benchmarks.lib.real_sentences", 2_000, out, "--seed", 3, "--corpora", tatoeba
    )
    printed = key_values(done.stderr.strip().splitlines()[-1])
    assert printed["pairs"] == len(read_rows(out)) == 2_000
    assert printed["corpus_lines"] == 300
    again = tmp_path / "again.tsv"
    real_sentences.write_tsv(again, 2_000, seed=3, root=tatoeba)
    assert again.read_bytes() == out.read_bytes()
