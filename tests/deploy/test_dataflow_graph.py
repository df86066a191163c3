"""The Dataflow jobs of ``paramine mine`` and ``paramine refresh``, translated offline and checked.

``DataflowRunner`` with ``--dry_run True`` does everything a launch does up to
the request to the Dataflow service: Dataflow's overrides, the portable
pipeline proto that Runner v2 executes (its transforms named by the
pipeline's labels), the worker environment and the options, and returns
``result.job`` (``apiclient.Job``) instead of submitting. The same options
turn into the job's ``Environment`` (worker pool, service options) offline
too. Nothing here reaches the network: the buckets are served from memory
(fsspec), the conftest's resolver refuses every host but this one, and a
connect to anything but loopback fails the test.

The mining job is built by ``mine.run``, the code path of ``paramine mine``;
the refresh job by ``update._mine`` on a ``RefreshJob`` as ``refresh()``
plans it (its Delta table cannot be served from memory). Only the last step,
the runner's ``run_pipeline``, is wrapped: it translates for real, keeps the
job and stops the launcher, which would otherwise go on to read a dataset
that a dry run never writes.

Needs ``apache-beam[gcp]`` (the ``gcp`` extra, in ``dev``); under ``CI=true``
its absence fails rather than skips.
"""

from __future__ import annotations

import base64
import bz2
import contextlib
import errno
import importlib
import ipaddress
import json
import os
import re
import socket
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import fsspec
import pytest
from fsspec.implementations.memory import MemoryFileSystem
from paramine.encoders.inference.handler import EncoderHandler
from paramine.pipelines.refresh import update
from paramine.pipelines.refresh.config import RefreshConfig
from paramine.pipelines.refresh.job import RefreshJob
from paramine.pipelines.run import deploy, mine
from paramine.pipelines.run.launch import GraphRun
from paramine.pipelines.run.preflight import check_inputs, check_model
from paramine.schemas.table import REJECTS_DIR, RUNS_DIR, TableFile, state_url

# 10-15 s a job on 2 cores: the launcher's checks load the model's tokenizer,
# the graph is built; Dataflow's translation itself takes about 2 s.
pytestmark = pytest.mark.slow

BUCKET = "gs://paramine-graph-test"
IMAGE = "us-central1-docker.pkg.dev/proj/paramine/worker:0.1.0"
#: What Dataflow needs besides the runner. The bucket name must be a valid
#: one: for an invalid --temp_location Beam tries to create a default bucket,
#: online, and retries for minutes.
DATAFLOW = [
    "--runner=DataflowRunner",
    "--project=paramine-test",
    "--region=us-central1",
    f"--temp_location={BUCKET}/tmp",
    "--dry_run=True",
]
MODEL = f"{BUCKET}/models/tiny"
INPUTS = [f"{BUCKET}/bitext/part-0.en-pl.tsv", f"{BUCKET}/bitext/part-1.en-pl.tsv"]
ACCELERATOR = "worker_accelerator=type:nvidia-l4;count:1;install-nvidia-driver"

#: The stages of docs/architecture.md's mining graph, by label, as Dataflow
#: names the steps (update and metrics rely on these).
MINE_STEPS = [
    "ReadAndPrefilter",
    "ReadAndPrefilter/ReadBitext",
    "ReadAndPrefilter/Prefilter",
    "MineGroups",
    "MineGroups/GroupByPivot",
    "MineGroups/CalibrationSample",
    "MineGroups/RivalPairs",
    "MineGroups/EncodeTexts",
    "MineGroups/ScorePairs",
    "MineGroups/ContestCandidates",
    "MineGroups/EmbedSample",
    "MineGroups/MarginScore",
    "MineGroups/CalibrateThreshold",
    "MineGroups/ThresholdFilter",
    "MineGroups/CoherenceFilter",
    "MineGroups/RegroupByPivot",
    "PairGroups",
    "PairGroups/MakePairs",
    "PairGroups/PostFilter",
    "ThresholdRecord",
]
WRITE_STEPS = ["WritePairs", "WriteRejects", "WriteManifest"]
#: Where those stages are: mine's one composite holds MineParaphrases, then WriteDataset.
MINE = "MineDataset/MineParaphrases"
#: The composites refresh shares with mine, and its own steps.
REFRESH_STEPS = [
    "ReadAndPrefilter/ReadBitext",
    "ReadAndPrefilter/Prefilter",
    "MineGroups/GroupByPivot",
    "MineGroups/EncodeTexts",
    "MineGroups/RegroupByPivot",
    "PairGroups/MakePairs/ExtendCover",
    "PairGroups/PostFilter",
    "ThresholdRecord",
    "RetractRows",
    "AffectedPivots",
    "NotInTable",
    "WriteRejects",
    "WriteState",
    "WritePairs",
    "WriteSummary",
]
RUN_INFERENCE = "EncodeTexts/Encode/BeamML_RunInference"
#: Files Beam itself stages for the SDK harness (uploaded next to the job,
#: so their local paths never reach a worker); paramine adds none.
BEAM_ARTIFACTS = {"pickled_main_session", "submission_environment_dependencies.txt"}


