"""Turn what a user passes as INPUT (files, globs, directories, prefixes) into shards."""

from __future__ import annotations

import logging
import posixpath
import zipfile

import fsspec
from paramine.pipelines.core.text import lang_aliases
from paramine.pipelines.formats.base import Shard, selectable_formats
from paramine.pipelines.formats.opening import (
    DECOMPRESSION_ERRORS,
    basename,
    is_safe_member,
    open_input,
    safe_members,
    zip_member_url,
)
from paramine.pipelines.formats.unpaired import UNPAIRED
from paramine.schemas.errors import InputError, UsageError
from paramine.schemas.languages import canonical_language

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


def _chain(url: str) -> tuple[str, str]:
    """Split a chained URL into its first link and the rest, ``::`` included.

    ``zip://c.en-pl.en::data/c.zip`` -> (``zip://c.en-pl.en``, ``::data/c.zip``);
    a plain URL -> (url, ``""``). Names of siblings (a Moses companion) are
    made on the first link, then the rest is put back.
    """
    head, sep, rest = url.partition("::")
    return head, sep + rest


class _Unpaired(InputError):
    """One side of a Moses pair whose other side is not beside it."""


def _check_archive(url: str) -> None:
    """Refuse a chained URL whose archive does not exist, naming the archive.

    fsspec would open it to list the members and fail with a bare
    ``FileNotFoundError``.
    """
    archive = _chain(url)[1][2:]
    if archive:
        fs, path = fsspec.core.url_to_fs(archive)
        if not fs.isfile(path):
            raise InputError(f"input {url!r}: the archive {archive} does not exist")


def _missing_member(url: str) -> InputError | None:
    """The error for a ``zip://MEMBER::ARCHIVE`` input whose member is not in the zip."""
    head, rest = _chain(url)
    protocol, _, member = head.partition("://")
    if protocol != "zip" or not rest:
        return None
    archive = rest[2:]
    fs, path = fsspec.core.url_to_fs(archive)
    with fs.open(path, "rb") as f:
        try:
            with zipfile.ZipFile(f) as opened:
                members = safe_members(opened)
        except DECOMPRESSION_ERRORS as bad:
            return InputError(f"input {url!r}: {archive} is not a readable zip archive: {bad}")
    shown = ", ".join(members[:10])
    if len(members) > 10:
        shown += f" and {len(members) - 10} more"
    return InputError(
        f"input {url!r}: the zip {archive} has no member {member!r} (nor a Moses pair "
        f"{member}.<lang>); it holds: {shown or 'no readable files'}"
    )


def _expand(url: str) -> tuple[list[str], bool]:
    """Return the files an input names, and whether it named a directory or glob."""
    _check_archive(url)
    head, rest = _chain(url)
    fs, path = fsspec.core.url_to_fs(url)

    def named(found: str) -> str:
        # A chained filesystem's own names drop the chain: put it back.
        return (
            f"{head.partition('://')[0]}://{found.lstrip('/')}{rest}"
            if rest
            else (fs.unstrip_protocol(found))
        )

    if any(c in path for c in GLOB_CHARS):
        return [named(p) for p in sorted(fs.glob(path)) if fs.isfile(p)], True
    if fs.isdir(path):
        return [named(p) for p in sorted(fs.find(path))], True
    if fs.isfile(path):
        return [url], False
    return [], False


def _moses_prefix(url: str, pivot_lang: str, lang: str) -> list[str]:
    """Find ``PREFIX.<pivot>`` and ``PREFIX.<lang>`` for a Moses prefix input."""
    head, rest = _chain(url)
    found = []
    for code in (pivot_lang, lang):
        for alias in sorted(lang_aliases(code)):
            for suffix in ("", *COMPRESSION_SUFFIXES):
                candidate = f"{head}.{alias}{suffix}{rest}"
                fs, path = fsspec.core.url_to_fs(candidate)
                if fs.isfile(path):
                    found.append(candidate)
                    break
            else:
                continue
            break
    return found if len(found) == 2 else []


