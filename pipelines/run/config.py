"""MineConfig: every setting of a mining run, typed, parsed once and checked in one place.

The command line, ``paramine refresh``'s YAML, the Dataflow Flex Template and
the Python API all build a ``MineConfig``; nothing else holds a copy of the
options. Each field carries its flag, help text and parser as metadata, so
the ``paramine mine`` parser is generated from the fields and cannot drift
from them. Beam's own options are not fields: they pass through to Beam
untouched (``parse_command_line`` returns them beside the config).

This module imports neither Beam nor torch, so ``paramine mine --help``
answers at once. The flag machinery is ``paramine.schemas.options``.

Why it is longer than 500 lines: it is the one place a user or a reviewer
reads every setting of a run, about 50 fields with their help texts and the
checks between them; split, the checks would sit apart from the fields.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from paramine.encoders.inference.backends import BACKENDS, DEVICES, QUANTIZATIONS
from paramine.pipelines.core.groups import PAIR_MODES
from paramine.pipelines.core.junk import DEFAULT_PROFILE, PROFILES, RULES, Limits, parse_rules
from paramine.pipelines.core.margin import DEFAULT_MARGIN_K
from paramine.pipelines.formats.base import (
    DEFAULT_MAX_REJECTS_PER_REASON,
    DEFAULT_SPLIT_BYTES,
    INVALID_UTF8_POLICIES,
    LENGTH_MISMATCH_POLICIES,
    MALFORMED_XML_POLICIES,
    XCES_LINK_POLICIES,
    ReaderOptions,
)
from paramine.pipelines.formats.pivot_languages import parse_pivot_langs
from paramine.pipelines.formats.scores import DEFAULT_MIN_ADEQUACY, DEFAULT_MIN_LANGUAGE_SCORE
from paramine.pipelines.run.deploy import GPU_TYPES
from paramine.schemas.errors import UsageError
from paramine.schemas.options import (
    ConfigParser,
    add_fields,
    from_mapping,
    given_values,
    one_of,
    option,
    optional,
    parse_fields,
    parse_non_negative,
    parse_positive,
    parse_share,
)

log = logging.getLogger(__name__)

DEFAULT_MODEL = "e5-small"
#: The runner when none is named: Beam's in-process batch runner. Beam 2.77's
#: DirectRunner first downloads the Prism binary from GitHub and runs there
#: (only falling back to this one when the download fails), which is network
#: access at run time; Beam's maintainers advise naming FnApiRunner to keep the
#: local runner (apache/beam#34612).
DEFAULT_RUNNER = "FnApiRunner"

INPUT_FORMATS = ("auto", "moses", "tsv", "tmx", "xces", "czeng")
SCORES = ("cosine", "margin")
GPU_MODES = ("one_sdk_process", "mps", "shared_model")


# ---------------------------------------------------------------- value parsers
# Each takes the text of a flag (or a YAML scalar) and returns the value, or
# raises ValueError with what is allowed; the flag's name is added by the caller.


def parse_threshold(value: Any) -> float | str:
    """``"auto"``, or a cosine in [-1, 1] as a float."""
    text = str(value).strip()
    if text == "auto":
        return "auto"
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"{text!r}: give 'auto' or a cosine such as 0.8") from None
    if not -1.0 <= number <= 1.0:
        raise ValueError(f"{number} is not a cosine in [-1, 1]")
    return number


def parse_unit_interval(value: Any) -> float:
    """A number in [0, 1]: a CzEng score's threshold (0 keeps every pair)."""
    number = float(value)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{number} is not in [0, 1]")
    return number


