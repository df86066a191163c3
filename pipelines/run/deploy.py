"""Deployment flags: turn ``--gpu-type`` and friends into the Beam options runners document.

Users name what they want (``--gpu-type nvidia-l4 --gpu-mode one_sdk_process
--worker-image IMAGE``); paramine writes the runner flags, which are easy to
get subtly wrong (a comma where Dataflow wants a semicolon, MPS and one SDK
process at once, a GPU on a machine family that cannot take it), and checks
the whole set before anything is launched. ``--deploy-dry-run`` prints the
result and launches nothing: the ``--runner=DataflowRunner`` dry check.

Where each Dataflow option is documented (cloud.google.com/dataflow/docs):

- ``--dataflow_service_options=worker_accelerator=type:TYPE;count:N;install-nvidia-driver``:
  "Run a pipeline with GPUs" and "GPU best practices". The parts are separated
  by semicolons because Beam splits the flag's value on commas.
- ``use_nvidia_mps`` inside ``worker_accelerator``: "Improve performance on a
  shared GPU by using NVIDIA MPS".
- ``--experiments=no_use_multiple_sdk_containers``: "GPU best practices", one
  SDK process per worker, so that a single process owns the GPU.
- ``--sdk_container_image``: "Build custom container images" / "Use custom
  containers"; GPU workers need an image with CUDA torch
  (deploy/dataflow/Dockerfile).
- ``--disk_size_gb`` and ``--machine_type``: "Pipeline options", worker-level
  options; the GPU-to-machine-family rules are Compute Engine's "GPU machine
  types" (N1 for T4/P4/P100/V100, G2 for L4, A2 for A100, A3 for H100).
- Portable runners (Flink, Spark): ``--environment_type=DOCKER`` with
  ``--environment_options=docker_container_image=IMAGE``, Beam's "Portability"
  and Flink/Spark runner pages.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import NamedTuple

from paramine.pipelines.settings.running import GPU_TYPES, RunSettings
from paramine.schemas.errors import UsageError

#: A machine type per GPU type and count where paramine may choose one: the
#: A2/A3/G2 types fix the GPU count, N1 types take 1, 2 or 4 GPUs.
DEFAULT_MACHINE_TYPES: dict[tuple[str, int], str] = {
    ("nvidia-tesla-t4", 1): "n1-standard-8",
    ("nvidia-tesla-p4", 1): "n1-standard-8",
    ("nvidia-tesla-p100", 1): "n1-standard-8",
    ("nvidia-tesla-v100", 1): "n1-standard-8",
    ("nvidia-l4", 1): "g2-standard-8",
    ("nvidia-l4", 2): "g2-standard-24",
    ("nvidia-l4", 4): "g2-standard-48",
    ("nvidia-l4", 8): "g2-standard-96",
    ("nvidia-tesla-a100", 1): "a2-highgpu-1g",
    ("nvidia-tesla-a100", 2): "a2-highgpu-2g",
    ("nvidia-tesla-a100", 4): "a2-highgpu-4g",
    ("nvidia-tesla-a100", 8): "a2-highgpu-8g",
    ("nvidia-a100-80gb", 1): "a2-ultragpu-1g",
    ("nvidia-h100-80gb", 8): "a3-highgpu-8g",
}

#: With a CUDA image of ~10 GB, Dataflow's default disk runs out while the
#: image is pulled and unpacked ("GPU best practices": size the boot disk).
GPU_DISK_GB = 50
MIN_GPU_DISK_GB = 30

DATAFLOW = "DataflowRunner"
PORTABLE_RUNNERS = ("PortableRunner", "FlinkRunner", "SparkRunner")
LOCAL_RUNNERS = ("DirectRunner", "FnApiRunner", "BundleBasedDirectRunner", "PrismRunner")

ONE_SDK_PROCESS = "no_use_multiple_sdk_containers"
MPS = "use_nvidia_mps"
ACCELERATOR = "worker_accelerator"


class DeploymentError(UsageError):
    """Deployment flags that a runner would refuse, or that contradict each other."""


def parse_beam_args(beam_args: Sequence[str]) -> argparse.Namespace:
    """Parse Beam flags with Beam's public options API; unknown names are an error.

    Beam itself only logs a flag it cannot place and drops it, so a typo
    (``--machine_typo``) would go unnoticed until the job ran without it.
    ``get_all_options`` hands its parser, every option of every
    ``PipelineOptions`` class added, to ``add_extra_args_fn``: what that parser
    cannot place is what Beam would drop.

    Raises:
        DeploymentError: A flag is not a Beam option, naming it.
    """
    from apache_beam.options.pipeline_options import PipelineOptions

    flags = list(beam_args)
    unknown: list[str] = []

    def unplaceable(parser: argparse.ArgumentParser) -> None:
        unknown.extend(arg for arg in parser.parse_known_args(flags)[1] if arg.startswith("-"))

    known = PipelineOptions(flags).get_all_options(
        add_extra_args_fn=unplaceable, retain_unknown_options=True
    )
    if unknown:
        raise DeploymentError(
            f"not Beam options: {' '.join(unknown)}; check the spelling (paramine's flags "
            "use dashes, --src-lang; Beam's use underscores, --machine_type) or see "
            "`paramine mine --help`"
        )
    return argparse.Namespace(**known)


def _service_options(values: list[str] | None) -> list[str]:
    return [v for v in (values or []) if v]


def accelerator_option(gpu_type: str, gpu_count: int, mps: bool) -> str:
    """The ``worker_accelerator`` Dataflow service option, as Dataflow documents it."""
    parts = [f"type:{gpu_type}", f"count:{gpu_count}", "install-nvidia-driver"]
    if mps:
        parts.append(MPS)
    return f"{ACCELERATOR}=" + ";".join(parts)


def _is_remote(url: str) -> bool:
    return "://" in url and not url.startswith("file://")


def dataflow_args(job: RunSettings, beam: argparse.Namespace, inputs: Sequence[str]) -> list[str]:
    """Check a Dataflow launch and return the flags paramine adds to it.

    Args:
        job: Where and how the run runs.
        beam: The user's Beam flags, parsed.
        inputs: The INPUT arguments.

    Raises:
        DeploymentError: Naming every problem found, not only the first.
    """
    if job.gpu_type is not None and job.gpu_type not in GPU_TYPES:
        raise DeploymentError(f"--gpu-type {job.gpu_type}; allowed: {', '.join(sorted(GPU_TYPES))}")
    problems: list[str] = []
    added: list[str] = []
    for name in ("project", "region", "temp_location"):
        if not getattr(beam, name, None):
            problems.append(f"Dataflow needs --{name}")
    local_inputs = [i for i in inputs if not _is_remote(i)]
    if local_inputs:
        problems.append(
            f"inputs {local_inputs} are local files, which Dataflow workers cannot read; "
            "copy them to a bucket (gs://...)"
        )
    if job.output and not _is_remote(job.output):
        problems.append(f"--output {job.output} is local; Dataflow workers write to a bucket")

    image = job.worker_image or beam.sdk_container_image
    if job.worker_image and beam.sdk_container_image:
        problems.append("give --worker-image or --sdk_container_image, not both")
    packaged = beam.setup_file or beam.extra_packages or beam.requirements_file
    if not image and not packaged and job.gpu_type is None:
        problems.append(
            "Dataflow workers need paramine installed: pass --worker-image "
            "(deploy/dataflow/Dockerfile) or --extra_package=dist/paramine-*.whl"
        )

    if job.gpu_type is None:
        if job.gpu_mode != "one_sdk_process":
            problems.append(f"--gpu-mode {job.gpu_mode} applies to GPU workers: add --gpu-type")
        if job.disk_size_gb is not None:
            added.append(f"--disk_size_gb={job.disk_size_gb}")
    else:
        _gpu_worker_args(job, beam, image, problems, added)
    if job.worker_image:
        added.append(f"--sdk_container_image={job.worker_image}")
    if beam.disk_size_gb is not None and job.disk_size_gb is not None:
        problems.append("give --disk-size-gb or --disk_size_gb, not both")
    if problems:
        raise DeploymentError(
            "the Dataflow options do not hold together:\n  " + "\n  ".join(problems)
        )
    return added


def _gpu_worker_args(
    job: RunSettings,
    beam: argparse.Namespace,
    image: str | None,
    problems: list[str],
    added: list[str],
) -> None:
    """Check a GPU worker's options; append its problems and the flags paramine adds."""
    assert job.gpu_type is not None
    services = _service_options(beam.dataflow_service_options)
    counts, family = GPU_TYPES[job.gpu_type]
    if job.gpu_count not in counts:
        problems.append(
            f"--gpu-count {job.gpu_count}: {job.gpu_type} comes in counts "
            f"{', '.join(map(str, counts))} per worker"
        )
    if any(s.startswith(ACCELERATOR) for s in services):
        problems.append(
            f"--dataflow_service_options already has {ACCELERATOR}; set the GPU with "
            "--gpu-type/--gpu-count, or by hand, not both"
        )
    if not image:
        problems.append(
            "GPU workers need a container with CUDA torch: build deploy/dataflow/Dockerfile "
            "and pass --worker-image"
        )
    machine = beam.machine_type or DEFAULT_MACHINE_TYPES.get((job.gpu_type, job.gpu_count))
    if machine is None:
        problems.append(
            f"name a {family}- machine type that has {job.gpu_count} {job.gpu_type} with "
            "--machine_type"
        )
    elif not machine.startswith(family + "-"):
        problems.append(
            f"--machine_type {machine}: {job.gpu_type} attaches to {family}- machine types only"
        )
    elif not beam.machine_type:
        added.append(f"--machine_type={machine}")
    _gpu_mode_args(job, services, list(beam.experiments or []), problems, added)
    mps = job.gpu_mode == "mps"
    added.append(
        f"--dataflow_service_options={accelerator_option(job.gpu_type, job.gpu_count, mps)}"
    )
    disk = job.disk_size_gb if job.disk_size_gb is not None else GPU_DISK_GB
    if disk < MIN_GPU_DISK_GB:
        problems.append(
            f"--disk-size-gb {disk}: a CUDA worker image needs at least {MIN_GPU_DISK_GB} GB"
        )
    if beam.disk_size_gb is None:
        added.append(f"--disk_size_gb={disk}")
    if job.device == "cpu":
        problems.append("--device cpu on a GPU worker leaves the GPU idle; use auto or cuda")


