"""YAML files that users write (job files, refresh configs, suites), read with one-line errors.

A file that cannot be read, is not UTF-8 text, is not YAML or holds an alias
(a "billion laughs" of nine levels of nine aliases would take the machine)
fails with one line naming the file, and the line and column of the problem
where there is one. A document keeps the line of every mapping key, so that a checker can
say where a bad key or value is (``document.where("tasks", 2, "columns")``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import fsspec
from paramine.schemas.errors import InputError, UsageError

#: A key's place in a document: mapping keys and sequence indexes, outermost first.
KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML file and the line of each of its keys.

    Attributes:
        url: Where it was read from, as the user named it.
        data: The parsed document (``yaml.safe_load``'s result).
        lines: The 1-based line of each mapping key and sequence item, by path.
    """

    url: str
    data: Any
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def where(self, *path: str | int) -> str:
        """``url:line`` of the key at ``path``; the nearest enclosing key's line, else ``url``."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return f"{self.url}:{line}"
        return self.url


def _position(text: str, index: int) -> str:
    """``line:column`` (both from 1) of a character index in ``text``."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"{line}:{column}"


def _yaml_problem(url: str, text: str, error: Exception, see: str) -> InputError:
    """One line for a YAML error: the file, the line and column, and what the parser expected."""
    import yaml

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
    return InputError(f"{url}:{where}: not valid YAML: {problem}; {see}")


def _key_lines(node: Any, path: KeyPath = ()) -> Iterator[tuple[KeyPath, int]]:
    import yaml

    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key.value)
            yield (*path, name), key.start_mark.line + 1
            yield from _key_lines(value, (*path, name))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield (*path, index), item.start_mark.line + 1
            yield from _key_lines(item, (*path, index))


class _Alias(Exception):
    """An alias met while composing (``event``: the alias event)."""

    def __init__(self, event: Any) -> None:
        super().__init__(event.anchor)
        self.event = event


@functools.cache
def _loader_without_aliases() -> type[Any]:
    """PyYAML's SafeLoader refusing an alias where it meets one, before it is followed.

    Nine levels of nine aliases make 9^9 nodes (a "billion laughs"), and a
    settings file has no use for them; the document is parsed once.
    """
    import yaml

    class Loader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise _Alias(self.peek_event())
            return super().compose_node(parent, index)

    return Loader


def parse_yaml(text: str, url: str, see: str) -> YamlDocument:
    """Parse YAML text (JSON is YAML too) read from ``url``.

    Raises:
        InputError: Not YAML; one line naming ``url``, line and column, and ``see``.
    """
    import yaml

    try:
        loader = _loader_without_aliases()(text)  # a control character is refused here
        node = loader.get_single_node()
        data = None if node is None else loader.construct_document(node)
    except _Alias as alias:
        mark = alias.event.start_mark
        at = f"{mark.line + 1}:{mark.column + 1}" if mark is not None else "1:1"
        raise InputError(
            f"{url}:{at}: a YAML alias (*{alias.event.anchor}): "
            f"paramine's YAML files take no anchors or aliases; write the value out; {see}"
        ) from None
    except yaml.YAMLError as error:
        raise _yaml_problem(url, text, error, see) from None
    lines = dict(_key_lines(node))
    return YamlDocument(url, data, lines)


def read_yaml(url: str, what: str, see: str) -> YamlDocument:
    """Read the YAML document at ``url`` (any fsspec URL).

    Args:
        url: The file.
        what: What the file is, for the message (``the refresh config``).
        see: Where its author learns the format, appended to every message.

    Raises:
        InputError: The file cannot be read, is not UTF-8 text, or is not
            YAML; the message is one line naming the file, and the line and
            column of the problem.
    """
    try:
        with fsspec.open(url, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise InputError(f"{url}: cannot read {what} ({error})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise InputError(
            f"{url}:{line}:{column}: not UTF-8 text (byte 0x{raw[error.start]:02x}); {see}"
        ) from None
    return parse_yaml(text, url, see)


def setting_value(
    document: YamlDocument, path: KeyPath, value: Any, many: bool, nullable: bool = False
) -> Any:
    """A YAML value as a setting takes it: one value, or (``many``) a list of them.

    One value where a list is taken is a list of one (``inputs: a.tsv``).
    ``nullable``: the setting's default is null (``corpus``), so null is that
    default, as a manifest's options write it.

    Raises:
        UsageError: null (unless ``nullable``), a mapping, a list where one
            value is taken, or a list holding a list, a mapping or null:
            ``FILE:LINE: key: problem``.
    """
    where, key = document.where(*path), path[-1]
    if value is None and nullable:
        return None
    if value is None:
        raise UsageError(f"{where}: {key}: no value (null): give one, or leave the key out")
    if isinstance(value, Mapping):
        raise UsageError(f"{where}: {key}: a mapping; give {'a list' if many else 'one value'}")
    if not isinstance(value, list):
        return [value] if many else value
    if not many:
        raise UsageError(f"{where}: {key}: a list; give one value")
    for item in value:
        if item is None or isinstance(item, (list, Mapping)):
            raise UsageError(f"{where}: {key}: a list of single values, not {item!r}")
    return value
