"""Evaluation suites: a declarative list of SentEval-style tasks, and their data.

A suite is a small YAML (or JSON) file: per task a name, a kind, a line
format, the columns to read and the train/dev/test files, relative to a data
root (``encoders/evaluation/suites/pl.yaml`` is the paper's eight Polish tasks, with
the keys explained in its header). ``--suite pl`` names a built-in suite;
``--suite path/to/cs.yaml`` reads a user's, so a language's suite needs no
code. The data itself is never shipped: its root comes from ``--suite-data``,
then ``$PARAMINE_SUITE_DATA``, then a ``data_root`` key of the suite file
(relative to the file).

:mod:`paramine.encoders.evaluation.probes` trains the probes;
:mod:`paramine.encoders.evaluation.suite_eval` runs a suite for a model.
"""

from __future__ import annotations

import csv
import os
import posixpath
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from paramine.schemas.errors import InputError, UsageError
from paramine.schemas.yaml_files import YamlDocument, parse_yaml

#: What a task's ``kind`` may be.
KINDS = ("classify", "pair_classify", "relatedness")
#: What a task's ``format`` may be: "<label> <sentence>" lines, or a TSV with a header.
FORMATS = ("label_text", "tsv")
SPLITS = ("train", "dev", "test")
#: The columns a TSV task must name, per kind.
COLUMNS = {
    "classify": ("text", "label"),
    "pair_classify": ("sentence1", "sentence2", "label"),
    "relatedness": ("sentence1", "sentence2", "score"),
}
#: The environment variable that names the data root when ``--suite-data`` is not given.
DATA_ENV = "PARAMINE_SUITE_DATA"
_TASK_KEYS = {"name", "kind", "format", "columns", *SPLITS}
_SUITE_KEYS = {"name", "description", "data_root", "tasks"}
#: Where the author of a suite file learns its format.
_SEE = "a suite is a YAML file like encoders/evaluation/suites/pl.yaml"


@dataclass(frozen=True)
class SuiteTask:
    """One task of a suite, as its file describes it.

    Attributes:
        name: The table's column for it (``PPC``, ``CDSC-R`` ...).
        kind: One of :data:`KINDS`.
        format: One of :data:`FORMATS`.
        files: ``{"train": ..., "dev": ..., "test": ...}``, relative to the data root.
        columns: For ``tsv``: role (``text``, ``sentence1``, ``label`` ...) to column name.
        places: Where each role's column is named in the suite file (``file:line``),
            so that a column the data lacks is pointed at where it is written.
    """

    name: str
    kind: str
    format: str
    files: dict[str, str]
    columns: dict[str, str]
    places: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Suite:
    """A named list of tasks; their order is the table's column order."""

    name: str
    tasks: tuple[SuiteTask, ...]
    source: str
    description: str = ""
    data_root: str | None = None


@dataclass(frozen=True)
class Split:
    """One split of a task.

    Attributes:
        texts: The sentences (the first of each pair for pair kinds).
        second: The second sentence of each pair; empty for ``classify``.
        labels: Class names (``classify``, ``pair_classify``) or gold scores
            (``relatedness``), one per row.
    """

    texts: list[str]
    second: list[str]
    labels: list[Any]


def builtin_suites() -> list[str]:
    """The names ``--suite`` accepts besides a file path."""
    folder = resources.files("paramine.encoders.evaluation") / "suites"
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def load_suite(spec: str, flag: str = "--suite") -> Suite:
    """Read a suite: a built-in name (``pl``) or the path of a YAML/JSON file.

    ``flag`` is the option that named it, for the error message.

    Raises:
        UsageError: ``spec`` is neither a built-in name nor an existing file.
        InputError: the file is not a valid suite; the message names the key.
    """
    if os.path.isfile(spec):
        text, source = Path(spec).read_text(encoding="utf-8"), spec
    elif spec in builtin_suites():
        resource = resources.files("paramine.encoders.evaluation") / "suites" / f"{spec}.yaml"
        text, source = resource.read_text(encoding="utf-8"), f"built-in suite {spec!r}"
    else:
        raise UsageError(
            f"{flag} {spec!r} is neither a built-in suite ({', '.join(builtin_suites())}) nor "
            "a suite file; write one like encoders/evaluation/suites/pl.yaml and pass its path"
        )
    # JSON is YAML too; a syntax error is one line naming the file, line and column.
    return parse_suite(parse_yaml(text, source, _SEE))


