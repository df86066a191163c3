"""Tests of evaluation suites: the suite file, the readers, the probes, the table and the CLI.

All data is hand-made in tmp_path; vectors come from a lookup table (so the
probes' answers are known), from random unit vectors, or from the tiny model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from paramine.encoders.evaluation import probes
from paramine.encoders.evaluation.suite import (
    DATA_ENV,
    builtin_suites,
    check_files,
    load_suite,
    read_task,
    resolve_data_root,
)
from paramine.encoders.evaluation.suite_eval import (
    model_encoder,
    random_encoder,
    run_suite,
    suite_table,
)
from paramine.pipelines.cli import main as cli_main
from paramine.schemas.errors import InputError, UsageError


def main(argv: list[str]) -> int:
    """``paramine evaluate ARGV`` through the CLI's one error boundary."""
    return cli_main(["evaluate", *argv])


PAPER_ORDER = ["PPC", "CR-H", "CR-M", "CDSC-E", "SICK-E", "CDSC-R", "SICK-R", "8TAGS"]
DIM = 8


# ------------------------------------------------------------ toy data


def toy_vectors(n: int, seed: int) -> dict[str, np.ndarray]:
    """``n`` sentences ``s<seed>-<i>`` with Gaussian vectors; ``s0``'s first coordinate
    is kept away from 0, so its sign separates classes with a margin."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, DIM)).astype("float32")
    x[:, 0] = np.sign(x[:, 0]) * (1.0 + np.abs(x[:, 0]))
    return {f"s{seed}-{i}": row for i, row in enumerate(x)}


def lookup(table: dict[str, np.ndarray]):
    def encode(texts: list[str]) -> np.ndarray:
        return np.stack([table[text] for text in texts])

    return encode


def write_label_text(path: Path, rows: list[tuple[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{label} {text}\n" for label, text in rows), encoding="utf-8")


def write_tsv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["\t".join(header), *("\t".join(row) for row in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


SUITE_YAML = """\
name: toy
tasks:
  - {name: ONE, kind: classify, format: label_text,
     train: one/train.txt, dev: one/dev.txt, test: one/test.txt}
  - name: PAIR
    kind: pair_classify
    format: tsv
    columns: {sentence1: a, sentence2: b, label: gold}
    train: pair/train.tsv
    dev: pair/dev.tsv
    test: pair/test.tsv
  - name: REL
    kind: relatedness
    format: tsv
    columns: {sentence1: a, sentence2: b, score: score}
    train: pair/train.tsv
    dev: pair/dev.tsv
    test: pair/test.tsv
