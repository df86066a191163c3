"""The refresh config: a YAML file that says what a scheduled refresh mines and where it commits.

``load_config`` reads it and checks it once; ``RefreshConfig`` carries it,
with every mining setting checked by ``MineConfig`` itself. A file that cannot
be read, is not UTF-8 text or is not YAML fails with one line naming the file
(and the line and column where there is one); a key that is unknown, missing
or of the wrong type fails with one line naming the file and the key.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import fsspec
import yaml
from paramine.pipelines.run.config import DEFAULT_MODEL, DEFAULT_RUNNER, MineConfig
from paramine.schemas.digest import text_digest
from paramine.schemas.errors import InputError, UsageError

CONFIG_KEYS = (
    "output",
    "inputs",
    "src_lang",
    "tgt_lang",
    "model",
    "options",
    "beam_args",
    "buckets",
    "retention_hours",
)
#: Settings that refresh owns: a version's inputs and output are not the user's to set.
RESERVED_OPTIONS = ("output", "overwrite", "inputs", "input_list", "src_lang", "tgt_lang", "model")
#: Buckets of a new table: a refresh rewrites the buckets of the pivots it
#: touches, so more buckets make small refreshes of big tables cheaper.
DEFAULT_BUCKETS = 32
#: Files that a commit removed are deleted this long after (Delta's own
#: default): a reader or time travel within it still finds them.
DEFAULT_RETENTION_HOURS = 168
#: Settings that say where or how a job runs, not which pairs it writes: changing them
#: re-mines nothing. (A GPU encodes in fp16, which moves cosines by ~1e-3;
#: each batch records the model and threshold it was mined with.)
RUN_SETTINGS = (
    "gpu_type",
    "gpu_count",
    "gpu_mode",
    "worker_image",
    "disk_size_gb",
    "deploy_dry_run",
    "share_model_across_processes",
    "device",
    "batch_tokens",
    "num_shards",
    "write_scored",
)
#: Where a config that does not parse sends its author.
_SEE = "a refresh config is a YAML mapping (docs/refresh.md, deploy/schedule/refresh.example.yaml)"


@dataclass(frozen=True)
class RefreshConfig:
    """What a scheduled refresh mines, how, and where it commits versions.

    Attributes:
        output: The table's root (a local path, ``gs://``, ``s3://``): the pairs
            table, with the state under ``_paramine/``.
        inputs: Files, globs, directories or Moses prefixes, as for ``mine``.
        src_lang: Pivot language.
        tgt_lang: Candidate language.
        model: The encoder, as ``mine --model``.
        options: Other ``paramine mine`` flags, ``{flag: value}`` without the
            dashes; ``true`` for a switch.
        beam_args: Beam and deployment flags passed through unchanged, e.g.
            ``--runner=DataflowRunner``.
        buckets: Buckets of a new table (fixed once the table exists).
        retention_hours: How long files that a commit removed are kept for
            readers and time travel before the refresh's vacuum deletes them.
    """

    output: str
    inputs: list[str]
    src_lang: str = "en"
    tgt_lang: str = "pl"
    model: str = DEFAULT_MODEL
    options: dict[str, Any] = field(default_factory=dict)
    beam_args: list[str] = field(default_factory=lambda: [f"--runner={DEFAULT_RUNNER}"])
    buckets: int = DEFAULT_BUCKETS
    retention_hours: int = DEFAULT_RETENTION_HOURS
    #: Every mining setting, checked by ``MineConfig`` itself; built from the above.
    mine: MineConfig = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        settings = {str(k).lstrip("-").replace("-", "_"): v for k, v in self.options.items()}
        reserved = sorted(set(settings) & set(RESERVED_OPTIONS))
        if reserved:
            raise UsageError(
                f"options {reserved} are set by refresh itself; use the top-level keys "
                "output, inputs, src_lang, tgt_lang and model"
            )
        mine = MineConfig.from_mapping(
            {
                **settings,
                "inputs": list(self.inputs),
                "src_lang": self.src_lang,
                "tgt_lang": self.tgt_lang,
                "model": self.model,
            },
            source="refresh options",
        )
        if mine.exclude_sentences or mine.exclude_suite:
            raise UsageError(
                "exclude_sentences and exclude_suite are options of paramine mine; a refreshed "
                "table keeps its pairs, so filter evaluation sentences where it is read (paramine "
                "train drops them itself)"
            )
        if mine.near_duplicates is not None:
            raise UsageError(
                "near_duplicates: a refresh rewrites only the pivots that changed, and whether "
                "a pair is a near-duplicate depends on every pair of the table; the table's "
                "report counts them (paramine report)"
            )
        object.__setattr__(self, "mine", mine)

    def mine_settings(self) -> dict[str, Any]:
        """The settings that decide what a shard yields (no inputs, no output, no deployment)."""
        record = self.mine.to_record()
        for name in ("inputs", "input_list", "output", "overwrite", *RUN_SETTINGS):
            record.pop(name, None)
        return record

    def fingerprint(self) -> str:
        """A hash of the mining settings: when it changes every shard is re-mined.

        The runner and deployment settings are left out: they change where a
        job runs, not the rows it writes (the pipeline is deterministic).
        """
        return text_digest(json.dumps(self.mine_settings(), sort_keys=True))


def absolute(url: str) -> str:
    """Make local paths absolute, so shard keys match whatever the working directory."""
    if "://" in url:
        return url
    return os.path.abspath(url)


def _position(text: str, index: int) -> str:
    """``line:column`` (both from 1) of a character index in ``text``."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"{line}:{column}"


