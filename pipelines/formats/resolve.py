"""Turn what a user passes as INPUT (files, globs, directories, prefixes) into shards.

Every way an INPUT names bitext is decided here, in one order a reader can
follow: globs and folders expanded, zips and their members, the format
sniffed, and the one-line errors for each way it can fail. How a Moses
file finds its partner (by language suffix, from either file or a prefix)
is in ``moses_pairs.py``.

Why it is longer than 400 lines: every way an INPUT names bitext is decided
here in one order, as said above, with the one-line error of each way it can
fail; spread over files, the order would be read in several.
"""

from __future__ import annotations

import logging
import posixpath
import zipfile

import fsspec
from paramine.pipelines.files.opening import (
    DECOMPRESSION_ERRORS,
    basename,
    is_safe_member,
    open_input,
    safe_members,
    zip_member_url,
)
from paramine.pipelines.formats.base import Shard, selectable_formats
from paramine.pipelines.formats.moses_pairs import (
    NoTarget,
    Sides,
    Unpaired,
    chain,
    moses_prefix,
    moses_shards,
    side_of,
    strip_compression,
    suffix_language,
)
from paramine.pipelines.formats.pivot_languages import SELF_DESCRIBING, pivot_languages
from paramine.pipelines.formats.unpaired import UNPAIRED
from paramine.schemas.errors import InputError, UnmatchedInput, UsageError
from paramine.schemas.languages import canonical_language

log = logging.getLogger(__name__)

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


def _check_archive(url: str) -> None:
    """Refuse a chained URL whose archive does not exist, naming the archive.

    fsspec would open it to list the members and fail with a bare
    ``FileNotFoundError``.
    """
    archive = chain(url)[1][2:]
    if archive:
        fs, path = fsspec.core.url_to_fs(archive)
        if not fs.isfile(path):
            raise InputError(f"input {url!r}: the archive {archive} does not exist")


def _missing_member(url: str) -> InputError | None:
    """The error for a ``zip://MEMBER::ARCHIVE`` input whose member is not in the zip."""
    head, rest = chain(url)
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
    head, rest = chain(url)
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
    if fs.exists(path):
        # A named pipe, a socket, a device: paramine reads an input twice (its
        # fingerprint, then its pairs), which a stream cannot give.
        raise InputError(
            f"input {url!r} is not a regular file (a named pipe or a device); copy the "
            "stream to a file and give that"
        )
    return [], False


def _corpus_name(url: str) -> str:
    name = basename(strip_compression(url)[0])
    for suffix in (*TSV_SUFFIXES, *TMX_SUFFIXES, *XML_SUFFIXES):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name.rsplit(".", 1)[0] if "." in name else name


#: The key of a stem's candidate-side member in ``_zip_shards`` (pivot sides go by language).
_TARGET = ""


def _zip_shards(url: str, sides: Sides, fmt: str, corpus: str | None) -> list[Shard] | None:
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
    by_stem: dict[str, dict[str, str]] = {}
    for member in members:
        side = side_of(member, sides)
        if side is not None:
            stem, which, _, code = side
            by_stem.setdefault(stem, {})[_TARGET if which == "candidate" else code] = member
    shards = [
        Shard(
            format="moses",
            url=zip_member_url(member, url),
            companion=zip_member_url(found[_TARGET], url),
            corpus=corpus or posixpath.basename(stem),
            pivot_lang=code,
            lang=sides.lang,
        )
        for stem, found in sorted(by_stem.items())
        if _TARGET in found
        for code, member in sorted(found.items())
        if code != _TARGET
    ]
    if shards:
        return shards
    readable = [m for m in members if m.rsplit("/", 1)[-1] not in ("README", "LICENSE")]
    if len(readable) == 1:
        inner = _classify(zip_member_url(readable[0], url), sides, fmt, corpus)
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

    With several pivot languages (``pivot_lang`` ``auto`` or a list), each
    shard's ``pivot_lang`` is the one its input names: a Moses file's suffix
    (the side that is not ``lang``; a target-side file pairs with every pivot
    side beside it), an OPUS zip's member suffixes; a TSV shard carries the
    run's ``pivot_lang`` and its reader takes each line's languages from
    Tatoeba's language columns. Other formats do not name their languages and
    are refused.

    Args:
        inputs: Files, globs, directories or Moses prefixes (``corpus.en-pl``
            for ``corpus.en-pl.en`` + ``corpus.en-pl.pl``), any fsspec URL,
            chains such as ``zip://corpus.en-pl.en::corpus.zip`` included.
        pivot_lang: Language of the pivot side, e.g. ``en``; ``auto``, or a
            comma-separated list (``de,en,eo``), for several.
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
    lang = canonical_language(lang)
    sides = _run_sides(pivot_lang, lang)
    shards: dict[tuple[str, ...], Shard] = {}
    # Moses files of other languages skipped in a directory: named if nothing is left.
    skipped: list[str] = []
    hints: list[str] = []  # what stray Moses files' siblings suggest
    for url in inputs:
        files, many = _expand(url)
        if not files:
            files = moses_prefix(url, sides)
        if not files:
            raise _missing_member(url) or UnmatchedInput(
                f"input {url!r} matches no file (nor a Moses prefix {url}.<lang>)", url
            )
        for file in files:
            for shard in _file_shards(file, many, sides, fmt, corpus, skipped, hints):
                shards.setdefault(shard.files, shard)
    resolved = list(shards.values())
    if inputs and not any(s.format != UNPAIRED for s in resolved):
        raise _no_bitext(inputs, [s.url for s in resolved], skipped, hints, sides)
    return resolved


