"""RunSettings: where and how a mining job runs, apart from what decides its pairs.

Inputs and output, progress, how work is spread (file spans, output shards,
batches), the device and the deployment (Dataflow GPUs, worker images).
Changing one of these changes where and how fast a job runs, never the pairs
it writes: those are ``MiningSettings`` (``mining.py``), and a refresh table
re-mines nothing when only these change. Beam's own flags (``--runner`` ...)
are not fields: they pass through to Beam untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from paramine.encoders.inference.backends import DEVICES
from paramine.pipelines.formats.base import DEFAULT_SPLIT_BYTES
from paramine.pipelines.settings.values import DEPLOY, IO, MODEL
from paramine.schemas.options import (
    Settings,
    one_of,
    option,
    optional,
    parse_non_negative,
    parse_positive,
)

#: The runner when none is named: Beam's in-process batch runner. Beam 2.77's
#: DirectRunner first downloads the Prism binary from GitHub and runs there
#: (only falling back to this one when the download fails), which is network
#: access at run time; Beam's maintainers advise naming FnApiRunner to keep the
#: local runner (apache/beam#34612).
DEFAULT_RUNNER = "FnApiRunner"

GPU_MODES = ("one_sdk_process", "mps", "shared_model")
#: Dataflow GPU types, with the GPU counts per worker and the Compute Engine
#: machine family each attaches to ("GPU platforms", "GPU machine types").
GPU_TYPES: dict[str, tuple[tuple[int, ...], str]] = {
    "nvidia-tesla-t4": ((1, 2, 4), "n1"),
    "nvidia-tesla-p4": ((1, 2, 4), "n1"),
    "nvidia-tesla-p100": ((1, 2, 4), "n1"),
    "nvidia-tesla-v100": ((1, 2, 4, 8), "n1"),
    "nvidia-l4": ((1, 2, 4, 8), "g2"),
    "nvidia-tesla-a100": ((1, 2, 4, 8, 16), "a2"),
    "nvidia-a100-80gb": ((1, 2, 4, 8), "a2"),
    "nvidia-h100-80gb": ((1, 2, 4, 8), "a3"),
}


@dataclass(frozen=True)
class RunSettings(Settings):
    """Where and how a job runs; checked when built, whatever built it."""

    COMMAND: ClassVar[str] = "paramine mine"

    inputs: tuple[str, ...] = option(
        (),
        "a shard: file, glob, directory or Moses prefix, any fsspec URL; repeat for more "
        "(INPUT positionals before the first flag are taken too)",
        group=IO,
        metavar="URL",
        many=True,
        flag="--input",
    )
    input_list: str | None = option(
        None,
        "a file (any fsspec URL) naming more inputs, one per line; for shard lists too "
        "long for a command line",
        group=IO,
    )
    corpus: str | None = option(
        None, "corpus name stored in every row (default: the file's stem)", group=IO
    )
    license: str | None = option(
        None,
        "licence of the inputs, for the dataset card (e.g. cc-by-2.0) (default: known for "
        "Tatoeba inputs, otherwise unknown)",
        group=IO,
    )
    output: str | None = option(
        None,
        "dataset directory, any fsspec URL (default: ./paramine-demo for the demo; "
        "required otherwise)",
        group=IO,
    )
    overwrite: bool = option(
        False,
        "replace a dataset that paramine wrote in --output; a folder paramine did not "
        "write is never replaced",
        group=IO,
        switch=True,
    )
    quiet: bool = option(
        False,
        "no progress bar or progress lines (the summary at the end is still printed)",
        group=IO,
        switch=True,
    )
    num_shards: int = option(
        0,
        "Parquet files per table; 0 lets the runner choose (default: %(default)s)",
        group=IO,
        parse=parse_non_negative,
    )
    split_bytes: int = option(
        DEFAULT_SPLIT_BYTES,
        "read uncompressed TSV, CzEng and Moses files in spans of about this many bytes on "
        "parallel workers; 0 never splits (default: %(default)s)",
        group=IO,
        parse=parse_non_negative,
    )
    write_scored: bool = option(
        False,
        "also score every prefiltered pair and write them with their scores and pass/fail "
        "as a third table, scored/ (a cleaned parallel corpus); encodes every text, so it "
        "is several times slower",
        group=IO,
        switch=True,
    )
    # Texts of a batch are sorted by length before encoding, so large batches
    # pad little (on Tatoeba eng-pol, batches of 512 pairs took 17% longer
    # than of 8,192). The encoder still runs in sub-batches of 128 texts of
    # one length, so memory does not grow with the budget.
    batch_tokens: int = option(
        65_536,
        "estimated tokens per RunInference batch of distinct texts (packed from many groups); "
        "the encoder sorts them by length and encodes 128 at a time (default: %(default)s)",
        group=MODEL,
        parse=parse_positive,
    )
    device: str = option(
        "auto",
        "where to encode (default: %(default)s: CUDA when present)",
        group=MODEL,
        choices=DEVICES,
    )
    share_model_across_processes: bool = option(
        False,
        "one model per worker machine shared by its SDK processes (GPU workers)",
        group=MODEL,
        switch=True,
    )
    gpu_type: str | None = option(
        None,
        "Dataflow: attach this GPU to every worker; needs --worker-image (default: no GPU)",
        group=DEPLOY,
        parse=optional(one_of(sorted(GPU_TYPES))),
        choices=sorted(GPU_TYPES),
    )
    gpu_count: int = option(
        1, "Dataflow: GPUs per worker (default: %(default)s)", group=DEPLOY, parse=parse_positive
    )
    gpu_mode: str = option(
        "one_sdk_process",
        "how a GPU worker runs the encoder: one_sdk_process (one Python process owns the "
        "GPU), mps (a process per vCPU sharing the GPU through NVIDIA MPS, a model each), "
        "shared_model (a process per vCPU, one model per machine) (default: %(default)s)",
        group=DEPLOY,
        choices=GPU_MODES,
    )
    worker_image: str | None = option(
        None,
        "worker container image (deploy/dataflow/Dockerfile): --sdk_container_image on "
        "Dataflow, a DOCKER environment on Flink/Spark (default: Beam's own image)",
        group=DEPLOY,
    )
    disk_size_gb: int | None = option(
        None,
        "Dataflow: worker boot disk in GB (default: Dataflow's; 50 with a GPU)",
        group=DEPLOY,
        parse=optional(parse_positive),
    )
    deploy_dry_run: bool = option(
        False,
        "check the runner options paramine builds, print them and exit without running",
        group=DEPLOY,
        switch=True,
    )