"""


def make_toy_suite(root: Path, shuffle: bool = False, sizes=(600, 200, 400)) -> dict:
    """A three-task suite whose labels are linear in the toy vectors (or shuffled).

    ONE: the sign of x[0]. PAIR: the sign of u[0] * v[0] (a coordinate of u*v).
    REL: a score in [0, 5] rising with u[1] * v[1]. Returns the vector table.
    """
    rng = np.random.default_rng(7)
    table: dict[str, np.ndarray] = {}
    for seed, (split, n) in enumerate(zip(("train", "dev", "test"), sizes, strict=True)):
        vectors = toy_vectors(2 * n, seed)
        table.update(vectors)
        names = list(vectors)
        single = [("pos" if vectors[t][0] > 0 else "neg", t) for t in names[:n]]
        pairs = []
        for i in range(n):
            a, b = names[i], names[(i * 7 + 3) % (2 * n)]
            label = "same" if vectors[a][0] * vectors[b][0] > 0 else "other"
            score = float(np.clip(2.5 + 1.5 * vectors[a][1] * vectors[b][1], 0, 5))
            pairs.append([a, b, label, f"{score:.2f}"])
        if shuffle:
            labels = [label for label, _ in single]
            rng.shuffle(labels)
            single = [(label, t) for label, (_, t) in zip(labels, single, strict=True)]
            golds = [[p[2], p[3]] for p in pairs]
            rng.shuffle(golds)
            pairs = [[p[0], p[1], *g] for p, g in zip(pairs, golds, strict=True)]
        write_label_text(root / "one" / f"{split}.txt", single)
        write_tsv(root / "pair" / f"{split}.tsv", ["a", "b", "gold", "score"], pairs)
    (root / "toy.yaml").write_text(SUITE_YAML, encoding="utf-8")
    return table


# ------------------------------------------------------------ the suite file


def test_builtin_pl_suite_has_the_papers_eight_tasks_in_order() -> None:
    assert "pl" in builtin_suites()
    suite = load_suite("pl")
    assert [t.name for t in suite.tasks] == PAPER_ORDER
    kinds = {t.name: t.kind for t in suite.tasks}
    assert kinds["CR-H"] == kinds["8TAGS"] == "classify"
    assert kinds["PPC"] == kinds["CDSC-E"] == kinds["SICK-E"] == "pair_classify"
    assert kinds["CDSC-R"] == kinds["SICK-R"] == "relatedness"
    # The trial files are the dev splits of CDS and SICK.
    cdsc = next(t for t in suite.tasks if t.name == "CDSC-R")
    assert cdsc.files["dev"] == "CDS/CDS_trial.txt"
    assert cdsc.columns["score"] == "relatedness_score"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "regress"}, "classify, pair_classify, relatedness"),
        ({"format": "csv"}, "label_text, tsv"),
        ({"kind": "relatedness"}, "needs format tsv"),
        ({"dev": None}, "missing: dev"),
        ({"typo": 1}, "unknown keys ['typo']"),
    ],
)
def test_a_bad_task_is_refused_naming_what_is_wrong(
    tmp_path: Path, change: dict, message: str
) -> None:
    import yaml

    task = {"name": "T", "kind": "classify", "format": "label_text"}
    task.update({"train": "a", "dev": "b", "test": "c"})
    task.update(change)
    task = {k: v for k, v in task.items() if v is not None}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"tasks": [task]}), encoding="utf-8")
    with pytest.raises(InputError, match="task 1 \\(T\\)") as error:
        load_suite(str(path))
    assert message in str(error.value)


def test_a_tsv_task_must_name_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "cols.json"  # JSON is accepted too
    task = {"name": "P", "kind": "pair_classify", "format": "tsv", "columns": {"sentence1": "a"}}
    task.update({"train": "a", "dev": "b", "test": "c"})
    path.write_text(json.dumps({"tasks": [task]}), encoding="utf-8")
    with pytest.raises(InputError, match=r"missing \['sentence2', 'label'\]"):
        load_suite(str(path))


def test_a_suite_that_is_not_yaml_is_one_line_naming_the_file_line_and_column(
    tmp_path: Path,
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: toy\ntasks:\n  - name: T\n    kind: [classify\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        load_suite(str(path))
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:5:1: not valid YAML: ")
    assert "flow sequence that starts at 4:11" in message


def test_a_column_the_data_lacks_is_named_where_the_suite_file_names_it(tmp_path: Path) -> None:
    make_toy_suite(tmp_path)
    text = (tmp_path / "toy.yaml").read_text(encoding="utf-8")
    (tmp_path / "toy.yaml").write_text(text.replace("label: gold", "label: labelx"), "utf-8")
    suite = load_suite(str(tmp_path / "toy.yaml"))
    line = 1 + next(i for i, row in enumerate(text.splitlines()) if "label: gold" in row)
    with pytest.raises(InputError) as error:
        check_files(suite, str(tmp_path))  # before any model loads
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'toy.yaml'}:{line}: task 2 (PAIR): columns: label: ")
    assert f"'labelx' is not a column of {tmp_path}/pair/train.tsv" in message


def test_an_unknown_suite_name_lists_the_builtin_ones() -> None:
    with pytest.raises(UsageError, match="built-in suite \\(pl"):
        load_suite("klingon")


def test_data_root_from_flag_then_environment_then_suite_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_toy_suite(tmp_path)
    monkeypatch.delenv(DATA_ENV, raising=False)
    suite = load_suite(str(tmp_path / "toy.yaml"))
    with pytest.raises(UsageError, match="--suite-data DIR"):
        resolve_data_root(suite, None)
    monkeypatch.setenv(DATA_ENV, "/from/env")
    assert resolve_data_root(suite, None) == "/from/env"
    assert resolve_data_root(suite, "/from/flag") == "/from/flag"
    text = (tmp_path / "toy.yaml").read_text(encoding="utf-8")
    (tmp_path / "rooted.yaml").write_text("data_root: .\n" + text, encoding="utf-8")
    monkeypatch.delenv(DATA_ENV)
    rooted = load_suite(str(tmp_path / "rooted.yaml"))
    assert resolve_data_root(rooted, None) == str(tmp_path)  # relative to the suite file


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    table = make_toy_suite(tmp_path)
    (tmp_path / "pair" / "dev.tsv").unlink()
    suite = load_suite(str(tmp_path / "toy.yaml"))
    with pytest.raises(InputError) as error:
        run_suite(lookup(table), suite, str(tmp_path))
    message = str(error.value)
    assert f"{tmp_path}/pair/dev.tsv (PAIR dev)" in message
    assert "(REL dev)" in message
    assert "--suite-data" in message
    assert "train.tsv" not in message


# ------------------------------------------------------------ readers


def test_readers_keep_labels_sentences_and_scores(tmp_path: Path) -> None:
    make_toy_suite(tmp_path, sizes=(3, 2, 2))
    suite = load_suite(str(tmp_path / "toy.yaml"))
    one, pair, rel = (read_task(task, str(tmp_path)) for task in suite.tasks)
    assert one["train"].labels[0] in ("pos", "neg")
    assert one["train"].texts[0] == "s0-0" and one["train"].second == []
    assert len(pair["dev"].texts) == len(pair["dev"].second) == 2
    assert pair["dev"].labels[0] in ("same", "other")
    assert all(isinstance(score, float) for score in rel["test"].labels)


def test_a_bad_line_is_named_with_its_file_and_number(tmp_path: Path) -> None:
    make_toy_suite(tmp_path, sizes=(3, 2, 2))
    suite = load_suite(str(tmp_path / "toy.yaml"))
    path = tmp_path / "pair" / "test.tsv"
    path.write_text(path.read_text(encoding="utf-8") + "x\ty\tsame\thigh\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"test\.tsv:4: score 'high' is not a number"):
        read_task(suite.tasks[2], str(tmp_path))
    (tmp_path / "one" / "dev.txt").write_text("pos\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"dev\.txt:1: expected '<label> <sentence>'"):
        read_task(suite.tasks[0], str(tmp_path))


# ------------------------------------------------------------ probes


def test_soft_targets_spread_a_score_over_its_neighbours() -> None:
    rows, classes, weights = probes.soft_targets([3.6, 5.0])
    assert rows.tolist() == [0, 0, 1]
    assert classes.tolist() == [3, 4, 5]
    assert weights == pytest.approx([0.4, 0.6, 1.0])


def test_separable_toy_tasks_reach_100(tmp_path: Path) -> None:
    table = make_toy_suite(tmp_path)
    suite = load_suite(str(tmp_path / "toy.yaml"))
    details: dict = {}
    result = run_suite(lookup(table), suite, str(tmp_path), details=details)
    assert list(result["tasks"]) == ["ONE", "PAIR", "REL"]
    assert result["tasks"]["ONE"] == 100.0
    assert result["tasks"]["PAIR"] == 100.0
    assert result["tasks"]["REL"] > 95.0  # Spearman x100: the ranking is nearly exact
    mean = sum(result["tasks"].values()) / 3
    assert result["average"] == pytest.approx(round(mean, 2))
    assert details["ONE"]["sizes"] == [600, 200, 400]
    assert details["ONE"]["c"] in probes.C_GRID


def test_shuffled_labels_reach_chance(tmp_path: Path) -> None:
    table = make_toy_suite(tmp_path, shuffle=True, sizes=(1000, 400, 1000))
    suite = load_suite(str(tmp_path / "toy.yaml"))
    details: dict = {}
    result = run_suite(lookup(table), suite, str(tmp_path), details=details)
    for name in ("ONE", "PAIR"):
        assert abs(result["tasks"][name] - details[name]["majority"]) < 4.0, name
    assert abs(result["tasks"]["REL"]) < 10.0


def test_random_vectors_score_near_chance(tmp_path: Path) -> None:
    make_toy_suite(tmp_path, sizes=(1000, 400, 1000))
    suite = load_suite(str(tmp_path / "toy.yaml"))
    details: dict = {}
    result = run_suite(random_encoder(DIM), suite, str(tmp_path), details=details)
    for name in ("ONE", "PAIR"):
        assert abs(result["tasks"][name] - details[name]["majority"]) < 4.0, name
    assert abs(result["tasks"]["REL"]) < 10.0


def test_random_encoder_gives_one_fixed_unit_vector_per_text() -> None:
    encode = random_encoder(16, seed=3)
    first = encode(["a", "b", "a"])
    assert first.shape == (3, 16)
    assert np.array_equal(first[0], first[2]) and not np.array_equal(first[0], first[1])
    assert np.linalg.norm(first, axis=1) == pytest.approx([1.0, 1.0, 1.0], abs=1e-6)
    assert np.array_equal(encode(["b"])[0], first[1])
    assert not np.array_equal(random_encoder(16, seed=4)(["a"])[0], first[0])


def test_a_run_repeats_to_the_digit_and_encodes_each_text_once(tmp_path: Path) -> None:
    table = make_toy_suite(tmp_path, sizes=(200, 100, 100))
    suite = load_suite(str(tmp_path / "toy.yaml"))
    seen: list[str] = []

    def counting(texts: list[str]) -> np.ndarray:
        seen.extend(texts)
        return lookup(table)(texts)

    first = run_suite(counting, suite, str(tmp_path))
    assert len(seen) == len(set(seen))  # PAIR and REL share their files: encoded once
    assert run_suite(lookup(table), suite, str(tmp_path)) == first


def test_table_in_the_suites_column_order_with_the_average() -> None:
    suite = load_suite("pl")
    figures = {name: 50.0 + i for i, name in enumerate(PAPER_ORDER)}
    table = suite_table([("m", {"tasks": figures, "average": 53.5})], suite)
    header, rule, row = table.splitlines()
    assert header == "| model | avg | " + " | ".join(PAPER_ORDER) + " |"
    assert rule.count("---:") == 9
    assert row == "| m | 53.50 | 50.00 | 51.00 | 52.00 | 53.00 | 54.00 | 55.00 | 56.00 | 57.00 |"


# ------------------------------------------------------------ a real model and the CLI


def test_model_encoder_prepends_the_prefix(tiny_model_dir: Path) -> None:
    from paramine.encoders.inference.handler import encode_unpadded
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(tiny_model_dir), device="cpu")
    texts = ["ala ma kota", "the quick brown fox"]
    with_prefix = model_encoder(model, "query: ")(texts)
    assert np.array_equal(with_prefix, encode_unpadded(model, [f"query: {t}" for t in texts]))
    assert not np.allclose(with_prefix, model_encoder(model)(texts))


def _words_suite(root: Path) -> None:
    """The toy suite with sentences made of the tiny model's vocabulary."""
    words = ["ala", "ma", "kota", "the", "quick", "brown", "fox", "lazy", "dog", "jest", "zdanie"]
    rng = np.random.default_rng(0)

    def sentence() -> str:
        return " ".join(rng.choice(words, size=4))

    for split, n in (("train", 40), ("dev", 20), ("test", 20)):
        write_label_text(
            root / "one" / f"{split}.txt", [(str(i % 2), sentence()) for i in range(n)]
        )
        rows = [[sentence(), sentence(), str(i % 3), f"{i % 6}"] for i in range(n)]
        write_tsv(root / "pair" / f"{split}.tsv", ["a", "b", "gold", "score"], rows)
    (root / "toy.yaml").write_text(SUITE_YAML, encoding="utf-8")


