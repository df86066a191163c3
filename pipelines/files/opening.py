"""Open input files from any fsspec URL, decompressing by content, not by name.

OPUS and CzEng mirrors rename, re-compress and serve files through proxies
that decompress on the fly, so a file's extension is a hint at best: a
``.gz`` that is really plain text must still read, and a gzip without the
extension must be decompressed. ``open_input`` looks at the first bytes.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import posixpath
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import IO, Any

import fsspec
from paramine.pipelines.core.tap import count_reads
from paramine.schemas.errors import InputError

#: Leading bytes of each compression (or archive) format paramine reads.
MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
)
#: How much of a file is looked at to tell its compression and line ends.
HEAD_BYTES = 64 * 1024


class CorruptInputError(InputError):
    """A file's compression or archive format is damaged beyond reading."""


def sniff_compression(head: bytes) -> str:
    """Return ``gzip``, ``bz2``, ``xz``, ``zip``, or ``""`` for plain bytes."""
    for magic, name in MAGIC:
        if head.startswith(magic):
            return name
    return ""


def sniff_terminator(head: bytes) -> bytes:
    """Return the line terminator of a text: ``\\n``, or ``\\r`` for CR-only files.

    Only a head with carriage returns and no line feed at all is taken for a
    classic-Mac file; elsewhere a lone CR is text, because treating it as a
    line end would shift one side of a Moses pair against the other.
    """
    if b"\n" not in head and b"\r" in head:
        return b"\r"
    return b"\n"


def is_safe_member(name: str) -> bool:
    """Whether a zip member's name stays inside the archive's own root.

    paramine never extracts members to disk, but it also never reads one
    whose name is absolute or has a ``..`` part: such archives are crafted
    (zip slip) or broken, and the name could collide with a real file's.
    """
    if not name or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return False
    parts = name.replace("\\", "/").split("/")
    return ".." not in parts


def safe_members(archive: zipfile.ZipFile) -> list[str]:
    """Names of the regular files in a zip whose names are safe."""
    return [
        info.filename
        for info in archive.infolist()
        if not info.is_dir() and is_safe_member(info.filename)
    ]


@dataclass
class Opened:
    """An open input: its decompressed byte stream and what was learnt opening it.

    Attributes:
        stream: The decompressed bytes, positioned at the start.
        compression: What the content was compressed with (``""`` for none).
        terminator: The line terminator sniffed from the decompressed head.
        seekable: Whether byte offsets of ``stream`` are offsets in the file.
        error: Set when the stream broke off while its head was looked at.
    """

    stream: IO[bytes]
    compression: str
    terminator: bytes
    seekable: bool
    error: str = ""


def _single_member(archive: zipfile.ZipFile, url: str) -> str:
    members = safe_members(archive)
    unsafe = [
        i.filename for i in archive.infolist() if not i.is_dir() and not is_safe_member(i.filename)
    ]
    if len(members) != 1:
        hint = f" (refused unsafe names: {', '.join(unsafe)})" if unsafe else ""
        raise InputError(
            f"{url} is a zip with {len(members)} readable files{hint}; name the one to read "
            f"as zip://MEMBER::{url}"
        )
    return members[0]


#: What a damaged compressed stream raises while being read.
DECOMPRESSION_ERRORS: tuple[type[BaseException], ...] = (
    EOFError,
    OSError,
    zlib.error,
    lzma.LZMAError,
    zipfile.BadZipFile,
)


@contextmanager
def open_input(url: str) -> Iterator[Opened]:
    """Open any fsspec URL for reading, decompressing gzip, bz2, xz or a one-file zip.

    The compression is told by the file's first bytes, never by its name.

    Raises:
        InputError: A zip holds more or fewer than one readable file.
        CorruptInputError: A file with zip magic is no readable archive.
    """
    with ExitStack() as stack:
        raw = stack.enter_context(fsspec.open(url, "rb", compression=None))
        head = raw.read(HEAD_BYTES)
        raw.seek(0)
        raw = count_reads(raw)  # progress of a local run: bytes on disk read
        compression = sniff_compression(head)
        if not compression:
            yield Opened(raw, "", sniff_terminator(head), seekable=True)
            return
        stream: Any
        if compression == "gzip":
            stream = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
        elif compression == "bz2":
            stream = stack.enter_context(bz2.BZ2File(raw, mode="rb"))
        elif compression == "xz":
            stream = stack.enter_context(lzma.LZMAFile(raw, mode="rb"))
        else:
            try:
                archive = stack.enter_context(zipfile.ZipFile(raw))
            except DECOMPRESSION_ERRORS as bad_zip:
                raise CorruptInputError(f"{url}: not a readable zip archive: {bad_zip}") from None
            stream = stack.enter_context(archive.open(_single_member(archive, url)))
        damaged = ""
        try:
            # peek, not read: the decompressed stream cannot seek back cheaply.
            text_head = stream.peek(HEAD_BYTES)[:HEAD_BYTES]
        except DECOMPRESSION_ERRORS as damage:
            # Damaged in its first block: the stream is now spent, so the
            # damage is handed to the reader to report.
            text_head = b""
            damaged = f"{url}: {compression} stream damaged at its start: {damage}"
        yield Opened(stream, compression, sniff_terminator(text_head), False, damaged)


def zip_member_url(member: str, archive_url: str) -> str:
    """The fsspec URL of a member read straight out of a zip, never unpacked."""
    return f"zip://{member}::{archive_url}"


def basename(url: str) -> str:
    """The file name of a URL, also for ``zip://MEMBER::ARCHIVE`` chains."""
    first = url.split("::", 1)[0]
    return posixpath.basename(first.split("://", 1)[-1])
