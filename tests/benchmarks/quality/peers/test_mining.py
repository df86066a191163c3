"""benchmarks/quality/peers/mining.py: the gold groups mined pairs are judged by, and its sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.quality.peers import mining


def test_a_pair_is_right_when_both_translate_one_pivot_in_any_language():
    gold = mining.Gold()
    gold.add("eng", "I'm tired.", "Jestem zmęczony.")
    gold.add("eng", "I'm tired.", "Jestem zmęczona.")
    gold.add("deu", "Ich bin müde.", "Jestem zmęczona.")
    gold.add("deu", "Ich bin müde.", "Zmęczyłam się.")
    gold.add("jpn_Hani", "私は疲れた。", "Padam z nóg.")
    gold.add("jpn", "私は疲れた。", "Jestem wykończony.")
    assert gold.right("Jestem zmęczony.", "Jestem zmęczona.")  # the English pivot
    assert gold.right("Jestem zmęczona.", "Zmęczyłam się.")  # the German pivot
    # Only through a shared sentence: not a pair of one pivot.
    assert not gold.right("Jestem zmęczony.", "Zmęczyłam się.")
    # jpn and jpn_Hani hold the same Japanese sentences: one pivot.
    assert gold.right("Padam z nóg.", "Jestem wykończony.")
    component = gold.components()
    assert component["Jestem zmęczony."] == component["Zmęczyłam się."]
    assert component["Jestem zmęczony."] != component["Padam z nóg."]

    pairs = [("Jestem zmęczony.", "Jestem zmęczona."), ("Jestem zmęczony.", "Zmęczyłam się.")]
    rows = [("en", "I'm tired."), ("en", "I'm tired.")]
    figures = mining.evaluate(gold, pairs, rows)
    assert figures["precision"] == 0.5
    assert figures["right_by_components"] == 2
    # Six gold candidates in groups of two: two of them found under their own row.
    assert figures["eligible"] == 6
    # Under its row's pivot: the two English ones ("Zmęczyłam się." is under the wrong row).
    assert figures["recall"] == pytest.approx(2 / 6)
    assert figures["precision_row_pivot"] == 0.5
    knn = mining.evaluate(gold, pairs)
    assert knn["recall"] is None
    assert knn["recall_any_row"] == pytest.approx(2 / 6)


def test_the_lexical_set_leaves_replaced_lines_out_of_the_gold(shared_corpora, tmp_path):
    qset = mining.build_set("eng-pol-lexical", shared_corpora, tmp_path, sample=200)
    pivots = Path(qset.inputs[0] + ".en").read_text(encoding="utf-8").splitlines()
    assert len(pivots) == qset.lines == 200
    replaced = int(qset.note.split(" of ")[0].replace(",", ""))
    assert 0 < replaced <= 40
    gold_lines = sum(len(g) for g in qset.gold.groups.values())
    assert gold_lines <= 200 - replaced
