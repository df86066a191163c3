"""``paramine mine``: bitext in, a Parquet dataset of paraphrase pairs out.

pairs | "ReadBitext" | "Prefilter" | "ScorePairs" | "ThresholdFilter"
      | "GroupByPivot" | "MakePairs" | "PostFilter" | "WriteDataset"
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import sys
import time
from collections.abc import Sequence
from importlib import resources
from typing import Any, NoReturn

import apache_beam as beam
import fsspec
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import (
    PipelineOptions,
    StandardOptions,
    _BeamArgumentParser,
)

from encoders.handler import PairEncoderHandler
from encoders.models import resolve_model
from pipelines import dataflow
from pipelines.accounting import CountStage
from pipelines.calibrate import CalibrateThreshold, EmbedSample, SummarizeScores
from pipelines.fingerprint import fingerprint
from pipelines.formats import ReaderOptions, Shard, read_input_list, resolve_inputs
from pipelines.group_by_pivot import GroupByPivot, group_weight
from pipelines.make_pairs import MakePairs
from pipelines.margin import MarginScore, MarginScoring
from pipelines.options import DEFAULT_RUNNER, MineOptions, resolve_score
from pipelines.postfilter import PostFilter
from pipelines.prefilter import Prefilter, PrefilterOptions
from pipelines.read_bitext import ReadBitext
from pipelines.score import ScorePairs, ThresholdFilter
from pipelines.write_dataset import WriteDataset
from schemas.manifest import MANIFEST_NAME, Manifest, read_manifest

DEMO_OUTPUT = "paramine-demo"
DEMO_LANGS = ("en", "pl")


def demo_input() -> str:
    """Path of the built-in demo bitext (English-Polish, written for paramine)."""
    return str(resources.files("pipelines.demo") / "demo.en-pl.tsv")


def code_version() -> str:
    """The installed paramine version."""
    try:
        return "paramine " + importlib.metadata.version("paramine")
    except importlib.metadata.PackageNotFoundError:
        return "paramine (not installed)"


def build_parser(with_inputs: bool = True) -> argparse.ArgumentParser:
    """The parser of ``paramine mine``: INPUT... plus MineOptions' flags.

    Args:
        with_inputs: Include the INPUT positional. Without it, the parser
            reads argv once ``split_inputs`` has taken the INPUTs out, so that
            the values of Beam's flags stay with their flags.
    """
    parser = argparse.ArgumentParser(
        prog="paramine mine",
        description=(
            "Mine paraphrase pairs from sentence-aligned bitext: score each (pivot, "
            "candidate) pair with a multilingual encoder, keep those above the threshold, "
            "group candidates that translate the same pivot, and write pairs of them as "
            "Parquet with a manifest. With no INPUT, mines the built-in English-Polish demo."
        ),
        epilog=(
            f"Beam options pass through, e.g. --runner {DEFAULT_RUNNER} "
            "--direct_running_mode multi_processing --direct_num_workers 2. "
            f"The runner defaults to {DEFAULT_RUNNER}, Beam's in-process runner: Beam's "
            "DirectRunner would first download the Prism binary."
        ),
    )
    if with_inputs:
        parser.add_argument(
            "inputs",
            nargs="*",
            metavar="INPUT",
            help="shards: files, globs, directories or Moses prefixes, any fsspec URL "
            "(Moses pairs: FILE.<src>/FILE.<tgt>, plain or .gz; TSV: 2 columns or Tatoeba's 4)",
        )
    MineOptions._add_argparse_args(parser)
    return parser


class _Token(str):
    """A command-line token that remembers its position in argv."""

    position: int


class _SplitError(Exception):
    pass


class _SplitParser(_BeamArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _SplitError(message)


def split_inputs(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Separate the INPUT arguments from the flags, Beam's flags included.

    A parser that knows only paramine's flags cannot tell whether the token
    after a Beam flag is its value or an INPUT (``--runner DirectRunner``),
    so this one knows the flags of every PipelineOptions class, as Beam's
    own parsing does. Tokens remember their position, so an INPUT that
    equals a flag's value is still told apart.

    Returns:
        The INPUTs, and argv without them. When the flags do not parse, no
        INPUT is split off and the paramine parser reports the error.
    """
    tokens = []
    for index, text in enumerate(argv):
        token = _Token(text)
        token.position = index
        tokens.append(token)
    parser = _SplitParser(add_help=False, allow_abbrev=False)
    parser.add_argument("inputs", nargs="*")
    for cls in {str(c): c for c in PipelineOptions.__subclasses__()}.values():
        cls._add_argparse_args(parser)
    try:
        # Intermixed: INPUTs may come before, between and after the flags.
        known, _ = parser.parse_known_intermixed_args(tokens)
    except _SplitError:
        return [], list(argv)
    if any(text in ("-h", "--help") for text in argv):
        return [], list(argv)
    positions = {token.position for token in known.inputs}
    inputs = [argv[i] for i in sorted(positions)]
    return inputs, [text for i, text in enumerate(argv) if i not in positions]