class Translated(NamedTuple):
    """A translated Dataflow job: the portable pipeline, the job's environment and options."""

    pipeline: Any  # beam_runner_api_pb2.Pipeline
    environment: dict[str, Any]  # the Dataflow API's Environment, as JSON
    options: dict[str, Any]  # the SDK options the workers receive
    local_tempdir: str  # the launcher's own temp folder for this pipeline

    def steps(self) -> dict[str, Any]:
        """Transforms by their full label (``MineDataset/MineParaphrases/MineGroups/...``)."""
        return {t.unique_name: t for t in self.pipeline.components.transforms.values()}


class _Stop(Exception):
    """Raised once the job is translated: the launcher would go on to wait for a dataset."""


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def dataflow() -> Any:
    """Beam's Dataflow client, or a skip; in CI a failure, since the dev extra installs it."""
    try:
        from apache_beam.runners.dataflow import dataflow_runner
        from apache_beam.runners.dataflow.internal import apiclient  # noqa: F401
    except ImportError as error:
        missing = f"apache-beam[gcp] is not installed ({error}); pip install -e '.[gcp]'"
        if os.environ.get("CI") == "true":
            pytest.fail(
                f"{missing}, yet the dev extra includes it: the install step failed, "
                "see the start of the CI log",
                pytrace=False,
            )
        pytest.skip(missing)
    return dataflow_runner


@contextlib.contextmanager
def loopback_only() -> Iterator[list[Any]]:
    """Refuse and record every connect to an address that is not this machine's loopback.

    The conftest refuses to resolve other hosts; this also catches a connect
    to a literal address (a metadata server's 169.254.169.254).
    """
    attempts: list[Any] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def allowed(sock: socket.socket, address: Any) -> bool:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return True
        host = address[0]
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def connect(sock: socket.socket, address: Any) -> None:
        if not allowed(sock, address):
            attempts.append(address)
            raise OSError(errno.ENETUNREACH, f"tests run offline: {address} refused")
        real_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        if not allowed(sock, address):
            attempts.append(address)
            return errno.ENETUNREACH
        return real_connect_ex(sock, address)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    try:
        yield attempts
    finally:
        socket.socket.connect = real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = real_connect_ex  # type: ignore[method-assign]


def serve_buckets_from_memory(patch: pytest.MonkeyPatch) -> fsspec.AbstractFileSystem:
    """gs:// through fsspec (inputs, model, output checks) from a fresh in-memory store."""
    fake = type(
        "InMemoryGCS",
        (MemoryFileSystem,),
        {"protocol": ("gs", "gcs"), "store": {}, "pseudo_dirs": [""]},
    )
    known = importlib.import_module("fsspec.registry")._registry  # fsspec.registry is a view
    for name in ("gs", "gcs"):
        patch.setitem(known, name, fake)
    return fake()


def upload(fs: fsspec.AbstractFileSystem, folder: Path, url: str) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            fs.pipe_file(f"{url}/{path.relative_to(folder).as_posix()}", path.read_bytes())


def write_bitext(fs: fsspec.AbstractFileSystem) -> None:
    for n, url in enumerate(INPUTS):
        lines = [f"Sentence {i} of {n}.\tzdanie {i} {v} z {n}" for i in range(6) for v in range(3)]
        fs.pipe_file(url, ("\n".join(lines) + "\n").encode("utf-8"))


