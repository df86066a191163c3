"""Typed configs whose fields are command-line flags: one declaration, checked once.

A config is a frozen dataclass; each field is declared with ``option(...)``,
which carries its flag's help text, group and parser. ``add_fields`` builds
the argparse arguments from the fields, so the command line, a YAML file and
the Python API cannot drift apart, and every value is a number, a bool or a
choice once parsed. ``paramine mine`` (``MiningSettings`` and ``RunSettings``),
``paramine train`` and ``paramine evaluate`` are built this way.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, ClassVar, Self, TypeVar

from paramine.schemas.errors import UsageError

T = TypeVar("T")


def parse_share(value: Any) -> float:
    """A share strictly between 0 and 1."""
    number = float(value)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{number} is not a share in (0, 1)")
    return number


def parse_share_to_one(value: Any) -> float:
    """A share in (0, 1]: 1 is all (``--aligned-max-false-accept 1`` keeps every line)."""
    number = float(value)
    if not 0.0 < number <= 1.0:
        raise ValueError(f"{number} is not a share in (0, 1]")
    return number


def parse_unit_interval(value: Any) -> float:
    """A number in [0, 1], both ends included (a score's threshold: 0 keeps all)."""
    number = float(value)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{number} is not in [0, 1]")
    return number


def parse_similarity(value: Any) -> float:
    """A cosine similarity in (0, 1]."""
    number = float(value)
    if not 0.0 < number <= 1.0:
        raise ValueError(f"{number} is not a similarity in (0, 1]")
    return number


def parse_share_or_off(value: Any) -> float | None:
    """A share in (0, 1), or 'off'."""
    if value is None or str(value).strip().lower() == "off":
        return None
    number = float(value)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{number} is not a share in (0, 1), or 'off'")
    return number


def parse_non_negative(value: Any) -> int:
    """An integer >= 0."""
    number = int(value)
    if number < 0:
        raise ValueError(f"{number} is negative")
    return number


def parse_positive(value: Any) -> int:
    """An integer >= 1."""
    number = int(value)
    if number < 1:
        raise ValueError(f"{number} is not a positive integer")
    return number


def parse_bool(value: Any) -> bool:
    """A switch given as text (YAML, Flex Template parameters) or a bool."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("", "true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"{value!r} is not true or false")


def optional(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``parse``, letting ``None`` through."""
    return lambda value: None if value is None else parse(value)


def one_of(choices: Sequence[str]) -> Callable[[Any], str]:
    """A parser that accepts one of ``choices``."""

    def parse(value: Any) -> str:
        text = str(value)
        if text not in choices:
            raise ValueError(f"{text!r}; allowed: {', '.join(choices)}")
        return text

    return parse


def option(
    default: Any,
    help: str,
    *,
    group: str | None,
    parse: Callable[[Any], Any] | None = None,
    choices: Sequence[str] | None = None,
    switch: bool = False,
    metavar: str | None = None,
    many: bool = False,
    positional: bool = False,
    flag: str | None = None,
    const: Any = None,
    nargs: str | None = None,
) -> Any:
    """A config field that is also a flag: its default, help text, group and parser.

    Args:
        default: The value when the flag is not given; ``dataclasses.MISSING``
            makes it required (a required flag, or a positional argument).
        group: The ``--help`` section; ``None`` for the command's own arguments.
        parse: Turns the flag's text (or a YAML or Python value) into the
            value, raising ``ValueError`` with what is allowed. ``choices`` and
            ``switch`` imply one.
        many: The value is a tuple, each item parsed by ``parse``; the flag
            may be repeated (or the positional argument takes several).
        positional: An argument without a flag (``paramine train DATASET``).
        flag: The flag when it is not the field's name with dashes.
        const: The value of the flag given with no value after it.
        nargs: How many words one use of the flag takes (argparse's ``nargs``).
    """
    if parse is None:
        parse = one_of(choices) if choices else (parse_bool if switch else str)
    meta = {
        "help": help,
        "group": group,
        "parse": parse,
        "choices": choices,
        "switch": switch,
        "metavar": metavar,
        "many": many,
        "positional": positional,
        "flag": flag,
        "const": const,
        "nargs": nargs,
    }
    if isinstance(default, (list, tuple)):
        return field(default_factory=lambda: tuple(default), metadata=meta)
    return field(default=default, metadata=meta)


def declared(config: type, name: str, *, group: str | None) -> Any:
    """A settings field that a stage's options declare: the same default, help, parser and flag.

    The stage's options class states the option once (``option(...)``, its
    ``__post_init__`` calling ``parse_fields``); the settings that make it
    take the declaration, placed in their own ``--help`` section (``group``).
    So a default, a range and a message are written in one place, and a bad
    value gives the same error from the command line, a job file or Python.
    The field's metadata names its declaration (``declared_by``: the class
    and its field), so a test can hold every such pair to the same default.
    """
    stage_field = _field(config, name)
    meta = {**stage_field.metadata, "group": group, "declared_by": (config, name)}
    if not meta.get("flag"):
        meta["flag"] = flag_name(name, config)
    return field(default=stage_field.default, metadata=meta)


def flag_name(field_name: str, config: type | None = None) -> str:
    """The command-line flag of a config field: ``src_lang`` -> ``--src-lang``."""
    if config is not None:
        meta = _field(config, field_name).metadata
        if meta.get("flag"):
            return str(meta["flag"])
        if meta.get("positional"):
            return field_name.upper()
    return "--" + field_name.replace("_", "-")


def _field(config: type, name: str) -> dataclasses.Field[Any]:
    return next(f for f in dataclasses.fields(config) if f.name == name)


class OptionError(UsageError):
    """A bad value of one setting: the message names its flag; ``field`` and ``problem`` apart.

    A job file names the setting by its key and line instead of its flag, so
    it rewrites the message from these.
    """

    def __init__(self, message: str, field: str, problem: str) -> None:
        super().__init__(message)
        self.field = field
        self.problem = problem


def parse_fields(config: Any) -> None:
    """Parse every field of a frozen config dataclass in place (its ``__post_init__``).

    Every value goes through its field's parser here, so a config built from
    Python or YAML is held to the same rules as the command line.

    Raises:
        UsageError: A bad value, naming its flag.
    """
    cls = type(config)
    for f in dataclasses.fields(config):
        if not f.metadata:
            continue
        value = getattr(config, f.name)
        parse = f.metadata["parse"]
        name = flag_name(f.name, cls)
        try:
            if f.metadata["many"]:
                if isinstance(value, str):
                    raise UsageError(f"{name}: give a list, not one string")
                parsed = tuple(parse(item) for item in value)
            elif value is None and f.default is None:
                continue
            else:
                parsed = parse(value)
        except UsageError as error:
            raise OptionError(str(error), f.name, str(error).removeprefix(f"{name}: ")) from None
        except (TypeError, ValueError) as error:
            raise OptionError(f"{name} {error}", f.name, str(error)) from None
        object.__setattr__(config, f.name, parsed)


def add_fields(parser: argparse.ArgumentParser, config: type) -> argparse.ArgumentParser:
    """Add one argument per field of ``config`` to ``parser``, in sections by group.

    A section the parser already has (by its title) takes the fields of its
    group, so several configs can share one parser and its ``--help``.
    """
    groups: dict[str | None, Any] = {None: parser}
    groups.update((g.title, g) for g in parser._action_groups if g.title)
    for f in dataclasses.fields(config):
        meta = f.metadata
        if not meta:
            continue
        group = groups.get(meta["group"])
        if group is None:
            group = groups[meta["group"]] = parser.add_argument_group(meta["group"])
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        kwargs: dict[str, Any] = {"help": meta["help"]}
        if meta["positional"]:
            nargs = ("+" if required else "*") if meta["many"] else None
            group.add_argument(f.name, nargs=nargs, metavar=meta["metavar"], **kwargs)
            continue
        kwargs["dest"] = f.name
        if meta["switch"]:
            group.add_argument(flag_name(f.name, config), action="store_true", **kwargs)
            continue
        kwargs.update(metavar=meta["metavar"], choices=meta["choices"])
        if meta["many"]:
            kwargs.update(action="append", default=None, nargs=meta["nargs"])
        elif required:
            kwargs["required"] = True
        else:
            kwargs["default"] = f.default
        if meta["const"] is not None:
            kwargs.update(nargs="?", const=meta["const"])
        group.add_argument(flag_name(f.name, config), **kwargs)
    return parser


def given_values(namespace: argparse.Namespace, config: type) -> dict[str, Any]:
    """The fields of ``config`` a parsed command line set, as ``{field: value}``.

    argparse fills every field with its default; only what was given is kept,
    so a config from the command line and one from Python agree on defaults.
    Names of the namespace that are not fields of ``config`` are left out (a
    parser may hold several configs).
    """
    fields = {f.name: f for f in dataclasses.fields(config)}
    given: dict[str, Any] = {}
    for name, value in vars(namespace).items():
        f = fields.get(name)
        if f is None or not f.metadata:
            continue
        if f.metadata["many"]:
            if value:
                given[name] = tuple(value)
        elif f.default is dataclasses.MISSING or value != f.default:
            given[name] = value
    return given


def record_of(config: Any) -> dict[str, Any]:
    """A config's fields by name, as JSON types (lists for tuples): what ``from_mapping`` takes."""

    def plain(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [plain(item) for item in value]
        return value

    return {f.name: plain(getattr(config, f.name)) for f in dataclasses.fields(config)}


def field_of(config: type, key: Any) -> str | None:
    """The field of ``config`` that ``key`` names, as a field (``src_lang``) or a flag."""
    text = str(key).lstrip("-")
    for f in dataclasses.fields(config):
        if text in (f.name, flag_name(f.name, config).lstrip("-"), f.name.replace("_", "-")):
            return f.name
    return None


def from_mapping(
    config: type[T], values: Mapping[str, Any], source: str, command: str, hint: str = ""
) -> T:
    """Build ``config`` from ``{name: value}``; names as fields or flags (``src-lang``).

    Raises:
        UsageError: An unknown name (naming ``source`` and ``command``) or a bad value.
    """
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        name = field_of(config, key)
        if name is None:
            raise UsageError(
                f"{source}: {key!r} is not a {command} option; see `{command} --help`{hint}"
            )
        kwargs[name] = value
    return config(**kwargs)


class Settings:
    """A command's settings as a frozen dataclass of ``option`` fields.

    Checked when built, read from a mapping (a job file, a refresh config),
    written back as one, copied with changes. A subclass names in ``COMMAND``
    the command whose flags its fields are.
    """

    COMMAND: ClassVar[str]

    def __post_init__(self) -> None:
        parse_fields(self)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], source: str = "settings") -> Self:
        """Build the settings from ``{name: value}``; names as fields or flags (``src-lang``).

        Raises:
            UsageError: An unknown name (naming ``source``) or a bad value.
        """
        return from_mapping(cls, values, source, cls.COMMAND)

    def to_record(self) -> dict[str, Any]:
        """The settings as JSON types, by field name: what a job file or ``from_mapping`` takes."""
        return record_of(self)

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` applied and checked."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]  # a dataclass subclass


class ConfigParser(argparse.ArgumentParser):
    """Reports a bad flag as a ``UsageError``, so the CLI prints it once, as all errors."""

    def error(self, message: str) -> Any:  # argparse calls this and expects no return
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def parse_config(config: type[Any], prog: str, description: str, argv: Sequence[str]) -> Any:
    """``config`` from a command line: flags from its fields, values checked once.

    Raises:
        UsageError: A bad flag or value (``--help`` still exits, as argparse's does).
    """
    parser = add_fields(ConfigParser(prog=prog, description=description), config)
    namespace: argparse.Namespace = parser.parse_args(list(argv))
    return config(**given_values(namespace, config))