def _side(url: str, pivot_lang: str, lang: str) -> tuple[str, str, str] | None:
    """Return (stem, side, compression) if the file's suffix names one of the languages.

    For a chained URL (``zip://c.en::c.zip``) the stem is that of the first link.
    """
    name, compression = _strip_compression(_chain(url)[0])
    stem, dot, suffix = name.rpartition(".")
    if not dot or "/" in suffix:
        return None
    if suffix.lower() in lang_aliases(pivot_lang):
        return stem, "pivot", compression
    if suffix.lower() in lang_aliases(lang):
        return stem, "candidate", compression
    return None


def _companion(stem: str, compression: str, code: str, rest: str = "") -> str | None:
    for alias in sorted(lang_aliases(code)):
        for suffix in dict.fromkeys((compression, "", *COMPRESSION_SUFFIXES)):
            candidate = f"{stem}.{alias}{suffix}{rest}"
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

    A file in a directory or glob that looks like one side of a Moses pair
    but has no partner is skipped with a warning and becomes a shard of the
    ``unpaired`` format, read as one ``unpaired_file`` rejection, so the run
    goes on and the books name the file.

    Args:
        inputs: Files, globs, directories or Moses prefixes (``corpus.en-pl``
            for ``corpus.en-pl.en`` + ``corpus.en-pl.pl``), any fsspec URL,
            chains such as ``zip://corpus.en-pl.en::corpus.zip`` included.
        pivot_lang: Language of the pivot side, e.g. ``en``.
        lang: Language of the candidate side, e.g. ``pl``.
        fmt: A format name, or ``auto`` to tell by file name.
        corpus: Corpus name for every shard; by default the file's stem.

    Raises:
        UsageError: An unknown format or language.
        InputError: An input matches nothing (or names a missing zip member),
            a Moses file named on its own has no companion, a file's format
            cannot be told, or no input gives a usable shard.
    """
    if fmt != "auto" and fmt not in selectable_formats():
        raise UsageError(
            f"--format {fmt!r} is unknown; allowed: auto, {', '.join(selectable_formats())}"
        )
    pivot_lang, lang = canonical_language(pivot_lang), canonical_language(lang)
    shards: dict[tuple[str, ...], Shard] = {}
    for url in inputs:
        files, many = _expand(url)
        if not files:
            files = _moses_prefix(url, pivot_lang, lang)
        if not files:
            raise _missing_member(url) or InputError(
                f"input {url!r} matches no file (nor a Moses prefix {url}.<lang>)"
            )
        for file in files:
            try:
                found = _classify(file, pivot_lang, lang, fmt, corpus)
            except _Unpaired as stray:
                if not many:
                    raise
                log.warning("skipping %s; it is counted as rejected (unpaired_file)", stray)
                found = [_unpaired_shard(file, str(stray), pivot_lang, lang, corpus)]
            if found is None:
                if many:
                    log.warning("skipping %s: not a bitext format paramine recognizes", file)
                    continue
                raise InputError(
                    f"cannot tell the format of {file}; name it with --format "
                    f"({', '.join(selectable_formats())}), or for a Moses pair give files ending "
                    f"in .{pivot_lang} and .{lang} (or an OPUS moses .zip holding them)"
                )
            for shard in found:
                shards.setdefault(shard.files, shard)
    resolved = list(shards.values())
    if inputs and not any(s.format != UNPAIRED for s in resolved):
        strays = [s.url for s in resolved]
        raise InputError(
            f"no bitext to read in {', '.join(inputs)}"
            + (f": only Moses files without a partner ({', '.join(strays)})" if strays else "")
            + f"; give Moses pairs ending in .{pivot_lang} and .{lang}, or TSV, TMX or XCES files"
        )
    return resolved


def _unpaired_shard(url: str, why: str, pivot_lang: str, lang: str, corpus: str | None) -> Shard:
    return Shard(
        format=UNPAIRED,
        url=url,
        corpus=corpus or _corpus_name(url),
        pivot_lang=pivot_lang,
        lang=lang,
        note=f"{why}; the file was skipped",
    )


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
        rest = _chain(url)[1]
        other = _companion(stem, compression, lang if which == "pivot" else pivot_lang, rest)
        if other is None:
            raise _Unpaired(
                f"{url} looks like one side of a Moses pair, but no "
                f"{stem}.{lang if which == 'pivot' else pivot_lang}{rest} file is beside it"
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