def capture_job(patch: pytest.MonkeyPatch, dataflow_runner: Any) -> dict[str, Any]:
    """Wrap ``DataflowRunner.run_pipeline``: translate for real, keep the job, then stop."""
    from apache_beam.options.pipeline_options import TestOptions

    runner_class = dataflow_runner.DataflowRunner
    translate = runner_class.run_pipeline
    caught: dict[str, Any] = {}

    def run_pipeline(self: Any, pipeline: Any, options: Any, pipeline_proto: Any = None) -> Any:
        assert options.view_as(TestOptions).dry_run, "this test must never submit a job"
        result = translate(self, pipeline, options, pipeline_proto)
        caught["job"] = result.job
        caught["local_tempdir"] = pipeline.local_tempdir
        raise _Stop

    patch.setattr(runner_class, "run_pipeline", run_pipeline)
    return caught


def translated(caught: dict[str, Any]) -> Translated:
    """The job Dataflow would receive: its pipeline, its Environment as JSON, its options."""
    from apache_beam.runners.dataflow.internal import apiclient
    from google.protobuf import json_format

    job = caught["job"]
    # What DataflowApplicationClient.create_job_description adds before the
    # request, minus the uploads: the workers' environment and options.
    environment = apiclient.Environment(
        packages=[],
        options=job.options,
        environment_version="8",  # Beam 2.77's FnAPI job environment
        proto_pipeline_staged_url=f"{BUCKET}/staging/pipeline.pb",
        proto_pipeline=job.proto_pipeline,
    )
    as_json = json.loads(json_format.MessageToJson(environment.proto._pb))
    options = as_json["sdkPipelineOptions"]["options"]
    return Translated(job.proto_pipeline, as_json, options, caught["local_tempdir"])


@pytest.fixture(scope="module")
def offline_gcs(
    dataflow: Any, tmp_path_factory: pytest.TempPathFactory, tiny_model_dir: Path
) -> Iterator[pytest.MonkeyPatch]:
    """The buckets in memory, the model cache in a temp folder, the network refused."""
    with pytest.MonkeyPatch.context() as patch, loopback_only() as attempts:
        fs = serve_buckets_from_memory(patch)
        patch.setenv("PARAMINE_CACHE", str(tmp_path_factory.mktemp("paramine-cache")))
        upload(fs, tiny_model_dir, MODEL)
        write_bitext(fs)
        yield patch
        assert not attempts, f"tried to connect to {attempts}: the dry run must stay offline"


@pytest.fixture(scope="module")
def mine_job(dataflow: Any, offline_gcs: pytest.MonkeyPatch) -> Translated:
    """``paramine mine`` on GPU workers, translated."""
    with pytest.MonkeyPatch.context() as patch:
        caught = capture_job(patch, dataflow)
        with pytest.raises(_Stop):
            mine.run(
                [
                    *INPUTS,
                    f"--output={BUCKET}/datasets/en-pl",
                    f"--model={MODEL}",
                    *DATAFLOW,
                    "--gpu-type=nvidia-l4",
                    f"--worker-image={IMAGE}",
                ]
            )
    return translated(caught)


@pytest.fixture(scope="module")
def refresh_job(dataflow: Any, offline_gcs: pytest.MonkeyPatch) -> Translated:
    """A later ``paramine refresh`` on CPU workers (a table with files, a shard retracted)."""
    root = f"{BUCKET}/tables/en-pl"
    config = RefreshConfig(
        output=root,
        inputs=[f"{BUCKET}/bitext/*.tsv"],
        model=MODEL,
        options={"worker-image": IMAGE},
        beam_args=DATAFLOW,
        buckets=4,
    )
    # As refresh() does before it mines; the plan and the tables' files are
    # what _plan and _start would read from the Delta log.
    shards, _ = check_inputs(config.mining, config.running)
    check_model(config.mining)
    deployment = deploy.apply(config.running, list(config.beam_args))
    run_id = "20260101T000000Z-graph"
    job = RefreshJob(
        root=root,
        run_id=run_id,
        buckets=4,
        shards=tuple(shards),
        retracted=frozenset({f"{BUCKET}/bitext/removed.en-pl.tsv"}),
        state_files=(TableFile(f"{state_url(root)}/bucket=1/part-old-1.parquet", 1),),
        pair_files=(TableFile(f"{root}/bucket=1/part-old-1.parquet", 1),),
        state_dir=state_url(root),
        rejects_dir=f"{root}/{REJECTS_DIR}/{run_id}",
        summary_url=f"{root}/{RUNS_DIR}/{run_id}/summary.json",
    )
    with pytest.MonkeyPatch.context() as patch:
        caught = capture_job(patch, dataflow)
        with pytest.raises(_Stop), GraphRun(deployment, 0, quiet=True) as launch:
            update._mine(config, job, launch)
    return translated(caught)


