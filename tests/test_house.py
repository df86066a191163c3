"""The shape of the house: one namespace, data flowing one way, no torch to build a graph."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import ROOT

#: Lower layers never import higher ones: schemas <- encoders <- pipelines.
LAYERS = ("schemas", "encoders", "pipelines")


def module_imports() -> dict[str, set[str]]:
    """``paramine.x.y`` -> the ``paramine`` modules it imports, at any depth of its code."""
    graph: dict[str, set[str]] = {}
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(("paramine", *parts)).removesuffix(".__init__")
            found: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module:
                    found.add(node.module)
                    found.update(f"{node.module}.{alias.name}" for alias in node.names)
                elif isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
            graph[name] = {m for m in found if m.startswith("paramine.")}
    known = set(graph)
    return {name: {m for m in deps if m in known} - {name} for name, deps in graph.items()}


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=False
    )


@pytest.mark.pipeline
def test_only_paramine_is_installed_at_top_level() -> None:
    # From outside the checkout, so the working directory cannot help.
    done = run_python("import paramine.pipelines, paramine.encoders, paramine.schemas")
    assert done.returncode == 0, done.stderr
    for old in LAYERS:
        done = run_python(f"import {old}")
        assert done.returncode == 1 and "ModuleNotFoundError" in done.stderr, old


def test_every_package_folder_is_installed() -> None:
    """A new folder of modules needs its ``__init__.py`` and its line in pyproject.toml's list."""
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    folders = {
        path.parent
        for layer in LAYERS
        for path in (ROOT / layer).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    for folder in sorted(folders):
        assert (folder / "__init__.py").is_file(), f"{folder.relative_to(ROOT)} has no __init__.py"
    packages = {".".join(("paramine", *folder.relative_to(ROOT).parts)) for folder in folders}
    assert packages - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - packages == set(), "pyproject.toml lists packages that are not there"


def test_lower_layers_never_import_higher_ones() -> None:
    wrong = []
    for name, deps in module_imports().items():
        layer = LAYERS.index(name.split(".")[1])
        for dep in deps:
            if LAYERS.index(dep.split(".")[1]) > layer:
                wrong.append(f"{name} imports {dep}")
    assert wrong == []


def test_no_import_cycles() -> None:
    graph = module_imports()
    # Packages import their modules and are imported through them: a package
    # __init__ that re-exports is not a cycle of the code.
    graph = {n: {d for d in deps if not n.startswith(d + ".")} for n, deps in graph.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append([*path[path.index(dep) :], dep] if dep in path else [node, dep])
            elif dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


#: Builds the mining graph, watching which file first imports each heavy module.
#: With BLOCK_TORCH, ``import torch`` fails as it does where torch is not installed.
BUILD_THE_MINE_GRAPH = """
import sys, traceback

BLOCK_TORCH = {block}
HEAVY = ("torch", "sentence_transformers", "transformers")
importer = {{}}


class Watch:
    def find_spec(self, name, path=None, target=None):
        if name in HEAVY and name not in importer:
            frames = [f for f in traceback.extract_stack()[:-1] if "importlib" not in f.filename]
            importer[name] = frames[-1].filename
        if BLOCK_TORCH and name.split(".")[0] == "torch":
            raise ModuleNotFoundError(f"No module named {{name!r}}")
        return None


sys.meta_path.insert(0, Watch())

import apache_beam as beam
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.mining.mine_paraphrases import MineParaphrases
from paramine.pipelines.stages.write.write_dataset import WriteDataset
from paramine.pipelines.formats import Shard
from paramine.schemas.manifest import RunHeader

config = MiningSettings(model="e5-small")
pipeline = beam.Pipeline(runner="FnApiRunner")
mined = pipeline | MineParaphrases(config, [Shard("tsv", "x.tsv", "x", "en", "pl")])
header = RunHeader({{}}, {{}}, [], [])
_ = {{"pairs": mined.pairs, "rejects": mined.rejects, "counts": mined.counts,
     "threshold": mined.threshold}} | WriteDataset("/nonexistent/out", header, 0)
print("loaded:", sorted(m for m in HEAVY if m in sys.modules))
print("importer:", importer)
"""


@pytest.mark.pipeline
def test_building_the_mine_graph_needs_no_torch() -> None:
    done = run_python(BUILD_THE_MINE_GRAPH.format(block=True))
    assert done.returncode == 0, done.stderr
    assert "loaded: []" in done.stdout


@pytest.mark.pipeline
def test_building_the_mine_graph_imports_torch_only_through_beam() -> None:
    # paramine imports torch and sentence-transformers in load_model only.
    # Beam 2.77's apache_beam.ml.inference.base (RunInference) imports its
    # model manager, which imports torch wherever torch is installed; the
    # test above shows the graph builds without it.
    done = run_python(BUILD_THE_MINE_GRAPH.format(block=False))
    assert done.returncode == 0, done.stderr
    importer = ast.literal_eval(done.stdout.split("importer: ", 1)[1].strip())
    assert set(importer) <= {"torch"}, importer
    if importer:
        assert importer["torch"].endswith("apache_beam/ml/inference/model_manager.py"), importer


@pytest.mark.parametrize(
    ("command", "flag", "unloaded"),
    [
        ("mine", "--src-lang", ("torch", "apache_beam", "pyarrow")),
        ("train", "--lstm-hidden", ("torch", "apache_beam", "sentence_transformers")),
        ("evaluate", "--suite-data", ("torch", "apache_beam", "sentence_transformers")),
    ],
)
@pytest.mark.pipeline
def test_help_imports_no_torch_nor_beam(command: str, flag: str, unloaded: tuple) -> None:
    done = run_python(
        "import sys\n"
        "from paramine.pipelines.cli import main\n"
        f"try:\n    main([{command!r}, '--help'])\nexcept SystemExit:\n    pass\n"
        f"print('loaded:', [m for m in {unloaded!r} if m in sys.modules])"
    )
    assert done.returncode == 0, done.stderr
    assert flag in done.stdout
    assert "loaded: []" in done.stdout


@pytest.mark.parametrize("layer", LAYERS)
def test_every_module_says_future_annotations(layer: str) -> None:
    missing = []
    for path in (ROOT / layer).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        code = [n for n in tree.body if not isinstance(n, ast.Expr)]  # beyond the docstring
        future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in tree.body)
        if code and not future:
            missing.append(str(path.relative_to(ROOT)))
    assert missing == []


#: The floors inside pipelines/, lowest first: a module imports only from
#: floors below its own, or from its own folder (stages: not even that, but
#: the rules of their own kind, stages/filter/rules/). The cuts' maths
#: (thresholds/) and the file layer (files/) sit on core; the stages on the
#: readers (formats/); the settings above the stages, whose options they are
#: made of, and below the graph (mining/), which takes MiningSettings; the
#: launchers (run/, refresh/) are above it and hold both kinds of settings.
PIPELINE_FLOORS = (
    ("core",),
    ("files", "thresholds"),
    ("formats",),
    ("stages",),
    ("settings",),
    ("mining", "report"),
    ("run",),
    ("refresh", "adapt"),
    ("cli", "__init__", "demo"),
)


def pipeline_room(module: str) -> str:
    """``paramine.pipelines.stages.filter.prefilter`` -> ``stages``; other layers: one room each."""
    parts = module.split(".")
    if parts[1] != "pipelines":
        return parts[1]
    return parts[2] if len(parts) > 2 else "__init__"


def stage_may_import(module: str, dep: str) -> bool:
    """A stage imports the rules of its own kind (stages/filter/ -> stages/filter/rules/).

    The rules import one another; none of them imports a stage.
    """
    kind, in_rules = module.rsplit(".", 1)[0], ".rules" in module
    if in_rules:
        kind = kind.rsplit(".", 1)[0]
    return dep == f"{kind}.rules" or dep.startswith(f"{kind}.rules.")


def floor_of(room: str) -> int:
    return next(i for i, rooms in enumerate(PIPELINE_FLOORS) if room in rooms)


def room_graph() -> dict[tuple[str, str], int]:
    """``(room, room it imports) -> imports``: pipelines/ folders and the other layers."""
    edges: dict[tuple[str, str], int] = {}
    for name, deps in module_imports().items():
        for dep in deps:
            edge = (pipeline_room(name), pipeline_room(dep))
            if edge[0] != edge[1]:
                edges[edge] = edges.get(edge, 0) + 1
    return edges


def test_print_the_house() -> None:
    """The graph of the house, printed: `pytest tests/test_house.py -k house -s`."""
    edges = room_graph()
    for (room, dep), n in sorted(edges.items()):
        print(f"{room:>16} -> {dep:<16} {n:3d} imports")
    rooms = {room for edge in edges for room in edge}
    assert {"core", "stages", "settings", "mining", "run", "refresh", "formats"} <= rooms


def test_pipeline_floors_import_only_downwards() -> None:
    wrong = []
    for name, deps in module_imports().items():
        if not name.startswith("paramine.pipelines"):
            continue
        room = pipeline_room(name)
        for dep in deps:
            if not dep.startswith("paramine.pipelines"):
                continue
            other = pipeline_room(dep)
            same_folder = other.split(".")[0] == room.split(".")[0]
            if room == "stages" and other == "stages":
                if not stage_may_import(name, dep):
                    wrong.append(f"{name} imports {dep} (a stage imports no other stage)")
            elif same_folder:
                continue
            elif floor_of(other) >= floor_of(room):
                wrong.append(f"{name} imports {dep}")
    assert wrong == []


#: Code outside benchmarks/ (scripts of their own) and outside the tests.
CODE = (*LAYERS, "deploy")
#: Longer modules say why at their top ("Why it is longer than 400 lines: ...").
LONGEST_MODULE = 400
#: In the package; a test's function may run to 120 lines (a scenario told in order).
LONGEST_FUNCTION = 80
LONGEST_TEST_FUNCTION = 120


def test_no_long_module_without_a_reason_at_its_top() -> None:
    long = []
    for folder in CODE:
        for path in (ROOT / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            doc = ast.get_docstring(ast.parse(text)) or ""
            reason = re.search(r"Why it is longer than \d00 lines: \S", doc) is not None
            if text.count("\n") > LONGEST_MODULE and not reason:
                long.append(f"{path.relative_to(ROOT)}: {text.count(chr(10))} lines")
    assert long == []


#: The benchmarks are scripts of their own, held to a looser bound (issue 54).
LONGEST_BENCHMARK = 600


def test_no_benchmark_module_over_600_lines() -> None:
    long = []
    for path in (ROOT / "benchmarks").rglob("*.py"):
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > LONGEST_BENCHMARK:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert long == []


def test_a_benchmarks_tests_are_found_in_one_guess() -> None:
    """tests/benchmarks/<folder>/test_<name>.py tests benchmarks/<folder>/<name>.py (or .sh)."""
    stray = []
    for path in (ROOT / "tests" / "benchmarks").rglob("test_*.py"):
        folder = ROOT / "benchmarks" / path.parent.relative_to(ROOT / "tests" / "benchmarks")
        name = path.stem.removeprefix("test_")
        if not any((folder / f"{name}{suffix}").is_file() for suffix in (".py", ".sh")):
            stray.append(str(path.relative_to(ROOT)))
    assert stray == []


def test_benchmarks_import_no_private_name_of_the_package() -> None:
    """A benchmark measures the production code through its public names, so it cannot drift."""
    private = []
    for path in sorted((ROOT / "benchmarks").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("paramine"):
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                private += [f"{where}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert private == []


def test_no_long_function_outside_benchmarks() -> None:
    long = []
    for folder in (*CODE, "tests"):
        longest = LONGEST_TEST_FUNCTION if folder == "tests" else LONGEST_FUNCTION
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > longest:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} {lines}")
    assert long == []


def stage_composites() -> set[str]:
    """The stages' composite transforms: classes under pipelines/stages/ that expand a graph."""
    names = set()
    for path in (ROOT / "pipelines" / "stages").rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and any(
                isinstance(f, ast.FunctionDef) and f.name == "expand" for f in node.body
            ):
                names.add(node.name)
    return names


def test_refresh_constructs_none_of_the_mining_stages_itself() -> None:
    composites = stage_composites()
    assert {"Prefilter", "GroupByPivot", "MakePairs", "PostFilter"} <= composites
    built = []
    for path in (ROOT / "pipelines" / "refresh").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id in composites:
                built.append(f"{path.name}:{node.lineno} {node.func.id}")
    assert built == []


def test_mine_and_refresh_build_their_manifests_from_one_run_header() -> None:
    """No run assembles a manifest by hand: each makes its header by ``run_header``."""
    headers, callers, by_hand = set(), set(), []
    for path in sorted((ROOT / "pipelines").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                where = path.relative_to(ROOT).as_posix()
                if node.func.id == "RunHeader":
                    headers.add(where)
                elif node.func.id == "run_header":
                    callers.add(where)
                elif node.func.id == "Manifest":
                    by_hand.append(f"{where}:{node.lineno}")
    assert by_hand == []
    assert headers == {"pipelines/run/header.py"}
    assert callers == {"pipelines/run/mine.py", "pipelines/refresh/update.py"}


def snake(name: str) -> str:
    """``GroupByPivot`` -> ``group_by_pivot``."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def test_one_name_per_stage_file_composite_label_and_ledger() -> None:
    import apache_beam as beam
    from paramine.pipelines.formats import Shard
    from paramine.pipelines.mining.mine_paraphrases import MINE_STAGES, MineParaphrases
    from paramine.pipelines.refresh.job import REFRESH_STAGES
    from paramine.pipelines.settings.mining import MiningSettings

    for stage in {*MINE_STAGES, *REFRESH_STAGES}:
        folder = "refresh" if stage in set(REFRESH_STAGES) - set(MINE_STAGES) else "stages"
        # A stage's module sits in its folder or in the folder of its kind (stages/filter/ ...).
        found = list((ROOT / "pipelines" / folder).rglob(f"{snake(stage.name)}.py"))
        assert len(found) == 1, (stage.name, found)
        module = found[0]
        classes = {
            n.name for n in ast.parse(module.read_text()).body if isinstance(n, ast.ClassDef)
        }
        assert stage.name in classes, f"{module.name} has no class {stage.name}"
    # Each ledger's name is a label of the mining graph.
    pipeline = beam.Pipeline(runner="FnApiRunner")
    shards = [Shard("tsv", "x.tsv", "x", "en", "pl")]
    _ = pipeline | "Mine" >> MineParaphrases(MiningSettings(), shards)
    labels = {
        name.split("/")[-1]
        for name in (t.unique_name for t in pipeline.to_runner_api().components.transforms.values())
    }
    assert {stage.name for stage in MINE_STAGES} <= labels


#: Test files about the repository as a whole, named after no one module.
WHOLE_REPOSITORY_TESTS = {"tests/test_house.py"}


def module_under_test(test_file: Path) -> Path | None:
    """What ``tests/<folder>/test_<name>.py`` tests, where a newcomer looks first; None if nothing.

    ``<folder>/<name>.py`` (or a script ``<name>.sh``, or a package folder
    ``<name>/``), at the mirrored path; a test of a whole package is named
    after it, in its mirrored folder (``tests/pipelines/formats/test_formats.py``);
    a second file of one module's tests adds its aspect after the module's
    name (``test_train_bad_input.py`` beside ``test_train.py``). A helper of
    the tests themselves (``tests/tiers.py``) is tested beside it.
    """
    folder = test_file.parent.relative_to(ROOT / "tests")
    name = test_file.stem.removeprefix("test_")
    for here in (ROOT / folder, test_file.parent):
        words = name.split("_")
        for cut in range(len(words), 0, -1):
            stem = "_".join(words[:cut])
            for found in (here / f"{stem}.py", here / f"{stem}.sh", here / stem):
                if found.exists() and found != test_file:
                    return found
            if here.name == stem and here != ROOT:
                return here
    return None


def test_every_test_file_is_named_after_what_it_tests_at_the_mirrored_path() -> None:
    """Tests a newcomer finds in one guess: ``tests/X/test_Y.py`` tests ``X/Y.py`` (or ``X/Y/``)."""
    studies = ROOT / "tests" / "benchmarks" / "studies"
    lost = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests").rglob("test_*.py"))
        if not path.is_relative_to(studies)
        and str(path.relative_to(ROOT)) not in WHOLE_REPOSITORY_TESTS
        and module_under_test(path) is None
    ]
    assert lost == [], "rename each after the module it tests, at the mirrored path"
    assert module_under_test(ROOT / "tests/encoders/training/test_train_bad_input.py") == (
        ROOT / "encoders/training/train.py"
    )
    assert (
        module_under_test(ROOT / "tests/pipelines/formats/test_formats.py")
        == ROOT / "pipelines/formats"
    )
    assert module_under_test(ROOT / "tests/pipelines/formats/test_nothing_here.py") is None


#: Tests of a package's contract as a whole, which no one module holds: every reader's
#: answer to the same bad input and fuzz (formats/), report.html as a reader sees it
#: (report/), the deployment files (deploy/). Any other test file is named after a module.
PACKAGE_TESTS = {
    "tests/deploy/test_dataflow_graph.py",
    "tests/deploy/test_deploy.py",
    "tests/pipelines/formats/test_formats.py",
    "tests/pipelines/formats/test_formats_acceptance.py",
    "tests/pipelines/formats/test_formats_bad_input.py",
    "tests/pipelines/formats/test_formats_bad_input_defects.py",
    "tests/pipelines/formats/test_formats_fuzz.py",
    "tests/pipelines/report/test_report.py",
}


def test_a_test_file_named_after_a_package_is_one_of_its_contracts_tests() -> None:
    """A new test of one module goes at its mirrored path, not into a package's file."""
    named_after_packages = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("test_*.py")
        if (found := module_under_test(path)) is not None and found.is_dir()
    }
    assert named_after_packages == PACKAGE_TESTS