def _prepare_output(output: str, overwrite: bool) -> None:
    fs, path = fsspec.core.url_to_fs(output)
    if not fs.exists(path) or not fs.ls(path):
        return
    if not overwrite:
        raise SystemExit(
            f"paramine mine: {output} is not empty; pass --overwrite to replace it, or choose "
            "another --output"
        )
    # The manifest goes first: a half-deleted dataset must read as incomplete.
    for name in (MANIFEST_NAME, "pairs", "rejects"):
        target = f"{path.rstrip('/')}/{name}"
        if fs.exists(target):
            fs.rm(target, recursive=True)


def build_pipeline(
    pipeline: beam.Pipeline,
    shards: list[Shard],
    job: MineOptions,
    base: dict[str, Any],
) -> None:
    """Add the mining graph to ``pipeline``: shards in, dataset written."""
    score = resolve_score(job.score, job.threshold)
    handler = PairEncoderHandler(
        job.model,
        batch_size=job.batch_size,
        device=job.device,
        prefix=job.prefix,
        share_across_processes=job.share_model_across_processes,
        # Margin scoring needs each pair's embeddings right after encoding.
        keep_vectors=job.threshold == "auto" and score == "margin",
    )
    reader_options = ReaderOptions(
        invalid_utf8=job.invalid_utf8,
        max_line_chars=job.max_line_chars,
        on_length_mismatch=job.on_length_mismatch,
        xces_links=job.xces_links,
        on_malformed_xml=job.on_malformed_xml,
        tsv_columns=tuple(job.tsv_columns) if job.tsv_columns else None,
        split_bytes=job.split_bytes,
    )
    prefilter_options = PrefilterOptions(
        min_words=job.min_words,
        max_words=job.max_words,
        max_length_ratio=job.max_length_ratio,
        sentence_count_filter=job.sentence_count_filter,
    )

    read = pipeline | "ReadBitext" >> ReadBitext(shards, reader_options)
    prefiltered = read.kept | "Prefilter" >> Prefilter(prefilter_options)
    scored = prefiltered.kept | "ScorePairs" >> ScorePairs(handler)
    if job.threshold == "auto":
        # The sample is embedded on its own, so no scored pair waits for it
        # holding its embeddings: margin scoring uses each pair's vectors as
        # they leave the encoder and drops them in the same step.
        sample = prefiltered.kept | "CalibrationSample" >> EmbedSample(
            handler, job.calibration_sample
        )
        scoring = None
        if score == "margin":
            scored = scored | "MarginScore" >> MarginScore(job.margin_k, sample)
            scoring = MarginScoring(job.margin_k)
        threshold = sample | "CalibrateThreshold" >> CalibrateThreshold(
            job.max_false_accept, scoring=scoring
        )
    else:
        threshold = pipeline | "FixedThreshold" >> beam.Create(
            [{"mode": "fixed", "value": float(job.threshold), "score": score}]
        )
    cut = threshold | "CutValue" >> beam.Map(lambda info: info["value"])
    kept = scored | "ThresholdFilter" >> ThresholdFilter(cut)
    groups = kept.kept | "GroupByPivot" >> GroupByPivot(job.max_group_size)
    pairs = groups.kept | "MakePairs" >> MakePairs(
        job.pair_mode, job.max_pairs_per_group, job.near_equal
    )
    final = pairs | "PostFilter" >> PostFilter(job.near_equal)

    counts = (
        read | "CountRead" >> CountStage("read"),
        prefiltered | "CountPrefilter" >> CountStage("prefilter", taken_in=read.kept),
        kept | "CountThreshold" >> CountStage("threshold", taken_in=prefiltered.kept),
        groups | "CountGroup" >> CountStage("group", taken_in=kept.kept, weight=group_weight),
        final | "CountPostFilter" >> CountStage("postfilter", taken_in=pairs),
        read.repairs,
    ) | "AllCounts" >> beam.Flatten()

    true_scores = scored | "SummarizeScores" >> SummarizeScores()
    threshold_info = (
        pipeline
        | "ThresholdOnce" >> beam.Create([None])
        | "ThresholdInfo"
        >> beam.Map(
            lambda _, info, aligned: {**info, "aligned": aligned},
            beam.pvalue.AsSingleton(threshold),
            beam.pvalue.AsSingleton(true_scores),
        )
    )
    _ = {
        "pairs": final.kept,
        "rejects": read.rejected,
        "counts": counts,
        "threshold": threshold_info,
    } | "WriteDataset" >> WriteDataset(job.output, base, job.num_shards)