# ------------------------------------------------------------------ reading a job

#: A zlib (level 9) or bz2 stream, base64-encoded: how Beam pickles functions,
#: DoFns, coders and Create's values into the proto.
_PICKLED = re.compile(rb"(?:eNo|QlpoO)[A-Za-z0-9+/]*={0,2}")


def _unpacked(blob: bytes) -> bytes | None:
    """The pickle inside a base64 zlib/bz2 blob; the run may carry a byte of the next field."""
    for end in range(len(blob), max(len(blob) - 4, 0), -1):
        try:
            raw = base64.b64decode(blob[: end - end % 4])
        except ValueError:
            continue
        decoder: Any = bz2.BZ2Decompressor() if raw.startswith(b"BZh") else zlib.decompressobj()
        try:
            data = decoder.decompress(raw)
        except (OSError, zlib.error, ValueError):
            continue
        if decoder.eof:
            return bytes(data)
    return None


def job_bytes(job: Translated) -> tuple[bytes, list[str]]:
    """Everything a worker receives, pickles unpacked; and the staged artifacts' names.

    Beam's own staged files (its temp folder, uploaded beside the job) are
    left out of the bytes and returned by name.
    """
    from apache_beam.portability.api import beam_runner_api_pb2

    pipeline = beam_runner_api_pb2.Pipeline()
    pipeline.CopyFrom(job.pipeline)
    staged = []
    for environment in pipeline.components.environments.values():
        for artifact in environment.dependencies:
            role = beam_runner_api_pb2.ArtifactStagingToRolePayload.FromString(
                artifact.role_payload
            )
            staged.append(role.staged_name)
        del environment.dependencies[:]
    chunks = [pipeline.SerializeToString(), json.dumps(job.environment).encode("utf-8")]
    pending = list(chunks)
    while pending:  # a pickle may hold another pickled blob
        for match in _PICKLED.finditer(pending.pop()):
            data = _unpacked(match.group())
            if data is not None:
                chunks.append(data)
                pending.append(data)
    return b"\n".join(chunks), staged


def run_inference_handler(job: Translated) -> Any:
    """The model handler inside the job's one RunInference step."""
    from apache_beam.internal import pickler
    from apache_beam.portability.api import beam_runner_api_pb2

    steps = [t for name, t in job.steps().items() if name.endswith(RUN_INFERENCE)]
    assert len(steps) == 1, "each distinct text is encoded once, by one RunInference step"
    payload = beam_runner_api_pb2.ParDoPayload.FromString(steps[0].spec.payload)
    do_fn, *_ = pickler.loads(payload.do_fn.payload)  # (fn, args, kwargs, ...)
    handler = do_fn._model_handler
    assert isinstance(handler, EncoderHandler), type(handler)
    return handler


