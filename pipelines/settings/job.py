"""A mining job's settings from a command line or a job file: both kinds, sorted apart.

``paramine mine`` takes every setting as a flag, and the same settings from a
YAML job file (``--config job.yaml``, keys named as the flags: ``src_lang:
en``, ``threshold: "0.85"``); flags given beside the file override it. The
parser is generated from the fields of ``MiningSettings`` and
``RunSettings``, so the flags, the file's keys and the Python API cannot
drift apart. Sorting a value into its kind is done here; holding both kinds
is the launcher's (``pipelines/run/mine.py``).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import DEFAULT_RUNNER, RunSettings
from paramine.pipelines.settings.values import BAD, DEPLOY, FILTERS, IO, MODEL
from paramine.schemas.errors import InputError, UnmatchedInput, UsageError
from paramine.schemas.options import (
    ConfigParser,
    OptionError,
    add_fields,
    field_of,
    given_values,
)
from paramine.schemas.yaml_files import YamlDocument, read_yaml, setting_value

#: The key of a job file that holds Beam's flags, passed through as on the command line.
BEAM_ARGS = "beam_args"
#: Where the author of a job file learns its format.
_SEE = (
    "a job file is a YAML mapping of paramine mine's settings, keys named as the flags "
    "(docs/runbook.md, 'Job files')"
)


def setting_kind(key: Any) -> type[MiningSettings] | type[RunSettings] | None:
    """Which settings a key names (a field or a flag, with or without dashes); None: neither."""
    for kind in (MiningSettings, RunSettings):
        if field_of(kind, key) is not None:
            return kind
    return None


def build_parser(prog: str = "paramine mine") -> argparse.ArgumentParser:
    """The ``paramine mine`` parser, generated from both kinds of settings, and ``--config``."""
    parser = ConfigParser(
        prog=prog,
        usage=f"{prog} [INPUT ...] [--input URL ...] [--config FILE] [options] [Beam options]",
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
    # The sections of --help in this order, whichever kind of settings fills them.
    sections = {title: parser.add_argument_group(title) for title in (IO, BAD, MODEL, FILTERS)}
    sections[IO].add_argument(
        "--config",
        metavar="FILE",
        help="a YAML job file (any fsspec URL) with any of these settings, keys named as the "
        "flags (src_lang: en, threshold: '0.85'), and beam_args: [...]; flags given beside "
        "it override its values",
    )
    parser.add_argument_group(DEPLOY)
    add_fields(parser, RunSettings)
    add_fields(parser, MiningSettings)
    return parser


@dataclass(frozen=True)
class CommandLine:
    """A ``paramine mine`` command line, taken apart.

    Attributes:
        mining: The mining settings given, ``{field: value}`` (values still text).
        running: The run settings given, likewise.
        config: The job file named with ``--config``, or None.
        rest: The other tokens in order: Beam's flags with their values, and
            positional INPUTs, which only Beam's parser can tell apart from
            those values (``--runner DirectRunner``).
    """

    mining: dict[str, Any]
    running: dict[str, Any]
    config: str | None
    rest: list[str]


def parse_command_line(argv: Sequence[str], prog: str = "paramine mine") -> CommandLine:
    """Take paramine's flags out of a command line; the rest is Beam's, and INPUTs.

    Raises:
        UsageError: A paramine flag without its value, or a bad choice.
    """
    namespace, rest = build_parser(prog).parse_known_args(list(argv))
    return CommandLine(
        given_values(namespace, MiningSettings),
        given_values(namespace, RunSettings),
        namespace.config,
        rest,
    )


def split_positional_inputs(tokens: list[str]) -> tuple[list[str], list[str]]:
    """Separate positional INPUTs from Beam's flags and their values."""
    if not any(not t.startswith("-") for t in tokens):
        return [], tokens
    from apache_beam.options.pipeline_options import PipelineOptions

    beam_values: set[str] = set()
    options = PipelineOptions(tokens).get_all_options(retain_unknown_options=True)
    for value in options.values():
        items = value if isinstance(value, list) else [value]
        beam_values.update(str(v) for v in items if v is not None)
    inputs, flags = [], []
    previous = ""
    for token in tokens:
        # A token that follows a flag without "=" and that Beam took as that
        # flag's value stays with the flag; any other bare token is an INPUT.
        takes_value = previous.startswith("-") and "=" not in previous
        if not token.startswith("-") and not (takes_value and token in beam_values):
            inputs.append(token)
        else:
            flags.append(token)
        previous = token
    return inputs, flags


@dataclass(frozen=True)
class JobFile:
    """The settings of a job file, sorted into their kinds, and where each key stands.

    Attributes:
        document: The parsed file, with the line of each key.
        mining: Its mining settings, ``{field: value}``.
        running: Its run settings, ``{field: value}``.
        beam_args: Beam's flags it lists.
    """

    document: YamlDocument
    mining: dict[str, Any] = field(default_factory=dict)
    running: dict[str, Any] = field(default_factory=dict)
    beam_args: list[str] = field(default_factory=list)
    #: The key each field was given under, as the file spells it.
    keys: dict[str, str] = field(default_factory=dict)

    def explain(self, error: UsageError, overridden: Sequence[str] = ()) -> UsageError:
        """``error`` as the file's: its line and key, where a value of the file caused it.

        A bad value of a field the file set (and the command line did not
        override) names the file, the line and the key; any other error is
        returned as it is.
        """
        if not isinstance(error, OptionError):
            return error
        if error.field not in self.keys or error.field in overridden:
            return error
        key = self.keys[error.field]
        return UsageError(f"{self.document.where(key)}: {key}: {error.problem}")

    def explain_input(self, error: UnmatchedInput, overridden: Sequence[str] = ()) -> InputError:
        """An input of the file's that matches no file, named by the file's line and key."""
        key = self.keys.get("inputs")
        given = [str(url) for url in self.running.get("inputs", ())]
        if key is None or "inputs" in overridden or error.url not in given:
            return error
        return InputError(f"{self.document.where(key)}: {key}: {error}")


def read_job_file(url: str) -> JobFile:
    """Read a job file and sort its keys into mining and run settings.

    Raises:
        InputError: The file cannot be read or is not YAML (file, line, column).
        UsageError: It is not a mapping, or a key names no setting (file, line, key).
    """
    document = read_yaml(url, "the job file", _SEE)
    data = document.data
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise UsageError(f"{url}: {_SEE}")
    job = JobFile(document)
    for key, value in data.items():
        if key == BEAM_ARGS:
            if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
                raise UsageError(
                    f"{document.where(key)}: {key}: a list of Beam flags such as --runner=..."
                )
            job.beam_args.extend(value)
            continue
        kind = setting_kind(key)
        if kind is None:
            raise UsageError(
                f"{document.where(key)}: {key!r} is not a paramine mine setting; keys are "
                "named as the flags (src_lang, threshold, ...): see `paramine mine --help`"
            )
        name = field_of(kind, key)
        assert name is not None  # setting_kind found it
        field = kind.__dataclass_fields__[name]
        # One value where a list is taken (exclude_sentences: file.txt) is a list of one.
        value = setting_value(
            document, (key,), value, field.metadata["many"], nullable=field.default is None
        )
        (job.mining if kind is MiningSettings else job.running)[name] = value
        job.keys[name] = str(key)
    return job
