"""``EvaluateConfig``: the settings of ``paramine evaluate``, and the evaluation options of both.

Built like ``paramine mine``'s settings (:mod:`paramine.schemas.options`): each
field is a flag with its help text and parser, and every value is checked
once, when the config is made, whether from the command line or from Python.
The evaluation files and the suite are ``EvalOptions``, shared with ``paramine
train`` (:mod:`paramine.encoders.training.config`), which runs the same
evaluators before and after training.

This module imports neither torch nor sentence-transformers, so ``--help``
answers at once.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass
from typing import Any

from paramine.encoders.evaluation.holdout import EVAL_SHARE
from paramine.encoders.evaluation.suite import DATA_ENV, builtin_suites
from paramine.encoders.inference.backends import BACKENDS
from paramine.schemas.errors import UsageError
from paramine.schemas.options import (
    option,
    parse_fields,
    parse_non_negative,
    parse_positive,
)

SPLITS = ("eval", "train", "all")

EVALUATION = "evaluation"


def parse_holdout_share(value: Any) -> float:
    """A share in [0, 1): 0 holds nothing out."""
    number = float(value)
    if not 0.0 <= number < 1.0:
        raise ValueError(f"{number} is not a share in [0, 1)")
    return number


def parse_files(value: Any) -> tuple[str, ...]:
    """One or two file names (a bitext: two aligned files, or one two-column TSV)."""
    files = (value,) if isinstance(value, str) else tuple(str(v) for v in value)
    if not 1 <= len(files) <= 2:
        raise ValueError(f"{list(files)}: give two line-aligned files or one two-column TSV")
    return files


def parse_pair_of_files(value: Any) -> tuple[str, ...]:
    """Two line-aligned files: the pivot side, then the candidate side."""
    files = parse_files(value)
    if len(files) != 2:
        raise ValueError(f"{list(files)}: give two line-aligned files, the pivot side first")
    return files


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    """What to score a model on besides the mined pairs: bitexts, STS files, a suite."""

    eval_bitext: tuple[tuple[str, ...], ...] = option(
        (),
        "bitext retrieval accuracy (both directions) on two line-aligned files, or one "
        "two-column TSV, e.g. laser_tatoeba_v1/tatoeba.pol-eng.pol tatoeba.pol-eng.eng; "
        "repeatable",
        group=EVALUATION,
        parse=parse_files,
        many=True,
        nargs="+",
        metavar="FILE",
    )
    eval_held_out: tuple[tuple[str, ...], ...] = option(
        (),
        "the held-out lines of a bitext, two line-aligned files (pivot side first), e.g. the "
        "Tatoeba files a dataset was mined from: the lines whose pivot falls in the held-out "
        "split (--eval-share, by the pivot's hash, as the dataset's), scored as bitext "
        "retrieval (each pivot against its first translation) and as paraphrase retrieval "
        "(two translations of a pivot against each other); a model trained on the dataset "
        "never saw those pivots; repeatable",
        group=EVALUATION,
        parse=parse_pair_of_files,
        many=True,
        nargs="+",
        metavar="FILE",
    )
    eval_sts: tuple[str, ...] = option(
        (),
        "STS Spearman on sentence1<TAB>sentence2<TAB>score lines; repeatable",
        group=EVALUATION,
        many=True,
        metavar="FILE.tsv",
    )
    suite: str | None = option(
        None,
        "score on an evaluation suite with frozen vectors and logistic-regression probes, "
        f"and print its table: a built-in name ({', '.join(builtin_suites())}: the eight "
        "Polish tasks of Dadas 2022) or a suite file (YAML/JSON like "
        "encoders/evaluation/suites/pl.yaml)",
        group=EVALUATION,
        metavar="NAME|FILE",
    )
    suite_data: str | None = option(
        None,
        f"the folder the suite's files are under (default: ${DATA_ENV}, then the suite "
        "file's data_root); for pl, the resources/downstream folder of "
        "sdadas/polish-sentence-evaluation",
        group=EVALUATION,
        metavar="DIR",
    )
    no_suite_cache: bool = option(
        False,
        "score the --suite anew and keep nothing: by default a model's suite figures are kept "
        "in the paramine cache and read back for the same model files, encoding, suite data, "
        "code and library versions (`paramine models` lists them)",
        group=EVALUATION,
        switch=True,
    )
    device: str | None = option(
        None, "cpu, cuda, ... (default: automatic)", group=None, metavar="DEVICE"
    )


@dataclass(frozen=True, kw_only=True)
class EvaluateConfig(EvalOptions):
    """Every setting of ``paramine evaluate``."""

    models: tuple[str, ...] = option(
        MISSING,
        "model folders (paramine-trained or any sentence-transformers folder) or names "
        "that `paramine models` resolves",
        group=None,
        positional=True,
        many=True,
        metavar="MODEL",
    )
    dataset: str | None = option(
        None, "mined dataset directory (fsspec URL) to retrieve in", group=None
    )
    split: str = option(
        "eval",
        "which rows of --dataset: the held-out pivots (default), the training ones, or all",
        group=None,
        choices=SPLITS,
    )
    eval_share: float = option(
        EVAL_SHARE,
        "share of pivots held out; must match the value given to `paramine train` (default "
        f"{EVAL_SHARE})",
        group=None,
        parse=parse_holdout_share,
    )
    max_pairs: int = option(
        5000,
        "score at most this many pairs, a deterministic sample (default 5000; 0 = all)",
        group=None,
        parse=parse_non_negative,
    )
    backend: str = option(
        "auto",
        "how --suite encodes: auto (default: OpenVINO fp32 on CPU, torch on GPU, as "
        "`paramine mine`), torch, onnx or openvino",
        group=EVALUATION,
        choices=BACKENDS,
    )
    base: str | None = option(None, "a base model to score first, for comparison", group=None)
    batch_size: int = option(64, "encoding batch size", group=None, parse=parse_positive)
    json_path: str | None = option(
        None, "also write the results here as JSON", group=None, flag="--json", metavar="FILE"
    )

    def __post_init__(self) -> None:
        parse_fields(self)
        if not self.models:
            raise UsageError("give at least one MODEL")
        if self.suite and (self.dataset or self.eval_bitext or self.eval_sts):
            raise UsageError(
                "--suite prints its own table: run it apart from --dataset, --eval-bitext and "
                "--eval-sts (two commands)"
            )
        if not (self.suite or self.dataset or self.eval_bitext or self.eval_sts):
            raise UsageError(
                "give --dataset DIR, --eval-bitext FILES, --eval-sts FILE.tsv or several; "
                "or --suite NAME|FILE"
            )

    @property
    def scored(self) -> list[str]:
        """The models in the order the table shows them: ``--base`` first."""
        return ([self.base] if self.base else []) + list(self.models)
