"""MineOptions: the flags of ``paramine mine``, each with help and a laptop default."""

from __future__ import annotations

import argparse

from apache_beam.options.pipeline_options import PipelineOptions

from pipelines.dataflow import add_arguments as add_deployment_arguments
from pipelines.formats.base import (
    DEFAULT_SPLIT_BYTES,
    INVALID_UTF8_POLICIES,
    LENGTH_MISMATCH_POLICIES,
    MALFORMED_XML_POLICIES,
    XCES_LINK_POLICIES,
)
from pipelines.make_pairs import PAIR_MODES
from pipelines.margin import DEFAULT_MARGIN_K

DEFAULT_MODEL = "e5-small"
#: The runner when none is named: Beam's in-process batch runner. Beam 2.77's
#: DirectRunner first downloads the Prism binary from GitHub and runs there
#: (only falling back to this one when the download fails), which is network
#: access at run time; Beam's maintainers advise naming FnApiRunner to keep the
#: local runner (apache/beam#34612).
DEFAULT_RUNNER = "FnApiRunner"
#: Values of ``--score``.
SCORES = ("cosine", "margin")


def resolve_score(score: str | None, threshold: str) -> str:
    """The score a run cuts on: ``--score``, or by default margin with ``--threshold auto``.

    Margin is the default where it can be: on Tatoeba ces-eng and eng-pol
    with 20% noise it kept more true pairs than the cosine at the same or
    higher precision (docs/thresholds.md). A fixed ``--threshold`` is a
    cosine; margins are calibrated only (their scale depends on the data).

    Raises:
        ValueError: ``score`` is not one of ``SCORES``, or is margin with a
            fixed threshold.
    """
    if score is None:
        return "margin" if threshold == "auto" else "cosine"
    if score not in SCORES:
        raise ValueError(f"--score {score!r}; allowed: {', '.join(SCORES)}")
    if score == "margin" and threshold != "auto":
        raise ValueError(
            f"--score margin needs --threshold auto (got --threshold {threshold}): a margin's "
            "scale depends on the data, so its cut is calibrated; use --score cosine for a "
            "fixed cosine cut"
        )
    return score


def threshold_value(text: str) -> str:
    """Parse ``--threshold``: ``auto`` or a number in [-1, 1]."""
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--threshold {text!r}: give 'auto' or a cosine such as 0.8"
        ) from None
    if not -1.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"--threshold {value} is not a cosine in [-1, 1]")
    return text


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{value} is not a share in (0, 1)")
    return value


def tsv_columns(text: str) -> tuple[int, int]:
    """Parse ``--tsv-columns``: two different 1-based column numbers, ``PIVOT,CANDIDATE``."""
    try:
        pivot, candidate = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--tsv-columns {text!r}: give two column numbers, pivot first, e.g. 3,4"
        ) from None
    if min(pivot, candidate) < 1 or pivot == candidate:
        raise argparse.ArgumentTypeError(
            f"--tsv-columns {text!r}: columns are numbered from 1 and must differ"
        )
    return pivot, candidate


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive integer")
    return value