def parse_suite(document: YamlDocument) -> Suite:
    """Check a suite read from YAML/JSON and build it; errors name the file, line and key."""
    raw, source = document.data, document.url
    if not isinstance(raw, dict):
        raise InputError(f"{source}: a suite is a mapping with keys {sorted(_SUITE_KEYS)}")
    unknown = sorted(set(raw) - _SUITE_KEYS)
    if unknown:
        raise InputError(
            f"{document.where(unknown[0])}: unknown keys {unknown}; allowed: {sorted(_SUITE_KEYS)}"
        )
    entries = raw.get("tasks")
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{document.where('tasks')}: 'tasks' must be a non-empty list of tasks")
    tasks = tuple(_parse_task(entry, document, i) for i, entry in enumerate(entries))
    names = [task.name for task in tasks]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise InputError(f"{source}: task names repeat: {repeated}; each names a table column")
    data_root = raw.get("data_root")
    if data_root is not None and not os.path.isfile(source):
        data_root = None  # a built-in suite's data never lies beside the package
    elif data_root is not None:
        data_root = os.path.normpath(
            os.path.join(os.path.dirname(os.path.abspath(source)), str(data_root))
        )
    name = str(raw.get("name") or Path(source).stem)
    return Suite(name, tasks, source, str(raw.get("description") or ""), data_root)


def _parse_task(entry: Any, document: YamlDocument, index: int) -> SuiteTask:
    def where(*key: str) -> str:
        return f"{document.where('tasks', index, *key)}: task {index + 1}"

    if not isinstance(entry, dict):
        raise InputError(f"{where()}: a task is a mapping with keys {sorted(_TASK_KEYS)}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{where()}: give the task a 'name' (the table's column)")

    def at(*key: str) -> str:
        return f"{where(*key)} ({name})"

    unknown = sorted(set(entry) - _TASK_KEYS)
    if unknown:
        raise InputError(f"{at(unknown[0])}: unknown keys {unknown}; allowed: {sorted(_TASK_KEYS)}")
    kind, form = entry.get("kind"), entry.get("format")
    if kind not in KINDS:
        raise InputError(f"{at('kind')}: kind {kind!r} is not one of {', '.join(KINDS)}")
    if form not in FORMATS:
        raise InputError(f"{at('format')}: format {form!r} is not one of {', '.join(FORMATS)}")
    if form == "label_text" and kind != "classify":
        raise InputError(
            f"{at('format')}: format label_text holds one sentence per line; {kind} "
            "needs format tsv with named columns"
        )
    missing = [split for split in SPLITS if not isinstance(entry.get(split), str)]
    if missing:
        raise InputError(
            f"{at()}: give the file of each split ({', '.join(SPLITS)}); "
            f"missing: {', '.join(missing)}"
        )
    columns = entry.get("columns") or {}
    if not isinstance(columns, dict):
        raise InputError(f"{at('columns')}: 'columns' maps roles to column names")
    if form == "tsv":
        needed = COLUMNS[kind]
        absent = [role for role in needed if not isinstance(columns.get(role), str)]
        extra = sorted(set(columns) - set(needed))
        if absent or extra:
            raise InputError(
                f"{at('columns')}: a tsv {kind} task names the columns {list(needed)}; "
                f"missing {absent}, unknown {extra}"
            )
    elif columns:
        raise InputError(f"{at('columns')}: format label_text has no named columns; drop 'columns'")
    files = {split: str(entry[split]) for split in SPLITS}
    places = {role: at("columns", role) for role in columns}
    return SuiteTask(
        name, str(kind), str(form), files, {k: str(v) for k, v in columns.items()}, places
    )


def resolve_data_root(suite: Suite, given: str | None) -> str:
    """The data root: ``given`` (``--suite-data``), then ``$PARAMINE_SUITE_DATA``, then the file's.

    Raises:
        UsageError: none of the three names a root.
    """
    root = given or os.environ.get(DATA_ENV) or suite.data_root
    if not root:
        raise UsageError(
            f"suite {suite.name!r} needs its data: pass --suite-data DIR (the folder that "
            f"holds {suite.tasks[0].files['train'].split('/')[0]}/ ...) or set ${DATA_ENV}"
        )
    return root


def task_paths(task: SuiteTask, root: str) -> dict[str, str]:
    """The split files of ``task`` under ``root`` (a path or fsspec URL)."""
    return {split: posixpath.join(root.rstrip("/"), path) for split, path in task.files.items()}


#: Missing files named in check_files' message; the rest are counted.
SHOWN_MISSING = 4