def _yaml_problem(path: str, text: str, error: yaml.YAMLError) -> InputError:
    """One line for a YAML error: the file, the line and column, and what the parser expected."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        where = f"{mark.line + 1}:{mark.column + 1}"
        problem = error.problem or "cannot be parsed"
        # The context points at what was left open, such as the "[" of an unclosed
        # list, which is where the author has to look; the problem mark may be the end.
        context = error.context_mark
        if error.context and context is not None:
            start = f"{context.line + 1}:{context.column + 1}"
            if start != where:
                problem += f" ({error.context} that starts at {start})"
    elif isinstance(error, yaml.reader.ReaderError):
        # Control characters in valid UTF-8 (a NUL, a BEL): no mark, a position.
        where = _position(text, error.position)
        code = error.character if isinstance(error.character, int) else ord(error.character)
        problem = f"unacceptable character U+{code:04X}: {error.reason}"
    else:  # not raised by PyYAML 6; kept so that no YAML error escapes as a traceback
        where, problem = "1:1", str(error)
    problem = " ".join(problem.split())
    return InputError(f"{path}:{where}: not valid YAML: {problem}; {_SEE}")


def read_yaml(path: str) -> Any:
    """The YAML document at ``path`` (any fsspec URL).

    Raises:
        InputError: The file cannot be read, is not UTF-8 text, or is not
            YAML; the message is one line naming the file, and the line and
            column of the problem.
    """
    try:
        with fsspec.open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise InputError(f"{path}: cannot read the refresh config ({error})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise InputError(
            f"{path}:{line}:{column}: not UTF-8 text (byte 0x{raw[error.start]:02x}); {_SEE}"
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise _yaml_problem(path, text, error) from None


def load_config(path: str) -> RefreshConfig:
    """Read and check a refresh config (YAML).

    Relative local paths are taken from the current directory, as on the
    ``paramine mine`` command line.

    Raises:
        InputError: The file cannot be read, is not UTF-8 text, or is not
            YAML; the message names the file, line and column.
        UsageError: A key is unknown, a required key is missing, or a value
            has the wrong type; the message names the file and the key.
    """
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a refresh config is a YAML mapping with keys {CONFIG_KEYS}")
    unknown = sorted(set(map(str, data)) - set(CONFIG_KEYS))
    if unknown:
        raise UsageError(f"{path}: unknown keys {unknown}; allowed: {', '.join(CONFIG_KEYS)}")
    for key in ("output", "inputs"):
        if not data.get(key):
            raise UsageError(f"{path}: {key!r} is required")
    inputs = data["inputs"]
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
        raise UsageError(f"{path}: 'inputs' must be a list of paths or URLs")
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise UsageError(f"{path}: 'options' must be a mapping of mine flags to values")
    beam_args = data.get("beam_args", [f"--runner={DEFAULT_RUNNER}"])
    if not isinstance(beam_args, list) or not all(isinstance(a, str) for a in beam_args):
        raise UsageError(f"{path}: 'beam_args' must be a list of strings such as --runner=...")
    numbers = {}
    for key, default in (
        ("buckets", DEFAULT_BUCKETS),
        ("retention_hours", DEFAULT_RETENTION_HOURS),
    ):
        value = data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UsageError(f"{path}: {key!r} must be a positive integer, got {value!r}")
        numbers[key] = value
    model = str(data.get("model", DEFAULT_MODEL))
    try:
        return RefreshConfig(
            output=absolute(str(data["output"])).rstrip("/"),
            inputs=[absolute(i) for i in inputs],
            src_lang=str(data.get("src_lang", "en")),
            tgt_lang=str(data.get("tgt_lang", "pl")),
            # A model folder is a path like the others; a model name is not.
            model=absolute(model) if data.get("model") and os.path.isdir(model) else model,
            options=options,
            beam_args=list(beam_args),
            **numbers,
        )
    except UsageError as error:
        raise UsageError(f"{path}: {error}") from None
