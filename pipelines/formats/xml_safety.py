"""Hardened, streaming XML parsing shared by the TMX and XCES readers.

Parsing goes through ``defusedxml``: entity declarations (billion laughs,
quadratic blowup) and external entities are refused, never expanded or
fetched. Errors become ``ValueError`` subclasses that name the file and the
line, and say what to do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any
from xml.etree.ElementTree import Element, ParseError

import defusedxml.ElementTree as SafeET
from defusedxml.common import DefusedXmlException

from pipelines.formats.opening import DECOMPRESSION_ERRORS, CorruptInputError

XML_NS = "{http://www.w3.org/XML/1998/namespace}"


class MalformedXmlError(ValueError):
    """An XML file is not well-formed; the message names file and line."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


class UnsafeXmlError(ValueError):
    """An XML file declares entities or references external ones: refused."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


#: What stops an XML reader: bad XML, refused XML, or a file that is not a
#: readable archive although its first bytes say so.
XML_READ_ERRORS = (MalformedXmlError, UnsafeXmlError, CorruptInputError)


def reject_reason(error: Exception) -> str:
    """The rejection reason for one of :data:`XML_READ_ERRORS`."""
    if isinstance(error, UnsafeXmlError):
        return "unsafe_xml"
    if isinstance(error, CorruptInputError):
        return "corrupt_input"
    return "malformed_xml"


def local_name(tag: Any) -> str:
    """A tag's name without its namespace (``{ns}tu`` -> ``tu``)."""
    if not isinstance(tag, str):
        return ""  # comments and processing instructions
    return tag.rsplit("}", 1)[-1]


def iter_events(
    stream: IO[bytes], url: str, events: tuple[str, ...] = ("start", "end")
) -> Iterator[tuple[str, Element]]:
    """Parse a stream incrementally and safely, yielding ``(event, element)``.

    Raises:
        MalformedXmlError: The XML is not well-formed (file, line, column).
        UnsafeXmlError: The XML declares or references entities.
    """
    try:
        yield from SafeET.iterparse(stream, events=events)
    except ParseError as error:
        line, column = getattr(error, "position", (0, 0))
        raise MalformedXmlError(
            f"{url}: malformed XML at line {line}, column {column}: {error.msg}. Repair or "
            "re-download the file, or pass --on-malformed-xml reject to keep the records "
            "before this point and reject the rest",
            line,
        ) from None
    except DefusedXmlException as error:
        raise UnsafeXmlError(
            f"{url}: refused XML that declares or references entities ({error!r}); paramine "
            "never expands entities or fetches external ones. Remove the DOCTYPE's entity "
            "declarations from the file",
        ) from None
    except DECOMPRESSION_ERRORS as error:
        # A compressed XML file that breaks off.
        raise MalformedXmlError(f"{url}: the file breaks off: {error}") from None


def element_text(element: Element, skip: frozenset[str] = frozenset()) -> str:
    """The text inside an element, without the content of ``skip`` children.

    Markup is dropped but its text is kept (``a <hi>b</hi> c`` -> ``a b c``);
    a skipped child's tail text is kept too.
    """
    parts = [element.text or ""]
    for child in element:
        if local_name(child.tag) not in skip:
            parts.append(element_text(child, skip))
        parts.append(child.tail or "")
    return "".join(parts)


def squeeze(text: str) -> str:
    """Collapse runs of whitespace (XML indentation) into single spaces."""
    return " ".join(text.split())