def parse_tsv_columns(value: Any) -> tuple[int, int] | None:
    """Two different 1-based column numbers, ``PIVOT,CANDIDATE``."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            pivot, candidate = (int(part) for part in value.split(","))
        except ValueError:
            raise ValueError(f"{value!r}: give two column numbers, pivot first, e.g. 3,4") from None
    else:
        pivot, candidate = (int(part) for part in value)
    if min(pivot, candidate) < 1 or pivot == candidate:
        raise ValueError(f"{value!r}: columns are numbered from 1 and must differ")
    return pivot, candidate


def parse_rival_margin(value: Any) -> float | None:
    """A cosine difference >= 0, or 'off'."""
    if value is None or str(value).strip().lower() == "off":
        return None
    number = float(value)
    if not 0.0 <= number < 2.0:
        raise ValueError(f"{number} is not a cosine difference in [0, 2), or 'off'")
    return number


def parse_ratio_or_off(value: Any) -> float:
    """A ratio in (0, 1], or 'off' (0.0: no check)."""
    if str(value).strip().lower() == "off":
        return 0.0
    number = float(value)
    if not 0.0 < number <= 1.0:
        raise ValueError(f"{number} is not a ratio in (0, 1], or 'off'")
    return number


def parse_share_or_off(value: Any) -> float | None:
    """A share in (0, 1), or 'off'."""
    if value is None or str(value).strip().lower() == "off":
        return None
    number = float(value)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{number} is not a share in (0, 1), or 'off'")
    return number


def parse_min_group(value: Any) -> int | None:
    """A group size >= 3, or 'off'."""
    if value is None or str(value).strip().lower() == "off":
        return None
    number = int(value)
    if number < 3:
        raise ValueError(f"{number} is below 3 (in a group of two no candidate is the outlier)")
    return number


IO, BAD, MODEL, FILTERS, DEPLOY = (
    "input and output",
    "bad input",
    "model and scoring",
    "filters and pairing",
    "deployment (Dataflow, Flink, Spark)",
)


@dataclass(frozen=True)
class MineConfig:
    """Every setting of a mining run; checked when built, whatever built it.

    Construct it directly from Python (``MineConfig(inputs=("corpus.tsv",),
    output="out", tgt_lang="cs")``), from a mapping (``from_mapping``, used by
    refresh's YAML and the Flex Template) or from a command line
    (``parse_command_line``). An invalid value raises ``UsageError`` naming the
    flag and what it allows.
    """

    # input and output
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
    src_lang: str = option(
        "en",
        "language of the pivot (source) side, e.g. en; or auto (or a list, de,en,eo): each "
        "input's pivot language is the one it names (a Moses file's language suffix, a "
        "Tatoeba TSV's language columns), and candidates are grouped per pivot language "
        "(default: %(default)s)",
        group=IO,
        parse=parse_pivot_langs,
    )
    tgt_lang: str = option(
        "pl",
        "language of the candidates, whose paraphrases are mined (default: %(default)s)",
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
    input_format: str = option(
        "auto",
        "input format: auto (by file name and content), moses (also an OPUS moses .zip), "
        "tsv, tmx, xces (an OPUS cesAlign file), czeng (CzEng 2.0's six columns) "
        "(default: %(default)s)",
        group=IO,
        choices=INPUT_FORMATS,
        flag="--format",
    )
    tsv_columns: tuple[int, int] | None = option(
        None,
        "plain TSV: the 1-based pivot and candidate columns, e.g. 3,4 (default: 2 columns, "
        "or Tatoeba's 4 with languages)",
        group=IO,
        parse=parse_tsv_columns,
    )
    min_adequacy: float = option(
        DEFAULT_MIN_ADEQUACY,
        "CzEng: reject a pair whose adequacy score (column 2) is under this as low_adequacy; "
        "0 keeps all (docs/filters.md, 'Corpus scores') (default: %(default)s)",
        group=IO,
        parse=parse_unit_interval,
    )
    min_language_score: float = option(
        DEFAULT_MIN_LANGUAGE_SCORE,
        "CzEng: reject a pair whose Czech or English language score (columns 3, 4) is under "
        "this as low_language_score; 0 keeps all (default: %(default)s)",
        group=IO,
        parse=parse_unit_interval,
    )
    score_column: int | None = option(
        None,
        "plain TSV with --tsv-columns: the 1-based column of each line's score, which "
        "--min-score applies to (default: none)",
        group=IO,
        parse=optional(parse_positive),
    )
    score_property: str | None = option(
        None,
        "TMX: the <prop type=...> of each unit's score, which --min-score applies to "
        "(default: none)",
        group=IO,
    )
    min_score: float | None = option(
        None,
        "reject a record whose own score (--score-column, --score-property) is under this "
        "as low_score (default: none)",
        group=IO,
        parse=optional(float),
    )
    xces_links: str = option(
        "one_to_one",
        "XCES links with several sentences on a side: reject them (one_to_one), or join "
        "each side's sentences (join) (default: %(default)s)",
        group=IO,
        choices=XCES_LINK_POLICIES,
    )
    split_bytes: int = option(
        DEFAULT_SPLIT_BYTES,
        "read uncompressed TSV, CzEng and Moses files in spans of about this many bytes on "
        "parallel workers; 0 never splits (default: %(default)s)",
        group=IO,
        parse=parse_non_negative,
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

    # bad input
    invalid_utf8: str = option(
        "replace",
        "replace undecodable bytes with U+FFFD and keep the record, or reject it "
        "(default: %(default)s)",
        group=BAD,
        choices=INVALID_UTF8_POLICIES,
    )
    max_line_chars: int = option(
        20_000, "reject longer lines (default: %(default)s)", group=BAD, parse=parse_positive
    )
    on_length_mismatch: str = option(
        "error",
        "Moses files of different length: stop with an error, or keep the common part and "
        "reject the tail (default: %(default)s)",
        group=BAD,
        choices=LENGTH_MISMATCH_POLICIES,
    )
    on_malformed_xml: str = option(
        "error",
        "TMX/XCES that is not well-formed (or declares entities): stop with an error naming "
        "file and line, or keep what came before and reject the rest of the file as one "
        "record (default: %(default)s)",
        group=BAD,
        choices=MALFORMED_XML_POLICIES,
    )

    max_rejects_per_reason: int = option(
        DEFAULT_MAX_REJECTS_PER_REASON,
        "rejects/ keeps the first this many rows (by line) of each reason in each shard; every "
        "reject is counted in the manifest all the same; 0 keeps them all (default: %(default)s)",
        group=BAD,
        parse=parse_non_negative,
    )

    # model and scoring
    model: str = option(
        DEFAULT_MODEL,
        "e5-small (offline default), a sentence-transformers folder, a folder URL, or a "
        "hub id (default: %(default)s)",
        group=MODEL,
    )
    prefix: str | None = option(
        None,
        "text put before every sentence (default: the model's own, 'query: ' for e5)",
        group=MODEL,
    )
    threshold: float | str = option(
        "auto",
        "keep pairs whose cosine reaches this; 'auto' calibrates the cut for the model on "
        "the data (default: %(default)s)",
        group=MODEL,
        parse=parse_threshold,
    )
    score: str | None = option(
        None,
        "what the cut applies to: cosine, or margin (the cosine over the mean cosine of both "
        "sentences' k nearest neighbours in the calibration sample; needs --threshold auto) "
        "(default: margin with --threshold auto, cosine with a fixed --threshold)",
        group=MODEL,
        choices=SCORES,
    )
    margin_k: int = option(
        DEFAULT_MARGIN_K,
        "with --score margin: nearest neighbours averaged per side (default: %(default)s)",
        group=MODEL,
        parse=parse_positive,
    )
    max_false_accept: float = option(
        0.02,
        "with --threshold auto: share of mismatched pairs allowed through (default: %(default)s)",
        group=MODEL,
        parse=parse_share,
    )
    calibration_sample: int = option(
        1000,
        "with --threshold auto: pairs sampled (by a stable hash) to calibrate the cut on "
        "(default: %(default)s)",
        group=MODEL,
        parse=parse_positive,
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
    write_scored: bool = option(
        False,
        "also score every prefiltered pair and write them with their scores and pass/fail "
        "as a third table, scored/ (a cleaned parallel corpus); encodes every text, so it "
        "is several times slower",
        group=IO,
        switch=True,
    )
    backend: str = option(
        "auto",
        "inference backend: torch, onnx (ONNX Runtime), openvino, or auto (on CPU the "
        "fastest measured whose vectors do not depend on the batch, today openvino; torch "
        "on GPU); exported models are cached, built offline (docs/models.md) "
        "(default: %(default)s)",
        group=MODEL,
        choices=BACKENDS,
    )
    quantize: str | None = option(
        None,
        "with --backend onnx or openvino: none, or int8 (dynamic int8 weights) "
        "(default: the backend's own, none)",
        group=MODEL,
        choices=QUANTIZATIONS,
        parse=optional(one_of(QUANTIZATIONS)),
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

    # filters and pairing
    min_words: int = option(
        1,
        "fewest words on either side (default: %(default)s)",
        group=FILTERS,
        parse=parse_non_negative,
    )
    max_words: int = option(
        80,
        "most words on either side (default: %(default)s)",
        group=FILTERS,
        parse=parse_positive,
    )
    max_length_ratio: float = option(
        2.5,
        "largest (longer+1)/(shorter+1) word ratio (default: %(default)s)",
        group=FILTERS,
        parse=float,
    )
    sentence_count_filter: bool = option(
        False,
        "drop pairs whose sides split into different numbers of sentences (punkt)",
        group=FILTERS,
        switch=True,
    )
    profile: str = option(
        DEFAULT_PROFILE,
        "the kind of corpus, which sets the defaults of the four options below: curated "
        "(Tatoeba, WMT, CzEng), subtitles (OpenSubtitles) or web (CCMatrix, ParaCrawl); "
        "docs/filters.md lists what each sets (default: %(default)s)",
        group=FILTERS,
        choices=tuple(PROFILES),
    )
    junk_rules: tuple[str, ...] | None = option(
        None,
        f"the heuristic rules applied, comma-separated ({', '.join(RULES)}), or none "
        "(default: the profile's)",
        group=FILTERS,
        parse=optional(parse_rules),
        metavar="RULES",
    )
    language_check: float | None = option(
        None,
        "drop a pair whose pivot or candidate is not in its declared language: keep a line "
        "declared L when p(L) >= RATIO x p(most likely language) (py3langid); 'off' to skip "
        "(default: the profile's, 0.3)",
        group=FILTERS,
        parse=optional(parse_ratio_or_off),
        metavar="RATIO|off",
    )
    min_letter_share: float | None = option(
        None,
        "the letters rule: least share of letters among a line's non-space characters "
        "(default: the profile's, 0.5)",
        group=FILTERS,
        parse=optional(parse_share),
    )
    min_script_share: float | None = option(
        None,
        "the script rule: least share of a line's letters in its language's script "
        "(default: the profile's, 0.8)",
        group=FILTERS,
        parse=optional(parse_share),
    )
    pair_mode: str = option(
        "cover",
        "cover: every candidate in >= 1 pair, ceil(n/2) per group; all: every pair "
        "(default: %(default)s)",
        group=FILTERS,
        choices=PAIR_MODES,
    )
    max_group_size: int = option(
        50,
        "most distinct candidates kept per pivot, chosen deterministically (default: %(default)s)",
        group=FILTERS,
        parse=parse_positive,
    )
    max_pairs_per_group: int = option(
        100,
        "cap on pairs per group in 'all' mode (default: %(default)s)",
        group=FILTERS,
        parse=parse_positive,
    )
    rival_margin: float | None = option(
        0.02,
        "drop a candidate from a pivot's group when the input also aligns it with another "
        "pivot that it matches better by more than this cosine, or that it leans to by more "
        "than half of it beyond every group-mate; 'off' skips the check "
        "(docs/thresholds.md) (default: %(default)s)",
        group=FILTERS,
        parse=parse_rival_margin,
    )
    coherence_min_group: int | None = option(
        3,
        "with --threshold auto: in groups of this many distinct candidates or more, drop a "
        "candidate no closer to any other than unrelated candidates are (cut calibrated "
        "with --max-false-accept); 'off' skips the check (default: %(default)s)",
        group=FILTERS,
        parse=parse_min_group,
    )
    group_support: float | None = option(
        0.1,
        "with --threshold auto: a pair below the cut but above a looser cut, one that lets "
        "this share of mismatched pairs through, stays when its candidate is as close to a "
        "group-mate that passed the cut as only a tenth of --max-false-accept of unrelated "
        "candidates are (docs/thresholds.md); 'off' cuts at the cut alone (default: "
        "%(default)s)",
        group=FILTERS,
        parse=parse_share_or_off,
    )
    hard_negative_accept: float | None = option(
        None,
        "in groups of two or more, drop a candidate no closer to any other than this share "
        "of the run's hard negatives (a candidate and its nearest candidate of another "
        "pivot) are: more precision under plausible misalignments, at a cost in recall "
        "(docs/thresholds.md); 'off' skips the check (default: off)",
        group=FILTERS,
        parse=parse_share_or_off,
    )
    near_equal: float = option(
        0.95,
        "drop pairs whose normalized edit similarity is at least this, except pairs that "
        "differ only in word endings (--drop-inflection-pairs decides on those) "
        "(default: %(default)s)",
        group=FILTERS,
        parse=float,
    )

    drop_inflection_pairs: bool = option(
        False,
        "also drop pairs that differ only in word endings ('Paliłem.' / 'Paliłam.'); their "
        "share is in the run's stats either way (default: keep them)",
        group=FILTERS,
        switch=True,
    )
    exclude_sentences: tuple[str, ...] = option(
        (),
        "drop every pair one of whose sentences, after normalization, is a line of this "
        "file (evaluation data kept out of training, e.g. laser_tatoeba_v1/"
        "tatoeba.pol-eng.pol); repeatable (default: none)",
        group=FILTERS,
        many=True,
        metavar="FILE",
    )
    exclude_suite: str | None = option(
        None,
        "the same for every sentence of an evaluation suite's files, all splits: a built-in "
        "name (pl: the eight Polish tasks of Dadas 2022) or a suite file (default: none)",
        group=FILTERS,
        metavar="NAME|FILE",
    )
    suite_data: str | None = option(
        None,
        "the folder --exclude-suite's files are under (default: $PARAMINE_SUITE_DATA, then "
        "the suite file's data_root)",
        group=FILTERS,
        metavar="DIR",
    )
    near_duplicates: float | None = option(
        None,
        "drop a pair whose sentences' character 3-grams overlap this much (Jaccard) with a "
        "pair of smaller id ('Dzięki!' / 'Dziękuję!' and 'Dziękuję.' / 'Dzięki.'); "
        "stats.json counts them either way (docs/filters.md) (default: off)",
        group=FILTERS,
        parse=parse_share_or_off,
        metavar="SIMILARITY|off",
    )

    # deployment: runner options paramine sets for the user (pipelines/run/deploy.py)
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

    def __post_init__(self) -> None:
        parse_fields(self)
        self._check_combinations()

    def _check_combinations(self) -> None:
        from paramine.pipelines.formats.pivot_languages import pivot_languages, several
        from paramine.schemas.languages import canonical_language

        sources = pivot_languages(self.src_lang)  # None: auto
        tgt = canonical_language(self.tgt_lang)
        if sources is not None and tgt in sources:
            raise UsageError(
                f"--src-lang {self.src_lang} and --tgt-lang {self.tgt_lang} are the same "
                "language: paramine mines paraphrases in the target language from a pivot in "
                "another language"
            )
        if several(self.src_lang) and self.tsv_columns is not None:
            raise UsageError(
                f"--tsv-columns with --src-lang {self.src_lang}: chosen columns do not say a "
                "line's pivot language; give one --src-lang, or Tatoeba's 4-column TSV"
            )
        # Where a record's own score is and its threshold: ReaderOptions checks them.
        ReaderOptions(
            tsv_columns=self.tsv_columns,
            score_column=self.score_column,
            score_property=self.score_property,
            min_score=self.min_score,
        )
        if self.min_words > self.max_words:
            raise UsageError(f"--min-words {self.min_words} is above --max-words {self.max_words}")
        if self.max_length_ratio < 1:
            raise UsageError(f"--max-length-ratio {self.max_length_ratio} must be at least 1")
        from paramine.encoders.inference.backends import check_backend

        check_backend(self.backend, self.quantize)
        if not 0.0 < self.near_equal <= 1.0:
            raise UsageError(f"--near-equal {self.near_equal} must be in (0, 1]")
        if self.group_support is not None and self.group_support <= self.max_false_accept:
            raise UsageError(
                f"--group-support {self.group_support} must be above --max-false-accept "
                f"{self.max_false_accept}: it is the share the looser cut lets through"
            )
        if self.hard_negative_accept is not None and importlib.util.find_spec("faiss") is None:
            raise UsageError(
                "--hard-negative-accept searches neighbours with faiss, which is not installed: "
                "pip install 'paramine[faiss]' (faiss-gpu on GPU workers: 'paramine[gpu]')"
            )
        self.resolved_score()

    def resolved_score(self) -> str:
        """The score a run cuts on: ``--score``, or by default margin with ``--threshold auto``.

        Margin is the default where it can be: on Tatoeba ces-eng and eng-pol
        with 20% noise it kept more true pairs than the cosine at the same or
        higher precision (docs/thresholds.md). A fixed ``--threshold`` is a
        cosine; margins are calibrated only (their scale depends on the data).

        Raises:
            UsageError: margin with a fixed threshold.
        """
        if self.score is None:
            return "margin" if self.threshold == "auto" else "cosine"
        if self.score == "margin" and self.threshold != "auto":
            raise UsageError(
                f"--score margin needs --threshold auto (got --threshold {self.threshold}): a "
                "margin's scale depends on the data, so its cut is calibrated; use --score "
                "cosine for a fixed cosine cut"
            )
        return self.score

    @property
    def filters(self) -> dict[str, Any]:
        """The prefilter's rules as the run applies them: the profile's, with overrides."""
        profile = PROFILES[self.profile]
        rules = profile.rules if self.junk_rules is None else self.junk_rules
        ratio = profile.language_ratio if self.language_check is None else self.language_check
        limits = Limits(
            min_letter_share=self.min_letter_share or profile.limits.min_letter_share,
            min_script_share=self.min_script_share or profile.limits.min_script_share,
        )
        return {
            "profile": self.profile,
            "junk_rules": list(rules),
            "language_check": ratio or None,
            "min_letter_share": limits.min_letter_share,
            "min_script_share": limits.min_script_share,
        }

    @property
    def calibrated(self) -> bool:
        """Whether the cut is calibrated on the data (``--threshold auto``)."""
        return self.threshold == "auto"

    @property
    def margin(self) -> bool:
        """Whether the cut applies to the margin (only ever calibrated): decided here alone."""
        return self.calibrated and self.resolved_score() == "margin"

    @property
    def fixed_threshold(self) -> float | None:
        """The fixed cut, or ``None`` where it is calibrated."""
        return None if self.calibrated else float(self.threshold)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], source: str = "config") -> MineConfig:
        """Build a config from ``{name: value}``; names as fields or flags (``src-lang``).

        Raises:
            UsageError: An unknown name (naming ``source``) or a bad value.
        """
        beam = " (Beam's options go with the runner's, not here)"
        return from_mapping(cls, values, source, "paramine mine", hint=beam)

    def to_record(self) -> dict[str, Any]:
        """The options as the manifest records them (JSON types)."""
        record = dataclasses.asdict(self)
        record["inputs"] = list(self.inputs)
        # The settings the prefilter applied, the profile's defaults filled in.
        record["filters"] = self.filters
        if self.tsv_columns is not None:
            record["tsv_columns"] = list(self.tsv_columns)
        return record

    def replace(self, **changes: Any) -> MineConfig:
        """A copy with ``changes`` applied and checked."""
        return dataclasses.replace(self, **changes)


def build_parser(prog: str = "paramine mine") -> argparse.ArgumentParser:
    """The ``paramine mine`` parser, generated from ``MineConfig``'s fields."""
    parser = ConfigParser(
        prog=prog,
        usage=f"{prog} [INPUT ...] [--input URL ...] [options] [Beam options]",
        allow_abbrev=False,
        description=(
            "Mine paraphrase pairs from sentence-aligned bitext: group candidates that "
            "translate the same pivot, score each (pivot, candidate) pair with a multilingual "
            "encoder, keep those above the threshold, and write pairs of them as Parquet with "
            "a manifest. With no input, mines the built-in English-Polish demo."
        ),
        epilog=(
            "Any other flag is one of Beam's pipeline options and passes to Beam unchanged, "
            f"e.g. --runner {DEFAULT_RUNNER} --direct_running_mode multi_processing "
            "--direct_num_workers 2, or --runner DataflowRunner --project P --region R "
            f"--temp_location gs://B/tmp. The runner defaults to {DEFAULT_RUNNER}, Beam's "
            "in-process runner (Beam's DirectRunner would first download the Prism binary). "
            "`paramine --debug mine ...` shows the traceback of an error."
        ),
    )
    add_fields(parser, MineConfig)
    return parser


def parse_command_line(
    argv: Sequence[str], prog: str = "paramine mine"
) -> tuple[dict[str, Any], list[str]]:
    """Take paramine's flags out of a command line; the rest is Beam's, and INPUTs.

    Returns:
        The settings given, as ``{field: value}`` (values still text;
        ``MineConfig`` parses them), and the other tokens in order: Beam's
        flags with their values, and positional INPUTs, which only Beam's
        parser can tell apart from those values (``--runner DirectRunner``).

    Raises:
        UsageError: A paramine flag without its value, or a bad choice.
    """
    namespace, rest = build_parser(prog).parse_known_args(list(argv))
    given = given_values(namespace, MineConfig)
    return given, rest