class MineOptions(PipelineOptions):
    """Options of the mining job; Beam's own options pass through unchanged."""

    @classmethod
    def _add_argparse_args(cls, parser: argparse.ArgumentParser) -> None:
        io = parser.add_argument_group("input and output")
        io.add_argument(
            "--src-lang",
            dest="src_lang",
            default="en",
            help="language of the pivot (source) side, e.g. en (default: %(default)s)",
        )
        io.add_argument(
            "--tgt-lang",
            dest="tgt_lang",
            default="pl",
            help="language of the candidates, whose paraphrases are mined (default: %(default)s)",
        )
        io.add_argument(
            "--output",
            dest="output",
            default=None,
            help="dataset directory, any fsspec URL (default: ./paramine-demo "
            "for the demo; required otherwise)",
        )
        io.add_argument(
            "--overwrite",
            dest="overwrite",
            action="store_true",
            help="replace a dataset already in --output",
        )
        io.add_argument(
            "--format",
            dest="input_format",
            default="auto",
            help="input format: auto (by file name and content), moses (also an OPUS "
            "moses .zip), tsv, tmx, xces (an OPUS cesAlign file), czeng (CzEng 2.0's six "
            "columns) (default: %(default)s)",
        )
        io.add_argument(
            "--input-list",
            dest="input_list",
            default=None,
            help="a file (any fsspec URL) naming more inputs, one per line; for shard "
            "lists too long for a command line",
        )
        io.add_argument(
            "--tsv-columns",
            dest="tsv_columns",
            type=tsv_columns,
            default=None,
            help="plain TSV: the 1-based pivot and candidate columns, e.g. 3,4 "
            "(default: 2 columns, or Tatoeba's 4 with languages)",
        )
        io.add_argument(
            "--xces-links",
            dest="xces_links",
            default="one_to_one",
            choices=XCES_LINK_POLICIES,
            help="XCES links with several sentences on a side: reject them (one_to_one), "
            "or join each side's sentences (join) (default: %(default)s)",
        )
        io.add_argument(
            "--split-bytes",
            dest="split_bytes",
            type=_non_negative,
            default=DEFAULT_SPLIT_BYTES,
            help="read uncompressed TSV, CzEng and Moses files in spans of about this "
            "many bytes on parallel workers; 0 never splits (default: %(default)s)",
        )
        io.add_argument(
            "--corpus",
            dest="corpus",
            default=None,
            help="corpus name stored in every row (default: the file's stem)",
        )
        io.add_argument(
            "--num-shards",
            dest="num_shards",
            type=int,
            default=0,
            help="Parquet files per table; 0 lets the runner choose (default: %(default)s)",
        )

        bad = parser.add_argument_group("bad input")
        bad.add_argument(
            "--invalid-utf8",
            dest="invalid_utf8",
            default="replace",
            choices=INVALID_UTF8_POLICIES,
            help="replace undecodable bytes with U+FFFD and keep the record, or "
            "reject it (default: %(default)s)",
        )
        bad.add_argument(
            "--max-line-chars",
            dest="max_line_chars",
            type=_positive,
            default=20_000,
            help="reject longer lines (default: %(default)s)",
        )
        bad.add_argument(
            "--on-length-mismatch",
            dest="on_length_mismatch",
            default="error",
            choices=LENGTH_MISMATCH_POLICIES,
            help="Moses files of different length: stop with an error, or keep "
            "the common part and reject the tail (default: %(default)s)",
        )
        bad.add_argument(
            "--on-malformed-xml",
            dest="on_malformed_xml",
            default="error",
            choices=MALFORMED_XML_POLICIES,
            help="TMX/XCES that is not well-formed (or declares entities): stop with an "
            "error naming file and line, or keep what came before and reject the rest "
            "of the file as one record (default: %(default)s)",
        )

        model = parser.add_argument_group("model and scoring")
        model.add_argument(
            "--model",
            dest="model",
            default=DEFAULT_MODEL,
            help="e5-small (offline default), a sentence-transformers folder, "
            "a folder URL, or a hub id (default: %(default)s)",
        )
        model.add_argument(
            "--prefix",
            dest="prefix",
            default=None,
            help="text put before every sentence (default: the model's own, 'query: ' for e5)",
        )
        model.add_argument(
            "--threshold",
            dest="threshold",
            type=threshold_value,
            default="auto",
            help="keep pairs whose cosine reaches this; 'auto' calibrates the "
            "cut for the model on the data (default: %(default)s)",
        )
        model.add_argument(
            "--score",
            dest="score",
            default=None,
            choices=SCORES,
            help="what the cut applies to: cosine, or margin (the cosine over the mean "
            "cosine of both sentences' k nearest neighbours in the calibration sample; "
            "needs --threshold auto) (default: margin with --threshold auto, cosine with "
            "a fixed --threshold)",
        )
        model.add_argument(
            "--margin-k",
            dest="margin_k",
            type=_positive,
            default=DEFAULT_MARGIN_K,
            help="with --score margin: nearest neighbours averaged per side (default: %(default)s)",
        )
        model.add_argument(
            "--max-false-accept",
            dest="max_false_accept",
            type=_share,
            default=0.02,
            help="with --threshold auto: share of mismatched pairs allowed "
            "through (default: %(default)s)",
        )
        model.add_argument(
            "--calibration-sample",
            dest="calibration_sample",
            type=_positive,
            default=1000,
            help="with --threshold auto: pairs sampled (by a stable hash) to "
            "calibrate the cut on (default: %(default)s)",
        )
        model.add_argument(
            "--batch-size",
            dest="batch_size",
            type=_positive,
            # Texts of a batch are sorted by length before encoding, so large
            # batches pad little: on Tatoeba eng-pol (CPU) 256 took 134 s,
            # 1024 took 123 s, 4096 took 115 s. The encoder still runs in
            # sub-batches of 128 texts, so memory does not grow with it.
            default=4096,
            help="pairs per RunInference batch; the encoder sorts the batch's texts by "
            "length and encodes them 128 at a time (default: %(default)s)",
        )
        model.add_argument(
            "--device",
            dest="device",
            default="auto",
            choices=("auto", "cpu", "cuda"),
            help="where to encode (default: %(default)s: CUDA when present)",
        )
        model.add_argument(
            "--share-model-across-processes",
            dest="share_model_across_processes",
            action="store_true",
            help="one model per worker machine shared by its SDK processes (GPU workers)",
        )

        filters = parser.add_argument_group("filters and pairing")
        filters.add_argument(
            "--min-words",
            dest="min_words",
            type=int,
            default=1,
            help="fewest words on either side (default: %(default)s)",
        )
        filters.add_argument(
            "--max-words",
            dest="max_words",
            type=int,
            default=80,
            help="most words on either side (default: %(default)s)",
        )
        filters.add_argument(
            "--max-length-ratio",
            dest="max_length_ratio",
            type=float,
            default=2.5,
            help="largest (longer+1)/(shorter+1) word ratio (default: %(default)s)",
        )
        filters.add_argument(
            "--sentence-count-filter",
            dest="sentence_count_filter",
            action="store_true",
            help="drop pairs whose sides split into different numbers of sentences (punkt)",
        )
        filters.add_argument(
            "--pair-mode",
            dest="pair_mode",
            default="cover",
            choices=PAIR_MODES,
            help="cover: every candidate in >= 1 pair, ceil(n/2) per group; "
            "all: every pair (default: %(default)s)",
        )
        filters.add_argument(
            "--max-group-size",
            dest="max_group_size",
            type=int,
            default=50,
            help="most distinct candidates kept per pivot, chosen "
            "deterministically (default: %(default)s)",
        )
        filters.add_argument(
            "--max-pairs-per-group",
            dest="max_pairs_per_group",
            type=_positive,
            default=100,
            help="cap on pairs per group in 'all' mode (default: %(default)s)",
        )
        filters.add_argument(
            "--near-equal",
            dest="near_equal",
            type=float,
            default=0.95,
            help="drop pairs whose normalized edit similarity is at least "
            "this (default: %(default)s)",
        )

        # Runner options paramine sets for the user: GPUs, images, disks.
        add_deployment_arguments(parser.add_argument_group("deployment"))
