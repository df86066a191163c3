"""Typed configs whose fields are command-line flags: one declaration, checked once.

A config is a frozen dataclass; each field is declared with ``option(...)``,
which carries its flag's help text, group and parser. ``add_fields`` builds
the argparse arguments from the fields, so the command line, a YAML file and
the Python API cannot drift apart, and every value is a number, a bool or a
choice once parsed. ``paramine mine`` (``MineConfig``), ``paramine train`` and
``paramine evaluate`` are built this way.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any

from paramine.schemas.errors import UsageError


def parse_share(value: Any) -> float:
    """A share strictly between 0 and 1."""
    number = float(value)
    if not 0.0 < number < 1.0:
        raise ValueError(f"{number} is not a share in (0, 1)")
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
    group: str,
    parse: Callable[[Any], Any] | None = None,
    choices: Sequence[str] | None = None,
    switch: bool = False,
    metavar: str | None = None,
) -> Any:
    """A config field that is also a flag: its default, help text, group and parser."""
    if parse is None:
        parse = one_of(choices) if choices else (parse_bool if switch else str)
    meta = {
        "help": help,
        "group": group,
        "parse": parse,
        "choices": choices,
        "switch": switch,
        "metavar": metavar,
    }
    if isinstance(default, (list, tuple)):
        return field(default_factory=lambda: tuple(default), metadata=meta)
    return field(default=default, metadata=meta)


def flag_name(field_name: str) -> str:
    """The command-line flag of a config field: ``src_lang`` -> ``--src-lang``."""
    if field_name == "input_format":
        return "--format"
    if field_name == "inputs":
        return "--input"
    return "--" + field_name.replace("_", "-")


class ConfigParser(argparse.ArgumentParser):
    """Reports a bad flag as a ``UsageError``, so the CLI prints it once, as all errors."""

    def error(self, message: str) -> Any:  # argparse calls this and expects no return
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def field_default(config: type, name: str) -> Any:
    """The default of a config dataclass's field ``name``."""
    f = next(f for f in dataclasses.fields(config) if f.name == name)
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory()  # type: ignore[operator]
