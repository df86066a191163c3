"""benchmarks/quality/pivot_sets.py: several Tatoeba pairs with one candidate language, as one."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.quality.pivot_sets import corrupted_sets, find_sets, write_sets

STEM = "tatoeba-test-v2021-08-07"


def write_pair(folder: Path, sides: dict[str, list[str]]) -> Path:
    """A Moses pair ``<stem>.<suffix>`` per side, with Tatoeba's extra files beside."""
    folder.mkdir(parents=True)
    for suffix, lines in sides.items():
        (folder / f"{STEM}.{suffix}").write_text("".join(f"{x}\n" for x in lines), "utf-8")
        (folder / f"{STEM}.{suffix}.labels").write_text("x\n" * len(lines), "utf-8")
    (folder / "test.txt").write_text("not a side\n", "utf-8")
    return folder


@pytest.fixture
def x_pol(tmp_path: Path) -> Path:
    """x-pol's layout: jpn-pol and jpn_Hira-pol share a pivot; pol-cmn_Hans has Polish first."""
    x = tmp_path / "x-pol"
    japanese = {"jpn": ["私は学生です。", "猫です。"], "pol": ["Jestem studentem.", "To kot."]}
    write_pair(x / "jpn-pol", japanese)
    write_pair(x / "jpn_Hira-pol", {"jpn_Hira": ["私は学生です。"], "pol": ["Jestem uczniem."]})
    write_pair(x / "pol-cmn_Hans", {"cmn_Hans": ["我是学生。"], "pol": ["Jestem studentką."]})
    return x


def test_a_directory_of_pairs_stands_for_them_and_the_pivot_side_names_its_language(
    x_pol: Path, tmp_path: Path
):
    english = {"eng": ["I am a student."], "pol": ["Jestem studentem."]}
    eng = write_pair(tmp_path / "eng-pol", english)
    sets = find_sets([x_pol, eng], "pol")
    assert [(s.name, s.pivot_suffix, s.pivot_lang) for s in sets] == [
        ("jpn-pol", "jpn", "ja"),
        ("jpn_Hira-pol", "jpn_Hira", "ja-hira"),
        ("pol-cmn_Hans", "cmn_Hans", "zh-hans"),
        ("eng-pol", "eng", "en"),
    ]
    assert all(s.candidate_path.name == f"{STEM}.pol" for s in sets)
    with pytest.raises(SystemExit, match=r"no \.ces file"):
        find_sets([x_pol], "ces")
    with pytest.raises(SystemExit, match="two pairs with one directory name"):
        find_sets([x_pol, x_pol], "pol")


def test_gold_groups_are_keyed_as_paramine_groups_pivots(x_pol: Path, tmp_path: Path):
    written, corpus = corrupted_sets(find_sets([x_pol], "pol"), "pol", "random", 0.0, 13)
    assert corpus.pivot_lang == "auto" and corpus.lang == "pl"
    assert corpus.pivot_langs == ["ja", "ja", "ja-hira", "zh-hans"]
    assert corpus.sets == ["jpn-pol", "jpn-pol", "jpn_Hira-pol", "pol-cmn_Hans"]
    # jpn and jpn_Hira hold the same sentence: one group, keyed on the language part.
    assert corpus.originals[("ja", "私は学生です。")] == {"Jestem studentem.", "Jestem uczniem."}
    assert corpus.originals[("zh", "我是学生。")] == {"Jestem studentką."}
    folder = write_sets(written, tmp_path / "sets")
    assert (folder / "pol-cmn_Hans" / f"{STEM}.cmn_Hans").read_text("utf-8") == "我是学生。\n"
    assert sorted(p.name for p in (folder / "jpn_Hira-pol").iterdir()) == [
        f"{STEM}.jpn_Hira",
        f"{STEM}.pol",
    ]


@pytest.mark.parametrize("noise", ["random", "lexical"])
def test_a_pair_in_several_sets_is_replaced_in_all_of_them_or_in_none(tmp_path: Path, noise: str):
    # jpn_Hira's pairs are all in jpn (as in Tatoeba): one misalignment, in every copy.
    japanese = [f"これは{n}番目の文です。" for n in range(40)]
    polish = [f"To jest zdanie numer {n}." for n in range(40)]
    write_pair(tmp_path / "x" / "jpn-pol", {"jpn": japanese, "pol": polish})
    write_pair(tmp_path / "x" / "jpn_Hira-pol", {"jpn_Hira": japanese[::2], "pol": polish[::2]})
    written, corpus = corrupted_sets(find_sets([tmp_path / "x"], "pol"), "pol", noise, 0.5, 13)
    (_, _, jpn), (_, _, hira) = written
    assert hira == jpn[::2]
    assert corpus.replaced[40:] == corpus.replaced[:40:2]
    assert 10 <= sum(corpus.replaced[:40]) <= 30  # the first set's own noise, at its rate