def _gpu_mode_args(
    job: RunSettings,
    services: list[str],
    experiments: list[str],
    problems: list[str],
    added: list[str],
) -> None:
    """Check ``--gpu-mode`` against the user's own service options and experiments."""
    if job.gpu_mode == "one_sdk_process":
        if any(MPS in s for s in services):
            problems.append(f"{MPS} is for many SDK processes; --gpu-mode one_sdk_process")
        if job.share_model_across_processes:
            problems.append(
                "--share-model-across-processes with one SDK process shares nothing: "
                "use --gpu-mode shared_model instead"
            )
        if ONE_SDK_PROCESS not in experiments:
            added.append(f"--experiments={ONE_SDK_PROCESS}")
        return
    if ONE_SDK_PROCESS in experiments:
        problems.append(
            f"--experiments={ONE_SDK_PROCESS} leaves one SDK process: it contradicts "
            f"--gpu-mode {job.gpu_mode}"
        )
    if job.gpu_mode == "mps" and job.share_model_across_processes:
        problems.append(
            "MPS lets each SDK process keep its own model on the GPU; "
            "--share-model-across-processes would leave one copy for all"
        )


def portable_args(job: RunSettings, beam: argparse.Namespace) -> list[str]:
    """Flags for Flink and Spark through Beam's portable job server."""
    if job.gpu_type is not None or job.disk_size_gb is not None:
        raise DeploymentError(
            "--gpu-type and --disk-size-gb are Dataflow's; on Flink or Spark the cluster's "
            "machines decide (see deploy/flink, deploy/spark)"
        )
    if job.worker_image is None:
        return []
    if beam.environment_type not in (None, "DOCKER"):
        raise DeploymentError(
            f"--worker-image needs --environment_type=DOCKER, not {beam.environment_type}"
        )
    return [
        "--environment_type=DOCKER",
        f"--environment_options=docker_container_image={job.worker_image}",
    ]


