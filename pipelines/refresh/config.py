"""The refresh config: a YAML file that says what a scheduled refresh mines and where it commits.

``load_config`` reads it and checks it once; ``RefreshConfig`` carries it:
the settings that decide the pairs (``MiningSettings``, whose fingerprint the
table records) and those of where and how the job runs (``RunSettings``),
each checked by its class. A file that cannot be read, is not UTF-8 text or
is not YAML fails with one line naming the file (and the line and column
where there is one); a key that is unknown, missing or of the wrong type
fails with one line naming the file, the line and the key.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from paramine.encoders.models.registry import DEFAULT_MODEL
from paramine.pipelines.settings.job import setting_kind
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import DEFAULT_RUNNER, RunSettings
from paramine.schemas.errors import UsageError
from paramine.schemas.options import OptionError, field_of
from paramine.schemas.text_keys import text_digest
from paramine.schemas.yaml_files import YamlDocument, read_yaml, setting_value

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
#: Run settings that a refresh has no use for: it writes no scored table, and
#: its output is the table's root.
NOT_FOR_REFRESH = ("write_scored", "num_shards")
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
    #: Every mining setting, checked by ``MiningSettings`` itself; built from the above.
    mining: MiningSettings = field(init=False, repr=False, compare=False)
    #: Where and how the job runs (device, batches, deployment), from ``options``.
    running: RunSettings = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        mining: dict[str, Any] = {}
        running: dict[str, Any] = {}
        for key, value in self.options.items():
            kind = setting_kind(key)
            if kind is None:
                raise UsageError(
                    f"options: {str(key)!r} is not a paramine mine setting; see "
                    "`paramine mine --help`"
                )
            name = field_of(kind, key)
            (mining if kind is MiningSettings else running)[str(name)] = value
        reserved = sorted((set(mining) | set(running)) & set(RESERVED_OPTIONS))
        if reserved:
            raise UsageError(
                f"options {reserved} are set by refresh itself; use the top-level keys "
                "output, inputs, src_lang, tgt_lang and model"
            )
        unused = sorted(set(running) & set(NOT_FOR_REFRESH))
        if unused:
            raise UsageError(
                f"options {unused} are paramine mine's: a refresh writes its table's buckets, "
                "and no scored table"
            )
        settings = MiningSettings.from_mapping(
            {**mining, "src_lang": self.src_lang, "tgt_lang": self.tgt_lang, "model": self.model},
            source="refresh options",
        )
        if settings.exclude_sentences or settings.exclude_suite:
            raise UsageError(
                "exclude_sentences and exclude_suite are options of paramine mine; a refreshed "
                "table keeps its pairs, so filter evaluation sentences where it is read (paramine "
                "train drops them itself)"
            )
        if settings.near_duplicates is not None:
            raise UsageError(
                "near_duplicates: a refresh rewrites only the pivots that changed, and whether "
                "a pair is a near-duplicate depends on every pair of the table; the table's "
                "report counts them (paramine report)"
            )
        run = RunSettings.from_mapping(
            {**running, "inputs": list(self.inputs), "output": self.output},
            source="refresh options",
        )
        object.__setattr__(self, "mining", settings)
        object.__setattr__(self, "running", run)

    def fingerprint(self) -> str:
        """A hash of the mining settings: when it changes every shard is re-mined.

        Where and how the job runs is not in it: that changes where a job
        runs, not the rows it writes (the pipeline is deterministic).
        """
        return text_digest(json.dumps(self.mining.to_record(), sort_keys=True))


def absolute(url: str) -> str:
    """Make local paths absolute, so shard keys match whatever the working directory."""
    if "://" in url:
        return url
    return os.path.abspath(url)


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
    document = read_yaml(path, "the refresh config", _SEE)
    data = document.data
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a refresh config is a YAML mapping with keys {CONFIG_KEYS}")
    unknown = sorted(set(map(str, data)) - set(CONFIG_KEYS))
    if unknown:
        raise UsageError(
            f"{document.where(unknown[0])}: unknown keys {unknown}; allowed: "
            f"{', '.join(CONFIG_KEYS)}"
        )
    for key in ("output", "inputs"):
        if key not in data:
            raise UsageError(f"{path}: {key!r} is required")
    inputs = setting_value(document, ("inputs",), data["inputs"], many=True)
    if not inputs or not all(isinstance(i, str) for i in inputs):
        raise UsageError(f"{document.where('inputs')}: inputs: a list of paths or URLs")
    setting_value(document, ("output",), data["output"], many=False)
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise UsageError(f"{document.where('options')}: options: a mapping of mine flags to values")
    for key, value in options.items():
        fields = [
            kind.__dataclass_fields__[name]
            for kind in (MiningSettings, RunSettings)
            if (name := field_of(kind, key)) is not None
        ]
        many = any(f.metadata["many"] for f in fields)
        nullable = bool(fields) and all(f.default is None for f in fields)
        options[key] = setting_value(document, ("options", key), value, many, nullable)
    beam_args = data.get("beam_args", [f"--runner={DEFAULT_RUNNER}"])
    if not isinstance(beam_args, list) or not all(isinstance(a, str) for a in beam_args):
        raise UsageError(
            f"{document.where('beam_args')}: beam_args: a list of strings such as --runner=..."
        )
    numbers = {}
    for key, default in (
        ("buckets", DEFAULT_BUCKETS),
        ("retention_hours", DEFAULT_RETENTION_HOURS),
    ):
        value = data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise UsageError(f"{document.where(key)}: {key}: a positive integer, not {value!r}")
        numbers[key] = value
    for key in ("src_lang", "tgt_lang", "model"):
        if key in data:
            setting_value(document, (key,), data[key], many=False)
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
        raise _explain(document, error) from None


def _explain(document: YamlDocument, error: UsageError) -> UsageError:
    """A bad option's error with the file and the line of its key in ``options``."""
    if isinstance(error, OptionError):
        options = document.data.get("options") or {}
        for key in options:
            if (
                field_of(MiningSettings, key) == error.field
                or field_of(RunSettings, key) == error.field
            ):
                return UsageError(f"{document.where('options', key)}: {key}: {error.problem}")
    return UsageError(f"{document.url}: {error}")
