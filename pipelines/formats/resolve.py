"""Turn what a user passes as INPUT (files, globs, directories, prefixes) into shards."""

from __future__ import annotations

import logging
import posixpath
import zipfile

import fsspec

from pipelines.formats.base import FORMATS, Shard
from pipelines.formats.opening import (
    DECOMPRESSION_ERRORS,
    basename,
    is_safe_member,
    open_input,
    safe_members,
    zip_member_url,
)
from pipelines.text import canonical_lang, lang_aliases

log = logging.getLogger(__name__)

COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz")
TSV_SUFFIXES = (".tsv", ".txt")
TMX_SUFFIXES = (".tmx",)
XML_SUFFIXES = (".xml",)
GLOB_CHARS = "*?["
#: Bytes of a decompressed XML file looked at for its root element.
XML_SNIFF_BYTES = 4096


def read_input_list(url: str) -> list[str]:
    """Read a file of inputs, one per line; blank lines and ``#`` comments are skipped.

    For shard lists too long for a command line (tens of thousands of URLs).
    """
    with fsspec.open(url, "rt", encoding="utf-8") as f:
        entries = [line.strip() for line in f]
    return [e for e in entries if e and not e.startswith("#")]


def _is_ces_align(url: str) -> bool:
    """Whether an XML file's root element is ``cesAlign`` (an XCES alignment)."""
    try:
        with open_input(url) as opened:
            head = opened.stream.read(XML_SNIFF_BYTES)
    except (ValueError, *DECOMPRESSION_ERRORS):  # type: ignore[misc]
        return False
    return b"<cesAlign" in head


def _strip_compression(name: str) -> tuple[str, str]:
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def _expand(url: str) -> tuple[list[str], bool]:
    """Return the files an input names, and whether it named a directory or glob."""
    fs, path = fsspec.core.url_to_fs(url)
    if any(c in path for c in GLOB_CHARS):
        return [fs.unstrip_protocol(p) for p in sorted(fs.glob(path)) if fs.isfile(p)], True
    if fs.isdir(path):
        return [fs.unstrip_protocol(p) for p in sorted(fs.find(path))], True
    if fs.isfile(path):
        return [url], False
    return [], False


def _moses_prefix(url: str, pivot_lang: str, lang: str) -> list[str]:
    """Find ``PREFIX.<pivot>`` and ``PREFIX.<lang>`` for a Moses prefix input."""
    found = []
    for code in (pivot_lang, lang):
        for alias in sorted(lang_aliases(code)):
            for suffix in ("", *COMPRESSION_SUFFIXES):
                candidate = f"{url}.{alias}{suffix}"
                fs, path = fsspec.core.url_to_fs(candidate)
                if fs.isfile(path):
                    found.append(candidate)
                    break
            else:
                continue
            break
    return found if len(found) == 2 else []


def _side(url: str, pivot_lang: str, lang: str) -> tuple[str, str, str] | None:
    """Return (stem, side, compression) if the file's suffix names one of the languages."""
    name, compression = _strip_compression(url)
    stem, dot, suffix = name.rpartition(".")
    if not dot or "/" in suffix:
        return None
    if suffix.lower() in lang_aliases(pivot_lang):
        return stem, "pivot", compression
    if suffix.lower() in lang_aliases(lang):
        return stem, "candidate", compression
    return None


def _companion(stem: str, compression: str, code: str) -> str | None:
    for alias in sorted(lang_aliases(code)):
        for suffix in dict.fromkeys((compression, "", *COMPRESSION_SUFFIXES)):
            candidate = f"{stem}.{alias}{suffix}"
            fs, path = fsspec.core.url_to_fs(candidate)
            if fs.isfile(path):
                return candidate
    return None


def _corpus_name(url: str) -> str:
    name = basename(_strip_compression(url)[0])
    for suffix in (*TSV_SUFFIXES, *TMX_SUFFIXES, *XML_SUFFIXES):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name.rsplit(".", 1)[0] if "." in name else name