def _file_shards(
    file: str,
    many: bool,
    sides: Sides,
    fmt: str,
    corpus: str | None,
    skipped: list[str],
    hints: list[str],
) -> list[Shard]:
    """The shards of one file; a file found by a glob or folder (``many``) may be skipped.

    A skipped file is named in ``skipped`` (another language pair) or kept as an
    ``unpaired`` shard (a Moses side without its partner; what its siblings
    suggest goes to ``hints``); a file named on its own raises instead.
    """
    try:
        found = _classify(file, sides, fmt, corpus)
    except Unpaired as stray:
        if not many:
            raise
        log.warning("skipping %s; it is counted as rejected (unpaired_file)", stray)
        if stray.hint:
            hints.append(stray.hint)
        return [_unpaired_shard(file, str(stray), sides, corpus)]
    except NoTarget as other:
        if not many:
            raise
        log.warning("skipping %s", other)
        skipped.append(str(other))
        return []
    if found is not None:
        return list(found)
    if many:
        log.warning("skipping %s: not a bitext format paramine recognizes", file)
        return []
    raise InputError(
        f"cannot tell the format of {file}; name it with --format "
        f"({', '.join(selectable_formats())}), or for a Moses pair give files ending "
        f"in .{sides.shown()} and .{sides.lang} (or an OPUS moses .zip holding them)"
    )


def _run_sides(pivot_lang: str, lang: str) -> Sides:
    """The run's two sides: one pivot language, or several (a list, or ``auto``)."""
    languages = pivot_languages(pivot_lang)
    if languages is not None and len(languages) == 1:
        (only,) = languages
        return Sides(only, lang)
    spec = "auto" if languages is None else ",".join(sorted(languages))
    return Sides(spec, lang, several=True)


def _no_bitext(
    inputs: list[str], strays: list[str], skipped: list[str], hints: list[str], sides: Sides
) -> InputError:
    """The error for inputs that hold no bitext: what was found instead, and what to give."""
    others = ""
    if skipped:
        others = f" ({skipped[0]}" + (f"; and {len(skipped) - 1} more)" if skipped[1:] else ")")
    if hints:  # the first stray's siblings name another pivot language
        others += f" ({hints[0]})"
    return InputError(
        f"no bitext to read in {', '.join(inputs)}"
        + (f": only Moses files without a partner ({', '.join(strays)})" if strays else "")
        + others
        + f"; give Moses pairs ending in .{sides.shown()} and .{sides.lang}, or TSV, TMX or XCES "
        "files"
    )


def _unpaired_shard(url: str, why: str, sides: Sides, corpus: str | None) -> Shard:
    return Shard(
        format=UNPAIRED,
        url=url,
        corpus=corpus or _corpus_name(url),
        pivot_lang=sides.pivot,
        lang=sides.lang,
        note=f"{why}; the file was skipped",
    )


#: Bytes of a TSV looked at for its first line when several pivot languages are read.
TSV_SNIFF_BYTES = 65536


def _check_tsv_languages(url: str, sides: Sides) -> None:
    """Refuse a TSV that does not name its languages, where each line's pivot language is read.

    Only Tatoeba's 4 columns (srclang, trglang, src, trg) say which language
    a line's pivot is in; a 2-column file would be read as no language.
    """
    try:
        with open_input(url) as opened:
            head = opened.stream.read(TSV_SNIFF_BYTES)
    except (ValueError, InputError, *DECOMPRESSION_ERRORS):  # type: ignore[misc]
        return  # the reader rejects what cannot be read, naming the file
    first = next(
        (line for line in head.decode("utf-8", "replace").splitlines() if line.strip()), ""
    )
    columns = first.split("\t")
    if not first or (len(columns) == 4 and sides.lang in {_lang(columns[0]), _lang(columns[1])}):
        return
    raise InputError(
        f"{url}: with --src-lang {sides.pivot} each input must say its pivot language, and this "
        f"TSV's first line has {len(columns)} column{'s' if len(columns) != 1 else ''}"
        + ("" if len(columns) != 4 else f" but no {sides.lang} column")
        + ", not Tatoeba's 4 (srclang, trglang, source, target); mine it in a run of its own "
        "with one --src-lang"
    )


def _lang(code: str) -> str:
    return suffix_language(code.strip()) or code.strip().lower()


def _classify(url: str, sides: Sides, fmt: str, corpus: str | None) -> list[Shard] | None:
    name = strip_compression(basename(url))[0].lower()
    if fmt in ("auto", "moses") and name.endswith(".zip"):
        return _zip_shards(url, sides, fmt, corpus)
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
        _check_self_describing(url, fmt, sides)
        return [
            Shard(
                format=fmt,
                url=url,
                corpus=corpus or _corpus_name(url),
                pivot_lang=sides.pivot,
                lang=sides.lang,
            )
        ]
    moses = moses_shards(url, sides, corpus)
    if moses is not None:
        return moses
    if fmt == "moses" or not name.endswith(TSV_SUFFIXES):
        return None
    _check_self_describing(url, "tsv", sides)
    return [
        Shard(
            format="tsv",
            url=url,
            corpus=corpus or _corpus_name(url),
            pivot_lang=sides.pivot,
            lang=sides.lang,
        )
    ]


def _check_self_describing(url: str, fmt: str, sides: Sides) -> None:
    """With several pivot languages, refuse a file that cannot say its pivot language."""
    if not sides.several:
        return
    if fmt not in SELF_DESCRIBING:
        raise InputError(
            f"{url}: with --src-lang {sides.pivot} each input must say its pivot language "
            f"(Moses file suffixes, Tatoeba TSV language columns), and a {fmt} file is read "
            "with one; mine it in a run of its own with one --src-lang"
        )
    if fmt == "tsv":
        _check_tsv_languages(url, sides)
