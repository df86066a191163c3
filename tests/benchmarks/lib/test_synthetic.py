"""The synthetic subtitles-like bitext of benchmarks/lib/synthetic.py: seeded, Zipf, short lines."""

from __future__ import annotations

import collections

import pytest

from benchmarks.lib import synthetic
from tests.benchmarks.harness import key_values, run_script


@pytest.fixture(scope="module")
def bitext_20k(tmp_path_factory):
    """20,000 pairs with seed 0: the file and the summary the writer printed."""
    path = tmp_path_factory.mktemp("synthetic") / "bitext.tsv"
    summary = synthetic.write_tsv(path, 20_000, seed=0)
    rows = [line.rstrip("\n").split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    return path, summary, rows


@pytest.mark.slow
def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path, bitext_20k):
    path, _, _ = bitext_20k
    again, other = tmp_path / "again.tsv", tmp_path / "other.tsv"
    synthetic.write_tsv(again, 20_000, seed=0)
    synthetic.write_tsv(other, 20_000, seed=1)
    assert again.read_bytes() == path.read_bytes()
    assert other.read_bytes() != path.read_bytes()


def test_every_line_is_two_nonempty_columns(bitext_20k):
    _, summary, rows = bitext_20k
    assert len(rows) == summary["pairs"] == 20_000
    assert all(len(row) == 2 and row[0] and row[1] for row in rows)
    assert all(row[0] != row[1] for row in rows)


def test_pivots_repeat_by_zipf(bitext_20k):
    _, summary, rows = bitext_20k
    counts = collections.Counter(pivot for pivot, _ in rows)
    top = [n for _, n in counts.most_common(10)]
    # A head of pivots seen hundreds of times, falling off with rank...
    assert top[0] >= 500
    assert top[0] > 2 * top[2] and top[2] > top[9]
    # ...and a long tail: most distinct pivots are seen once.
    seen_once = sum(1 for n in counts.values() if n == 1)
    assert seen_once / len(counts) > 0.8
    # The writer's summary counts by pivot id, the same shape.
    assert summary["top_pivot_count"] >= 500
    assert summary["pivots_seen_once_share"] > 0.8
    assert 0.3 < summary["pairs_with_repeated_pivot_share"] < 0.7


def test_each_pivot_has_one_to_four_translations():
    bitext = synthetic.Bitext(20_000, seed=0)
    sizes = collections.Counter(len(bitext.translations(i)[1]) for i in range(2_000))
    assert set(sizes) <= {1, 2, 3, 4}
    assert sizes[1] > sizes[2] > sizes[3] > 0 and sizes[4] > 0
    _, variants = bitext.translations(7)
    assert len(set(variants)) == len(variants)


def test_repeated_pivots_get_several_translations_in_the_file(bitext_20k):
    _, _, rows = bitext_20k
    candidates = collections.defaultdict(set)
    for pivot, candidate in rows:
        candidates[pivot].add(candidate)
    counts = collections.Counter(pivot for pivot, _ in rows)
    head = [pivot for pivot, _ in counts.most_common(100)]
    assert sum(1 for p in head if len(candidates[p]) >= 2) >= 20
    # A repeated pivot with several translations mostly gets its usual one.
    first = next(p for p in head if len(candidates[p]) >= 2)
    usual = collections.Counter(c for p, c in rows if p == first).most_common(1)[0][1]
    assert usual > counts[first] / len(candidates[first])


def test_lengths_are_subtitle_like(bitext_20k):
    _, _, rows = bitext_20k
    words = sorted(len(pivot.split()) for pivot, _ in rows)
    assert words[0] >= 1 and words[-1] <= 60
    assert 3 <= words[len(words) // 2] <= 8
    assert sum(1 for n in words if n <= 15) / len(words) > 0.9
    assert words[-1] > 15  # a long tail
    ratios = [
        (len(c.split()) + 1) / (len(p.split()) + 1) for p, c in rows
    ]  # within the prefilter's default 2.5
    assert max(max(ratios), 1 / min(ratios)) <= 2.5


@pytest.mark.pipeline
def test_the_script_writes_the_file_and_prints_its_shape(tmp_path):
    out = tmp_path / "subtitles.tsv"
    done = run_script("benchmarks.lib.synthetic", 2_000, out, "--seed", 3, "--unique-share", 0.2)
    printed = key_values(done.stderr.strip().splitlines()[-1])
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert printed["pairs"] == len(rows) == 2_000
    assert all(len(row) == 2 and row[0] and row[1] for row in rows)
    # The printed shape is the file's: distinct pivots, the most repeated one.
    counts = collections.Counter(pivot for pivot, _ in rows)
    assert printed["distinct_pivots"] == len(counts)
    assert printed["top_pivot_count"] == max(counts.values())
    # A smaller --unique-share than the default's half: more pairs repeat a pivot.
    default = synthetic.write_tsv(tmp_path / "default.tsv", 2_000, seed=3)
    assert printed["pairs_with_repeated_pivot_share"] > default["pairs_with_repeated_pivot_share"]
    assert printed["seconds"] >= 0
    # The script writes what write_tsv writes for the same arguments.
    again = tmp_path / "again.tsv"
    synthetic.write_tsv(again, 2_000, seed=3, shape=synthetic.Shape(unique_share=0.2))
    assert again.read_bytes() == out.read_bytes()
