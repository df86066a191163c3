"""Hardened, streaming XML parsing shared by the TMX and XCES readers.

Parsing goes through ``defusedxml``: entity declarations (billion laughs,
quadratic blowup) and external entities are refused, never expanded or
fetched. Errors are ``InputError``s that name the file and the line, and say
what to do.

A file that breaks off (a truncated download, a gzip cut short) is not
malformed XML: everything before the damage is good, so the readers keep it
and count the damage as one ``truncated_input`` (or ``corrupt_input``)
rejection, whatever ``--on-malformed-xml`` says, as the line formats do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any
from xml.etree.ElementTree import Element, ParseError, TreeBuilder
from xml.parsers.expat import errors as expat_errors

import defusedxml.ElementTree as SafeET
from defusedxml.common import DefusedXmlException
from paramine.pipelines.files.lines import describe_damage
from paramine.pipelines.files.opening import DECOMPRESSION_ERRORS, CorruptInputError
from paramine.schemas.errors import InputError

XML_NS = "{http://www.w3.org/XML/1998/namespace}"


class MalformedXmlError(InputError):
    """An XML file is not well-formed; the message names file and line."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


class UnsafeXmlError(InputError):
    """An XML file declares entities or references external ones: refused."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


class TruncatedXmlError(InputError):
    """An XML file breaks off before its document ends; what came before is good.

    Attributes:
        line: The XML line where the file breaks off.
        reason: ``truncated_input``, or ``corrupt_input`` for a compressed
            stream damaged in the middle.
    """

    def __init__(self, message: str, line: int = 0, reason: str = "truncated_input") -> None:
        super().__init__(message)
        self.line = line
        self.reason = reason


#: Codes of what expat says when the bytes end inside the document: the file was cut.
TRUNCATION_CODES = frozenset(
    expat_errors.codes[message]
    for message in (
        expat_errors.XML_ERROR_NO_ELEMENTS,
        expat_errors.XML_ERROR_UNCLOSED_TOKEN,
        expat_errors.XML_ERROR_PARTIAL_CHAR,
        expat_errors.XML_ERROR_UNCLOSED_CDATA_SECTION,
    )
)


class _UntilDamage:
    """A byte stream that ends, instead of raising, where its compression breaks.

    ``iterparse`` reads 16 KiB at a time, and a damaged ``GzipFile.read(n)``
    raises before it returns the bytes it did decompress: every unit in the
    last read would be lost. ``read1`` hands over each decompressed block,
    and the damage is kept here to be reported once the parser has seen every
    byte before it.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self._read = getattr(stream, "read1", stream.read)
        self.damage: BaseException | None = None
        #: Whether anything but whitespace was read: an empty file is no document.
        self.started = False

    def read(self, n: int = -1) -> bytes:
        if self.damage is not None:
            return b""
        try:
            block = self._read(n)
        except DECOMPRESSION_ERRORS as error:
            self.damage = error
            return b""
        self.started = self.started or bool(block.strip())
        return block


#: What stops an XML reader: bad XML, refused XML, or a file that is not a
#: readable archive although its first bytes say so.
XML_READ_ERRORS = (MalformedXmlError, UnsafeXmlError, CorruptInputError)


def reject_reason(error: Exception) -> str:
    """The rejection reason for one of :data:`XML_READ_ERRORS`."""
    if isinstance(error, TruncatedXmlError):
        return error.reason
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
        TruncatedXmlError: The file breaks off (a compressed stream ends
            early or is damaged, or the bytes end inside the document).
        MalformedXmlError: The XML is not well-formed (file, line, column).
        UnsafeXmlError: The XML declares or references entities.
    """
    source = _UntilDamage(stream)
    parser = SafeET.DefusedXMLParser(target=TreeBuilder())
    try:
        yield from SafeET.iterparse(source, events=events, parser=parser)
    except ParseError as error:
        line, column = getattr(error, "position", (0, 0))
        if source.damage is None and not source.started:
            return  # an empty file holds no records, as an empty line file
        if source.damage is not None or getattr(error, "code", None) in TRUNCATION_CODES:
            raise _truncated(url, line, source.damage) from None
        raise MalformedXmlError(
            f"{url}: malformed XML at line {line}, column {column}: {error.msg}. Repair or "
            "re-download the file, or pass --on-malformed-xml reject to keep the records "
            "before this point and reject the rest",
            line,
        ) from None
    except DefusedXmlException as error:
        line = parser.parser.CurrentLineNumber
        raise UnsafeXmlError(
            f"{url}: refused XML at line {line} that declares or references entities "
            f"({error!r}); paramine never expands entities or fetches external ones. Remove "
            "the DOCTYPE's entity declarations from the file",
            line,
        ) from None
    if source.damage is not None:
        # The document was complete; only bytes after its end were damaged.
        raise _truncated(url, parser.parser.CurrentLineNumber, source.damage)


def _truncated(url: str, line: int, damage: BaseException | None) -> TruncatedXmlError:
    cause = f": {damage}" if damage is not None else " inside its document"
    reason = describe_damage(damage) if damage is not None else "truncated_input"
    return TruncatedXmlError(
        f"{url}: the file breaks off at line {line}{cause}. The records before this point "
        "are kept; re-download the file to read the rest",
        line,
        reason,
    )


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
