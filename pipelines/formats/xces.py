"""OPUS XCES: a ``cesAlign`` file of sentence links between per-language XML documents.

An OPUS release keeps each language's documents as XML (``en/1988.xml.gz``:
``<s id="s1.1">`` sentences, often tokenized into ``<w>``) and an alignment
file whose ``<linkGrp fromDoc=... toDoc=...>`` lists links such as
``xtargets="s4.1 s4.2;s4.1"`` (a 2-1 link) or ``"s5.3;"`` (1-0: a sentence
with no translation). The documents are found next to the alignment file or
one or two folders up (the OPUS layout puts per-document alignments in
``en-fr/``), plain or gzipped, or inside ``<lang>.zip`` archives as OPUS
distributes them.

Memory: the sentences of the two documents of the current ``linkGrp`` are
held, never the whole corpus; the alignment file itself is streamed.
"""

from __future__ import annotations

import logging
import posixpath
import zipfile
from collections import OrderedDict
from collections.abc import Iterator
from typing import IO
from xml.etree.ElementTree import Element

import fsspec
from paramine.pipelines.core.text import canonical_lang
from paramine.pipelines.files.opening import (
    basename,
    open_input,
    safe_members,
    zip_member_url,
)
from paramine.pipelines.files.xml_safety import (
    XML_READ_ERRORS,
    MalformedXmlError,
    TruncatedXmlError,
    element_text,
    iter_events,
    local_name,
    reject_reason,
    squeeze,
)
from paramine.pipelines.formats.base import (
    ReaderOptions,
    ReadResult,
    Shard,
    aligned,
    register_format,
    reject,
)
from paramine.pipelines.formats.tmx import primary_lang
from paramine.schemas.errors import InputError

log = logging.getLogger(__name__)

#: Documents kept parsed at once: a pivot document shared by two linkGrp
#: (``sv-de-en.xml``) is parsed once.
DOCUMENT_CACHE = 4


class MissingDocumentError(InputError):
    """A document that an alignment file links to cannot be found.

    Attributes:
        document: The document as the alignment file names it.
    """

    def __init__(self, message: str, document: str = "") -> None:
        super().__init__(message)
        self.document = document


def sentences(url: str) -> dict[str, str]:
    """Parse an OPUS XML document into ``{sentence id: text}``.

    A sentence's text is its ``<w>`` tokens joined by spaces where it has
    any, otherwise its text content with whitespace collapsed.
    """
    found: dict[str, str] = {}
    with open_input(url) as opened:
        for _, element in _document_events(opened.stream, url):
            name = local_name(element.tag)
            if name == "s":
                words = [w.text or "" for w in element.iter() if local_name(w.tag) == "w"]
                text = " ".join(t.strip() for t in words if t.strip())
                found[element.get("id", "")] = text or squeeze(element_text(element))
                element.clear()
            elif name == "p":
                element.clear()
    return found


def _document_events(stream: IO[bytes], url: str) -> Iterator[tuple[str, Element]]:
    """The end events of a linked document; a cut document is malformed input.

    A document is read whole before any of its links, so a truncated one is
    not "records before the damage": it goes by ``--on-malformed-xml``.
    """
    try:
        yield from iter_events(stream, url, events=("end",))
    except TruncatedXmlError as damage:
        raise MalformedXmlError(str(damage), damage.line) from None


class DocumentFinder:
    """Finds the documents of an alignment file, as files or zip members."""

    def __init__(self, align_url: str) -> None:
        self.align_url = align_url
        self.fs, path = fsspec.core.url_to_fs(align_url.split("::", 1)[0])
        folder = posixpath.dirname(path)
        self.bases = [
            folder,
            posixpath.dirname(folder),
            posixpath.dirname(posixpath.dirname(folder)),
        ]
        self.bases = list(dict.fromkeys(b for b in self.bases if b))
        self._zips: dict[str, list[str]] = {}

    def find(self, doc: str) -> str:
        """Return the URL of a document named in ``fromDoc`` or ``toDoc``.

        Raises:
            MissingDocumentError: No file or zip member of that name exists.
        """
        doc = doc.lstrip("/")
        if ".." in doc.split("/"):
            raise MissingDocumentError(
                f"{self.align_url}: refused document path {doc!r}: it climbs out with '..'", doc
            )
        stem = doc[:-3] if doc.endswith(".gz") else doc
        names = list(dict.fromkeys((doc, stem, stem + ".gz")))
        for base in self.bases:
            for name in names:
                path = f"{base}/{name}"
                if self.fs.isfile(path):
                    return self.fs.unstrip_protocol(path)
        lang = doc.split("/", 1)[0]
        for base in self.bases:
            archive = f"{base}/{lang}.zip"
            if not self.fs.isfile(archive):
                continue
            members = self._members(archive)
            for name in names:
                for member in members:
                    if member == name or member.endswith("/" + name):
                        return zip_member_url(member, self.fs.unstrip_protocol(archive))
        raise MissingDocumentError(
            f"{self.align_url} links to {doc!r}, which is neither a file (plain or .gz) nor "
            f"in a {lang}.zip under {', '.join(self.bases)}; download the language's XML "
            "documents next to the alignment file",
            doc,
        )

    def _members(self, archive: str) -> list[str]:
        if archive not in self._zips:
            with self.fs.open(archive, "rb") as f, zipfile.ZipFile(f) as z:
                self._zips[archive] = safe_members(z)
        return self._zips[archive]