def check_files(suite: Suite, root: str) -> None:
    """Fail before any model loads when a file of the suite is absent.

    Raises:
        InputError: the root is not a folder, or naming the first missing
            files (with their task and split) and counting the rest.
    """
    import fsspec

    where = f". Pass the folder that holds them with --suite-data DIR (or ${DATA_ENV})"
    fs, local_root = fsspec.core.url_to_fs(root)
    if not fs.isdir(local_root):
        raise InputError(f"suite {suite.name!r}: the data root {root} is not a folder" + where)
    missing = []
    for task in suite.tasks:
        for split, path in task_paths(task, root).items():
            fs, local = fsspec.core.url_to_fs(path)
            if not fs.isfile(local):
                missing.append(f"{path} ({task.name} {split})")
    if missing:
        shown = "; ".join(missing[:SHOWN_MISSING])
        if len(missing) > SHOWN_MISSING:
            shown += f"; and {len(missing) - SHOWN_MISSING} more"
        raise InputError(f"suite {suite.name!r}, data root {root}: missing {shown}" + where)
    for task in suite.tasks:
        if task.format == "tsv":
            for path in task_paths(task, root).values():
                _check_columns(task, path, _header(path))


def _header(path: str) -> list[str]:
    """The header line of a TSV split, as its columns."""
    import fsspec

    with fsspec.open(path, "r", encoding="utf-8", errors="replace", newline="") as f:
        line = f.readline().rstrip("\r\n")
    return next(csv.reader([line], delimiter="\t", quoting=csv.QUOTE_NONE), [])


def _check_columns(task: SuiteTask, path: str, header: list[str]) -> None:
    """Each column the task names is in the file's header; else where the suite names it."""
    for role, name in task.columns.items():
        if name not in header:
            place = task.places.get(role, task.name)
            raise InputError(
                f"{place}: columns: {role}: {name!r} is not a column of {path} (its header: "
                f"{', '.join(header) or 'empty'}); name one of those in the suite file"
            )


def read_task(task: SuiteTask, root: str) -> dict[str, Split]:
    """Read the three splits of a task.

    Raises:
        InputError: a file is missing, a line cannot be read, or a split is
            empty; the message names the file and line.
    """
    return {split: read_split(task, path) for split, path in task_paths(task, root).items()}


def read_suite(suite: Suite, data_root: str) -> dict[str, dict[str, Split]]:
    """Every task's splits, by task name, the files checked first.

    Raises:
        InputError: a file is missing or cannot be read.
    """
    check_files(suite, data_root)
    return {task.name: read_task(task, data_root) for task in suite.tasks}


def read_split(task: SuiteTask, path: str) -> Split:
    """Read one split file in the task's format."""
    import fsspec

    try:
        with fsspec.open(path, "r", encoding="utf-8", newline="") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise InputError(
            f"{path}: no such file (task {task.name}); pass the folder that holds the suite's "
            f"data with --suite-data DIR (or ${DATA_ENV})"
        ) from None
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not UTF-8 ({error})") from None
    if task.format == "label_text":
        split = _read_label_text(lines, path)
    else:
        split = _read_tsv(task, lines, path)
    if not split.labels:
        raise InputError(f"{path}: no rows (task {task.name})")
    return split


def _read_label_text(lines: list[str], path: str) -> Split:
    texts, labels = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = line.split(None, 1)  # the label, then the sentence as it is
        if len(fields) != 2:
            raise InputError(f"{path}:{number}: expected '<label> <sentence>', found {line!r}")
        labels.append(fields[0])
        texts.append(fields[1].strip())
    return Split(texts, [], labels)


def _read_tsv(task: SuiteTask, lines: list[str], path: str) -> Split:
    rows = csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    header = next(rows, None)
    if header is None:
        raise InputError(f"{path}: empty file; expected a header line (task {task.name})")
    _check_columns(task, path, header)
    at = {role: header.index(name) for role, name in task.columns.items()}
    first: list[str] = []
    second: list[str] = []
    labels: list[Any] = []
    for number, fields in enumerate(rows, start=2):
        if not any(field.strip() for field in fields):
            continue
        if len(fields) != len(header):
            raise InputError(
                f"{path}:{number}: {len(fields)} tab-separated fields, the header has {len(header)}"
            )
        if task.kind == "classify":
            first.append(fields[at["text"]])
        else:
            first.append(fields[at["sentence1"]])
            second.append(fields[at["sentence2"]])
        if task.kind == "relatedness":
            try:
                labels.append(float(fields[at["score"]]))
            except ValueError:
                raise InputError(
                    f"{path}:{number}: score {fields[at['score']]!r} is not a number"
                ) from None
        else:
            labels.append(fields[at["label"]])
    return Split(first, second, labels)