def local_paths(job: Translated, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Paths of this machine found in the job (pytest's temp folders, the model cache, ~)."""
    data, _ = job_bytes(job)
    base = tmp_path_factory.getbasetemp()
    needles = {
        str(base),
        # A pickled Path holds its parts, not the joined string.
        base.parent.name,
        str(Path.home() / ".cache"),
        os.environ["PARAMINE_CACHE"],
        job.local_tempdir,
    }
    return sorted(n for n in needles if n.encode("utf-8") in data)


# ------------------------------------------------------------------ mine


def test_mine_job_has_the_stage_labels(mine_job: Translated) -> None:
    steps = mine_job.steps()
    # One transform applied by the launcher: the graph writes its own dataset.
    top = {name for name in steps if "/" not in name}
    assert "MineDataset" in top and not top & {"MineParaphrases", "WriteDataset"}
    missing = [s for s in MINE_STEPS if f"{MINE}/{s}" not in steps]
    missing += [s for s in WRITE_STEPS if f"MineDataset/WriteDataset/{s}" not in steps]
    assert not missing, f"steps missing from the Dataflow graph: {missing}"
    # Every step runs in the worker image: one Docker environment.
    environments = mine_job.pipeline.components.environments
    assert len(environments) == 1
    (environment,) = environments.values()
    assert environment.urn == "beam:env:docker:v1"
    assert IMAGE.encode() in environment.payload


def test_mine_job_encodes_through_one_run_inference(mine_job: Translated) -> None:
    steps = mine_job.steps()
    (name,) = [n for n in steps if n.endswith(RUN_INFERENCE)]
    assert name == f"{MINE}/MineGroups/{RUN_INFERENCE}"
    assert steps[name].spec.urn == "beam:transform:pardo:v1"
    # Batched by the handler's token budget, before the model sees them.
    assert f"{MINE}/MineGroups/EncodeTexts/Encode/BatchElements" in steps
    handler = run_inference_handler(mine_job)
    # The worker resolves the model from the bucket; the launcher's copy stays here.
    assert handler.model_name == MODEL
    assert handler.device == "auto"
    assert handler.share_model_across_processes() is False  # --gpu-mode one_sdk_process


def test_mine_job_asks_for_the_gpu(mine_job: Translated) -> None:
    environment = mine_job.environment
    assert environment["serviceOptions"] == [ACCELERATOR]
    (pool,) = environment["workerPools"]
    assert pool["machineType"] == "g2-standard-8"  # L4 attaches to G2 machines only
    assert pool["diskSizeGb"] == 50
    assert pool["workerHarnessContainerImage"] == IMAGE
    assert "no_use_multiple_sdk_containers" in environment["experiments"]
    assert "use_runner_v2" in environment["experiments"]
    assert mine_job.options["dataflow_service_options"] == [ACCELERATOR]
    # Asked for once, for the job's workers, not again as a step's resource hint.
    for env in mine_job.pipeline.components.environments.values():
        assert not env.resource_hints


def test_mine_job_holds_no_local_path(
    mine_job: Translated, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data, staged = job_bytes(mine_job)
    assert set(staged) <= BEAM_ARTIFACTS
    assert MODEL.encode() in data and INPUTS[0].encode() in data
    assert f"{BUCKET}/datasets/.en-pl".encode() in data  # the staging folder beside --output
    assert local_paths(mine_job, tmp_path_factory) == []


# ------------------------------------------------------------------ refresh


def test_refresh_job_has_the_stage_labels(refresh_job: Translated) -> None:
    steps = refresh_job.steps()
    missing = [s for s in REFRESH_STEPS if f"RefreshParaphrases/{s}" not in steps]
    assert not missing, f"steps missing from the Dataflow graph: {missing}"
    (name,) = [n for n in steps if n.endswith(RUN_INFERENCE)]
    assert name == f"RefreshParaphrases/MineGroups/{RUN_INFERENCE}"
    assert run_inference_handler(refresh_job).model_name == MODEL


def test_refresh_job_on_cpu_workers_asks_for_no_gpu(refresh_job: Translated) -> None:
    environment = refresh_job.environment
    assert not environment.get("serviceOptions")
    (pool,) = environment["workerPools"]
    assert "machineType" not in pool and "diskSizeGb" not in pool  # Dataflow's defaults
    assert pool["workerHarnessContainerImage"] == IMAGE
    assert "no_use_multiple_sdk_containers" not in environment["experiments"]


def test_refresh_job_holds_no_local_path(
    refresh_job: Translated, tmp_path_factory: pytest.TempPathFactory
) -> None:
    data, staged = job_bytes(refresh_job)
    assert set(staged) <= BEAM_ARTIFACTS
    for url in (MODEL, INPUTS[0], f"{BUCKET}/tables/en-pl/_paramine/state"):
        assert url.encode() in data
    assert local_paths(refresh_job, tmp_path_factory) == []


def test_beam_dry_run_through_paramine_mine_ends_with_nothing_written(
    dataflow: Any, offline_gcs: pytest.MonkeyPatch
) -> None:
    # `paramine mine ... --runner DataflowRunner --dry_run True` translated the
    # job, then failed waiting for a manifest that a dry run never writes.
    output = f"{BUCKET}/datasets/dry-run"
    args = [*INPUTS, f"--output={output}", f"--model={MODEL}", f"--worker-image={IMAGE}"]
    done = mine.run_job(mine.job_from_command_line([*args, *DATAFLOW]))
    assert done.manifest is None and done.counters == {}
    assert "translated for DataflowRunner and not submitted" in done.dry_run
    fs = fsspec.filesystem("gs")
    assert not fs.exists(output)
    assert not [p for p in fs.find(f"{BUCKET}/datasets") if "dry-run" in p]