def _summary(manifest: Manifest, output: str, seconds: float, counters: dict[str, int]) -> str:
    c = manifest.counts
    read = c["read"]["in"]
    lines = [
        f"paramine: mined {output if '://' in output else os.path.abspath(output)}",
        f"  records read        {read:>10,}",
        f"  rejected at read    {sum(c['read']['dropped'].values()):>10,}",
        f"  kept by prefilter   {c['prefilter']['kept']:>10,}",
        f"  kept by threshold   {c['threshold']['kept']:>10,}   "
        f"(cut {manifest.threshold.get('value')}, {manifest.threshold.get('mode')})",
        f"  candidates grouped  {c['group']['kept']:>10,}",
        f"  pairs made          {c['postfilter']['in']:>10,}",
        f"  pairs written       {manifest.rows['pairs']:>10,}",
        f"  time {seconds:,.1f} s, {read / max(seconds, 1e-9):,.0f} records/s",
    ]
    if counters.get("pairs_scored"):
        lines.append(
            f"  texts encoded {counters.get('texts_encoded', 0):,} (the calibration sample's "
            f"included) for {counters['pairs_scored']:,} pairs scored"
        )
    for stage in ("read", "prefilter", "threshold", "group", "postfilter"):
        for reason, n in c[stage]["dropped"].items():
            lines.append(f"    dropped at {stage:<10} {reason:<26} {n:>8,}")
    for reason, n in c.get("repairs", {}).items():
        lines.append(f"    repaired and kept     {reason:<26} {n:>8,}")
    return "\n".join(lines)


def run(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> Manifest:
    """Run the mining job and return the manifest of the dataset it wrote.

    Args:
        argv: Command-line arguments (INPUT... and flags); ``sys.argv`` by default.
        test_pipeline: A pipeline to build into instead of a new one (tests).
    """
    return run_with_metrics(argv, test_pipeline)[0]


def _counters(result: beam.runners.runner.PipelineResult) -> dict[str, int]:
    """The ``paramine`` counters of a finished run, summed over steps."""
    totals: dict[str, int] = {}
    try:
        query = result.metrics().query(MetricsFilter().with_namespace("paramine"))
    except (NotImplementedError, AttributeError):  # some runners report no metrics
        return totals
    for counter in query["counters"]:
        name = counter.key.metric.name
        totals[name] = totals.get(name, 0) + int(counter.committed or counter.attempted or 0)
    return totals


def run_with_metrics(
    argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None
) -> tuple[Manifest, dict[str, int]]:
    """Like ``run``, and also return the run's ``paramine`` Beam counters."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    inputs, flags = split_inputs(argv)
    if any(flag in ("-h", "--help") for flag in flags):
        parser.parse_args(["--help"])
    args, beam_args = build_parser(with_inputs=False).parse_known_args(flags)
    if args.input_list:
        inputs += read_input_list(args.input_list)
    if not inputs:
        if (args.src_lang, args.tgt_lang) != DEMO_LANGS:
            parser.error("the built-in demo is English-Polish: give INPUT for other languages")
        inputs = [demo_input()]
        args.output = args.output or DEMO_OUTPUT
        print(f"paramine: no INPUT given, mining the built-in demo {inputs[0]}", file=sys.stderr)
    if not args.output:
        parser.error("--output is required when INPUT is given")
    if not any(a == "--runner" or a.startswith("--runner=") for a in beam_args):
        beam_args.append(f"--runner={DEFAULT_RUNNER}")
    try:
        # Validated and translated before anything is built or launched.
        beam_args = dataflow.apply(args, beam_args, inputs)
    except dataflow.DeploymentError as error:
        parser.error(str(error))
    job_values = {k: v for k, v in vars(args).items() if k != "inputs"}
    options = PipelineOptions(beam_args, **job_values)
    job = options.view_as(MineOptions)

    try:
        shards = resolve_inputs(inputs, job.src_lang, job.tgt_lang, job.input_format, job.corpus)
    except ValueError as error:
        parser.error(str(error))
    _prepare_output(job.output, job.overwrite)

    model = resolve_model(job.model)
    base = {
        "created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "code_version": code_version(),
        "options": {
            **job_values,
            "inputs": inputs,
            "runner": options.view_as(StandardOptions).runner,
        },
        "model": {
            "spec": job.model,
            "id": model.model_id,
            "revision": model.revision,
            "prefix": job.prefix if job.prefix is not None else model.prefix,
        },
        "inputs": [
            {"format": s.format, "corpus": s.corpus, "files": [fingerprint(f) for f in s.files]}
            for s in shards
        ],
    }

    start = time.monotonic()
    pipeline = test_pipeline or beam.Pipeline(options=options)
    build_pipeline(pipeline, shards, job, base)
    result = pipeline.run()
    result.wait_until_finish()
    counters = _counters(result)
    manifest = read_manifest(job.output)
    print(_summary(manifest, job.output, time.monotonic() - start, counters), file=sys.stderr)
    return manifest, counters


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``paramine mine``."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    run(argv)
    return 0
