"""Deployment flags: what paramine asks Dataflow (and Flink/Spark) for, checked before launch."""

from __future__ import annotations

import pytest
from apache_beam.options.pipeline_options import (
    DebugOptions,
    GoogleCloudOptions,
    PipelineOptions,
    PortableOptions,
    WorkerOptions,
)
from paramine.pipelines.run import deploy as dataflow
from paramine.pipelines.run import mine
from paramine.pipelines.settings.running import RunSettings

IMAGE = "us-central1-docker.pkg.dev/proj/paramine/worker:0.1.0"
DATAFLOW = [
    "--runner=DataflowRunner",
    "--project=proj",
    "--region=us-central1",
    "--temp_location=gs://bucket/tmp",
]
INPUTS = ["gs://bucket/bitext/*.tsv"]


def build(argv: list[str]) -> tuple[RunSettings, list[str]]:
    """Parse like ``paramine mine`` does; return the run settings and Beam flags it runs with."""
    job = mine.job_from_command_line([*INPUTS, "--output=gs://bucket/out", *argv])
    deployment = dataflow.apply(job.running, job.beam_args)
    return deployment.running, deployment.beam_args


def test_gpu_options_are_what_dataflow_documents() -> None:
    job, args = build([*DATAFLOW, "--gpu-type=nvidia-l4", f"--worker-image={IMAGE}"])
    # "Run a pipeline with GPUs": the accelerator, with the driver installed,
    # its parts separated by semicolons (Beam splits this flag on commas).
    assert (
        "--dataflow_service_options=worker_accelerator=type:nvidia-l4;count:1;"
        "install-nvidia-driver" in args
    )
    # "GPU best practices": one SDK process owns the GPU.
    assert "--experiments=no_use_multiple_sdk_containers" in args
    assert f"--sdk_container_image={IMAGE}" in args
    assert "--disk_size_gb=50" in args
    assert "--machine_type=g2-standard-8" in args  # L4 attaches to G2 machines only
    assert job.share_model_across_processes is False

    # Beam reads them back as the options Dataflow receives.
    options = PipelineOptions(args)
    assert options.view_as(GoogleCloudOptions).dataflow_service_options == [
        "worker_accelerator=type:nvidia-l4;count:1;install-nvidia-driver"
    ]
    assert options.view_as(DebugOptions).lookup_experiment("no_use_multiple_sdk_containers")
    workers = options.view_as(WorkerOptions)
    assert (workers.machine_type, workers.disk_size_gb) == ("g2-standard-8", 50)
    assert workers.sdk_container_image == IMAGE


def test_mps_and_shared_model_modes() -> None:
    _, args = build(
        [
            *DATAFLOW,
            "--gpu-type=nvidia-tesla-t4",
            "--gpu-count=2",
            "--gpu-mode=mps",
            "--machine_type=n1-highmem-8",
            f"--worker-image={IMAGE}",
        ]
    )
    assert (
        "--dataflow_service_options=worker_accelerator=type:nvidia-tesla-t4;count:2;"
        "install-nvidia-driver;use_nvidia_mps" in args
    )
    assert not any("no_use_multiple_sdk_containers" in a for a in args)
    assert not any(a.startswith("--machine_type=n1-standard") for a in args)

    job, args = build(
        [
            *DATAFLOW,
            "--gpu-type=nvidia-tesla-a100",
            "--gpu-mode=shared_model",
            f"--worker-image={IMAGE}",
            "--disk-size-gb=100",
        ]
    )
    # Many SDK processes, one model per machine through Beam's shared model.
    assert job.share_model_across_processes is True
    assert not any("no_use_multiple_sdk_containers" in a for a in args)
    assert "--disk_size_gb=100" in args and "--machine_type=a2-highgpu-1g" in args


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            [
                "--gpu-type=nvidia-l4",
                "--gpu-mode=mps",
                "--experiments=no_use_multiple_sdk_containers",
            ],
            "contradicts --gpu-mode mps",
        ),
        (["--gpu-type=nvidia-l4", "--gpu-mode=mps", "--share-model-across-processes"], "own model"),
        (["--gpu-type=nvidia-l4", "--share-model-across-processes"], "shares nothing"),
        (
            [
                "--gpu-type=nvidia-l4",
                "--dataflow_service_options=worker_accelerator=type:nvidia-l4;count:1",
            ],
            "not both",
        ),
        (["--gpu-type=nvidia-l4", "--machine_type=n1-standard-8"], "g2- machine types only"),
        (["--gpu-type=nvidia-tesla-t4", "--gpu-count=3"], "counts 1, 2, 4"),
        (["--gpu-type=nvidia-l4", "--disk-size-gb=20"], "at least 30 GB"),
        (["--gpu-type=nvidia-l4", "--device=cpu"], "GPU idle"),
        (["--gpu-mode=mps"], "add --gpu-type"),
    ],
)
def test_contradictions_are_refused(argv: list[str], message: str) -> None:
    with pytest.raises(dataflow.DeploymentError, match=message):
        build([*DATAFLOW, f"--worker-image={IMAGE}", *argv])


def test_dataflow_launch_needs_its_basics() -> None:
    job = mine.job_from_command_line(
        ["local.tsv", "--output=out", "--runner=DataflowRunner", "--gpu-type=nvidia-l4"]
    )
    with pytest.raises(dataflow.DeploymentError) as error:
        dataflow.apply(job.running, job.beam_args)
    text = str(error.value)
    for needed in (
        "--project",
        "--region",
        "--temp_location",
        "local files",
        "is local",
        "--worker-image",
    ):
        assert needed in text


def test_unknown_beam_option_is_an_error() -> None:
    with pytest.raises(dataflow.DeploymentError, match="--machine_typo"):
        build([*DATAFLOW, "--machine_typo=n1-standard-4", f"--worker-image={IMAGE}"])


def test_local_and_portable_runners() -> None:
    _, args = build(["--runner=DirectRunner"])
    assert args == ["--runner=DirectRunner"]
    with pytest.raises(dataflow.DeploymentError, match="apply to DataflowRunner"):
        build(["--runner=DirectRunner", "--gpu-type=nvidia-l4"])

    _, args = build(
        ["--runner=FlinkRunner", "--flink_master=localhost:8081", f"--worker-image={IMAGE}"]
    )
    portable = PipelineOptions(args).view_as(PortableOptions)
    assert portable.environment_type == "DOCKER"
    assert portable.lookup_environment_option("docker_container_image") == IMAGE


def test_dry_run_prints_and_launches_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = mine.run(
        [
            *INPUTS,
            "--output=gs://bucket/out",
            *DATAFLOW,
            "--gpu-type=nvidia-l4",
            f"--worker-image={IMAGE}",
            "--deploy-dry-run",
        ]
    )
    assert manifest is None  # nothing written; no SystemExit from the library
    err = capsys.readouterr().err
    assert "DataflowRunner options checked" in err
    assert "worker_accelerator=type:nvidia-l4;count:1;install-nvidia-driver" in err