def _doc_lang(doc: str, align_url: str, position: int) -> str:
    """The language of a linked document: its first folder, else the file's name."""
    if "/" in doc:
        return primary_lang(doc.split("/", 1)[0])
    # "en-fr.xml.gz": languages in the alignment file's own name.
    pair = basename(align_url).split(".", 1)[0].split("-")
    return primary_lang(pair[position]) if len(pair) > position else ""


class XcesFormat:
    """OPUS XCES alignments: 1-1 links become pairs; the rest are counted.

    1-0 and 0-1 links are rejected as ``unaligned_link_1_0`` and
    ``unaligned_link_0_1`` (named in the file's from-to order). Links with
    more than one sentence on a side are rejected as ``many_to_one_link``
    (or ``many_to_many_link``) unless ``xces_links`` is ``join``, which joins
    each side's sentences with a space. A ``linkGrp`` between other
    languages than the run's has its links rejected as ``language_mismatch``;
    one whose document cannot be found, as ``missing_document`` (the record
    names the document). An alignment file that breaks off keeps every link
    before the damage and is rejected once there as ``truncated_input``.
    The locator is the link's number in the file; the record holds the
    link's id and ``xtargets``.
    """

    name = "xces"
    splittable = False

    def read(self, shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
        """Yield the pairs and rejections of a cesAlign file."""
        number = 0
        try:
            for link, result in self._links(shard, options):
                number = link
                yield result
        except TruncatedXmlError as damage:
            # Every link before the damage was yielded: the damage is one record.
            yield reject(shard, number + 1, str(damage), damage.reason)
        except XML_READ_ERRORS as error:
            if options.on_malformed_xml == "error":
                raise
            yield reject(shard, number + 1, str(error), reject_reason(error))

    def _links(self, shard: Shard, options: ReaderOptions) -> Iterator[tuple[int, ReadResult]]:
        wanted = (canonical_lang(shard.pivot_lang), canonical_lang(shard.lang))
        finder = DocumentFinder(shard.url)
        cache: OrderedDict[str, dict[str, str]] = OrderedDict()

        def load(doc: str) -> dict[str, str]:
            if doc not in cache:
                cache[doc] = sentences(finder.find(doc))
                if len(cache) > DOCUMENT_CACHE:
                    cache.popitem(last=False)
            return cache[doc]

        number = 0
        group: Element | None = None
        source: dict[str, str] = {}
        target: dict[str, str] = {}
        swap = False
        matches = False
        missing = ""  # why the current group's documents cannot be read
        with open_input(shard.url) as opened:
            for event, element in iter_events(opened.stream, shard.url):
                name = local_name(element.tag)
                if event == "start":
                    if name == "linkGrp":
                        group = element
                        from_doc = element.get("fromDoc", "")
                        to_doc = element.get("toDoc", "")
                        langs = (
                            _doc_lang(from_doc, shard.url, 0),
                            _doc_lang(to_doc, shard.url, 1),
                        )
                        matches = langs in (wanted, wanted[::-1])
                        swap = langs == wanted[::-1] and wanted[0] != wanted[1]
                        missing = ""
                        if matches:
                            try:
                                source, target = load(from_doc), load(to_doc)
                            except MissingDocumentError as error:
                                # One absent document of a release costs its
                                # own links, not the run.
                                log.warning("%s; its links are rejected", error)
                                missing = f"missing document {error.document}"
                    continue
                if name == "link":
                    number += 1
                    result: ReadResult
                    if missing:
                        record = f"{element.get('id', '-')}\t{element.get('xtargets', '')}"
                        result = reject(shard, number, f"{record}\t{missing}", "missing_document")
                    else:
                        result = self._link(
                            shard, options, number, element, source, target, swap, matches
                        )
                    yield number, result
                    element.clear()
                    if group is not None:
                        group.clear()  # its attributes were read at its start
                elif name == "linkGrp":
                    group = None

    @staticmethod
    def _link(
        shard: Shard,
        options: ReaderOptions,
        number: int,
        link: Element,
        source: dict[str, str],
        target: dict[str, str],
        swap: bool,
        matches: bool,
    ) -> ReadResult:
        xtargets = link.get("xtargets", "")
        record = f"{link.get('id', '-')}\t{xtargets}"
        if not matches:
            return reject(shard, number, record, "language_mismatch")
        if ";" not in xtargets:
            return reject(shard, number, record, "malformed_link")
        left, right = xtargets.split(";", 1)
        src_ids, trg_ids = left.split(), right.split()
        if not src_ids and not trg_ids:
            return reject(shard, number, record, "malformed_link")
        if not trg_ids:
            return reject(shard, number, record, "unaligned_link_1_0")
        if not src_ids:
            return reject(shard, number, record, "unaligned_link_0_1")
        missing = [i for i in src_ids if i not in source] + [i for i in trg_ids if i not in target]
        if missing:
            return reject(
                shard, number, f"{record}\tmissing {' '.join(missing)}", "missing_sentence"
            )
        src_text = " ".join(source[i] for i in src_ids)
        trg_text = " ".join(target[i] for i in trg_ids)
        record = f"{record}\t{src_text}\t{trg_text}"
        if (len(src_ids), len(trg_ids)) != (1, 1) and options.xces_links == "one_to_one":
            reason = (
                "many_to_one_link"
                if min(len(src_ids), len(trg_ids)) == 1
                else ("many_to_many_link")
            )
            return reject(shard, number, record, reason)
        if max(len(src_text), len(trg_text)) > options.max_line_chars:
            return reject(shard, number, record, "line_too_long")
        first, second = (trg_text, src_text) if swap else (src_text, trg_text)
        return aligned(shard, number, first, second)


register_format(XcesFormat())