def test_cli_prints_the_table_and_writes_json(
    tmp_path: Path,
    tiny_model_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The default backend exports the model into the cache: a private one.
    monkeypatch.setenv("PARAMINE_CACHE", str(tmp_path / "cache"))
    _words_suite(tmp_path)
    out = tmp_path / "result.json"
    argv = [str(tiny_model_dir), "--suite", str(tmp_path / "toy.yaml")]
    status = main([*argv, "--suite-data", str(tmp_path), "--json", str(out)])
    assert status == 0
    header, _, row, _, how = capsys.readouterr().out.splitlines()
    assert header == "| model | avg | ONE | PAIR | REL |"
    # How the texts were encoded, under the table and in the JSON: the
    # default backend on a CPU is OpenVINO, where paramine train uses torch.
    assert how == "encoded with openvino, float32, on cpu"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert list(result) == ["tasks", "average", "encoding"]
    assert result["encoding"].startswith("openvino|none|cpu|float32|")
    assert list(result["tasks"]) == ["ONE", "PAIR", "REL"]
    assert all(0.0 <= result["tasks"][n] <= 100.0 for n in ("ONE", "PAIR"))
    assert -100.0 <= result["tasks"]["REL"] <= 100.0
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:] == [f"{result['average']:.2f}"] + [
        f"{result['tasks'][n]:.2f}" for n in ("ONE", "PAIR", "REL")
    ]


def test_cli_names_the_missing_data_and_refuses_mixing(
    tmp_path: Path, tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tiny_model_dir), "--suite", "pl", "--suite-data", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert f"{tmp_path}/PPC/train.txt (PPC train)" in error
    assert "--suite-data DIR" in error
    # All 24 files are missing: the first four are named, the rest counted.
    assert "(CR-H train)" in error and "(CR-H dev)" not in error and "and 20 more" in error
    # A root that is not there at all is said in one line.
    assert main([str(tiny_model_dir), "--suite", "pl", "--suite-data", str(tmp_path / "no")]) == 2
    error = capsys.readouterr().err
    assert f"the data root {tmp_path}/no is not a folder" in error and "PPC" not in error
    sts = tmp_path / "sts.tsv"
    sts.write_text("a\tb\t1\nc\td\t2\n", encoding="utf-8")
    argv = [str(tiny_model_dir), "--suite", "pl", "--eval-sts", str(sts)]
    assert main(argv) == 2
    assert "run it apart" in capsys.readouterr().err