class Deployment(NamedTuple):
    """A run's settings and Beam flags once checked for its runner."""

    running: RunSettings
    beam_args: list[str]
    runner: str


def apply(job: RunSettings, beam_args: list[str]) -> Deployment:
    """Check the deployment flags for the chosen runner and return what to run with.

    Called by ``paramine.pipelines.run.mine`` before the pipeline is built.

    Args:
        job: Where and how the run runs; the returned copy has
            ``share_model_across_processes`` on for ``--gpu-mode shared_model``.
        beam_args: The Beam flags the user gave (the runner included).

    Raises:
        DeploymentError: The flags would fail at launch, or contradict each other.
    """
    beam = parse_beam_args(beam_args)
    runner = (beam.runner or "DirectRunner").rsplit(".", 1)[-1]
    if runner == DATAFLOW:
        added = dataflow_args(job, beam, job.inputs)
        if job.gpu_type is not None and job.gpu_mode == "shared_model":
            # One model per machine, served to the other SDK processes by
            # Beam's multi-process shared object.
            job = job.replace(share_model_across_processes=True)
    elif runner in PORTABLE_RUNNERS:
        added = portable_args(job, beam)
    else:
        deployment = [
            flag
            for flag, value in (
                ("--gpu-type", job.gpu_type),
                ("--worker-image", job.worker_image),
                ("--disk-size-gb", job.disk_size_gb),
            )
            if value is not None
        ]
        if deployment:
            raise DeploymentError(
                f"{', '.join(deployment)} apply to DataflowRunner (and --worker-image to "
                f"Flink/Spark); the {runner} runs here, with this machine's devices"
            )
        added = []
    result = [*beam_args, *added]
    parse_beam_args(result)  # what paramine added must be valid Beam flags too
    return Deployment(job, result, runner)


def describe(deployment: Deployment) -> str:
    """What ``--deploy-dry-run`` prints: the runner and every flag it would run with."""
    lines = [f"paramine: {deployment.runner} options checked; would run with:"]
    lines += [f"  {flag}" for flag in deployment.beam_args]
    if deployment.running.share_model_across_processes:
        lines.append("  (model handler: share_model_across_processes=True)")
    return "\n".join(lines)