def _zip_shards(
    url: str, pivot_lang: str, lang: str, fmt: str, corpus: str | None
) -> list[Shard] | None:
    """Shards inside a zip, read in place: an OPUS "moses" download, or a one-file zip.

    OPUS names the members ``<corpus>.<l1>-<l2>.<l1>`` and ``.<l2>``, the
    languages in either order. Members with absolute or ``..`` names are
    refused (logged), never read and never extracted.
    """
    fs, path = fsspec.core.url_to_fs(url)
    with fs.open(path, "rb") as f, zipfile.ZipFile(f) as archive:
        names = [i.filename for i in archive.infolist() if not i.is_dir()]
        members = safe_members(archive)
    for name in names:
        if not is_safe_member(name):
            log.warning("%s: refusing zip member %r: absolute or '..' path", url, name)
    sides: dict[str, dict[str, str]] = {}
    for member in members:
        side = _side(member, pivot_lang, lang)
        if side is not None:
            stem, which, _ = side
            sides.setdefault(stem, {})[which] = member
    shards = [
        Shard(
            format="moses",
            url=zip_member_url(found["pivot"], url),
            companion=zip_member_url(found["candidate"], url),
            corpus=corpus or posixpath.basename(stem),
            pivot_lang=pivot_lang,
            lang=lang,
        )
        for stem, found in sorted(sides.items())
        if len(found) == 2
    ]
    if shards:
        return shards
    readable = [m for m in members if m.rsplit("/", 1)[-1] not in ("README", "LICENSE")]
    if len(readable) == 1:
        inner = _classify(zip_member_url(readable[0], url), pivot_lang, lang, fmt, corpus)
        return inner
    return None


def resolve_inputs(
    inputs: list[str],
    pivot_lang: str,
    lang: str,
    fmt: str = "auto",
    corpus: str | None = None,
) -> list[Shard]:
    """Resolve INPUT arguments into shards, pairing Moses files by language suffix.

    Args:
        inputs: Files, globs, directories or Moses prefixes (``corpus.en-pl``
            for ``corpus.en-pl.en`` + ``corpus.en-pl.pl``), any fsspec URL.
        pivot_lang: Language of the pivot side, e.g. ``en``.
        lang: Language of the candidate side, e.g. ``pl``.
        fmt: A format name, or ``auto`` to tell by file name.
        corpus: Corpus name for every shard; by default the file's stem.

    Raises:
        ValueError: An input matches nothing, a Moses file has no companion,
            or a file's format cannot be told.
    """
    if fmt != "auto" and fmt not in FORMATS:
        raise ValueError(
            f"--format {fmt!r} is unknown; allowed: auto, {', '.join(sorted(FORMATS))}"
        )
    pivot_lang, lang = canonical_lang(pivot_lang), canonical_lang(lang)
    shards: dict[tuple[str, ...], Shard] = {}
    for url in inputs:
        files, many = _expand(url)
        if not files:
            files = _moses_prefix(url, pivot_lang, lang)
        if not files:
            raise ValueError(f"input {url!r} matches no file (nor a Moses prefix {url}.<lang>)")
        for file in files:
            found = _classify(file, pivot_lang, lang, fmt, corpus)
            if found is None:
                if many:
                    log.warning("skipping %s: not a bitext format paramine recognizes", file)
                    continue
                raise ValueError(
                    f"cannot tell the format of {file}; name it with --format "
                    f"({', '.join(sorted(FORMATS))}), or for a Moses pair give files ending in "
                    f".{pivot_lang} and .{lang} (or an OPUS moses .zip holding them)"
                )
            for shard in found:
                shards.setdefault(shard.files, shard)
    return list(shards.values())


def _classify(
    url: str, pivot_lang: str, lang: str, fmt: str, corpus: str | None
) -> list[Shard] | None:
    name = _strip_compression(basename(url))[0].lower()
    if fmt in ("auto", "moses") and name.endswith(".zip"):
        return _zip_shards(url, pivot_lang, lang, fmt, corpus)
    if fmt == "auto":
        if name.endswith(TMX_SUFFIXES):
            fmt = "tmx"
        elif name.endswith(XML_SUFFIXES):
            if not _is_ces_align(url):
                # Per-language documents of an XCES release sit beside the
                # alignments; they are read through them.
                log.debug("skipping %s: XML, but not a cesAlign alignment", url)
                return None
            fmt = "xces"
        elif name.startswith("czeng"):
            fmt = "czeng"
    if fmt not in ("auto", "moses"):
        return [
            Shard(
                format=fmt,
                url=url,
                corpus=corpus or _corpus_name(url),
                pivot_lang=pivot_lang,
                lang=lang,
            )
        ]
    side = _side(url, pivot_lang, lang)
    if side is not None:
        stem, which, compression = side
        other = _companion(stem, compression, lang if which == "pivot" else pivot_lang)
        if other is None:
            raise ValueError(
                f"{url} looks like one side of a Moses pair, but no "
                f"{stem}.{lang if which == 'pivot' else pivot_lang} file is beside it"
            )
        pivot_file, candidate_file = (url, other) if which == "pivot" else (other, url)
        return [
            Shard(
                format="moses",
                url=pivot_file,
                companion=candidate_file,
                corpus=corpus or basename(stem),
                pivot_lang=pivot_lang,
                lang=lang,
            )
        ]
    if fmt == "moses" or not name.endswith(TSV_SUFFIXES):
        return None
    return [
        Shard(
            format="tsv",
            url=url,
            corpus=corpus or _corpus_name(url),
            pivot_lang=pivot_lang,
            lang=lang,
        )
    ]
