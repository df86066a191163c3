"""Turn what a user passes as INPUT (files, globs, directories, prefixes) into shards.

Why it is longer than 500 lines: every way an INPUT names bitext is decided
here, in one order a reader can follow: globs and folders expanded, zips and
their members, a Moses pair found from either file or its prefix (and, with
several pivot languages, every side beside the target), the format sniffed,
and the one-line errors for each way it can fail. Splitting the Moses
pairing out is the next step if it grows again.
"""

from __future__ import annotations

import logging
import posixpath
import re
import zipfile
from dataclasses import dataclass

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
from paramine.pipelines.formats.pivot_languages import (
    SELF_DESCRIBING,
    allows,
    describe,
    pivot_languages,
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
#: A file suffix that may name a language: ``pol``, ``pl``, ``jpn_Hani``, ``pt-BR``.
LANGUAGE_SUFFIX = re.compile(r"[a-z]{2,3}([-_][a-z0-9]{2,8})*", re.IGNORECASE)
#: Suffixes that ISO 639-3 also lists as languages but that name files of
#: another kind beside bitext (OPUS puts ``.ids`` beside its Moses files).
NOT_LANGUAGE_SUFFIXES = frozenset(
    {"bak", "cfg", "csv", "doc", "err", "ids", "log", "tmp", "tsv", "txt", "xml", "yml"}
)


@dataclass(frozen=True)
class _Sides:
    """How the suffixes of a Moses pair's files name its sides in a run.

    Attributes:
        pivot: The canonical pivot language, or with several the ``--src-lang``
            text (``auto``, ``de,en``).
        lang: The canonical target (candidate) language.
        several: Inputs may have different pivot languages: a file's pivot
            language is the one its suffix names.
    """

    pivot: str
    lang: str
    several: bool = False

    def is_target(self, suffix: str) -> bool:
        return suffix.lower() in lang_aliases(self.lang)

    def pivot_of(self, suffix: str) -> str | None:
        """The pivot language a file suffix names in this run, or ``None``."""
        if not self.several:
            return self.pivot if suffix.lower() in lang_aliases(self.pivot) else None
        code = suffix_language(suffix)
        return code if code is not None and allows(self.pivot, code, self.lang) else None

    def shown(self) -> str:
        """The pivot side's suffix as a message shows it: ``en``, or ``<de, en>``."""
        return f"<{describe(self.pivot)}>" if self.several else self.pivot


def suffix_language(suffix: str) -> str | None:
    """The canonical language a file suffix names (``pol`` -> ``pl``), or ``None``."""
    if suffix.lower() in NOT_LANGUAGE_SUFFIXES or not LANGUAGE_SUFFIX.fullmatch(suffix):
        return None
    try:
        return canonical_language(suffix)
    except UsageError:
        return None


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
    """One side of a Moses pair whose other side is not beside it.

    ``hint``: what the file's siblings suggest (another pivot language), or "".
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message + (f" ({hint})" if hint else ""))
        self.hint = hint


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


def _moses_prefix(url: str, sides: _Sides) -> list[str]:
    """Find ``PREFIX.<pivot>`` and ``PREFIX.<lang>`` for a Moses prefix input.

    With several pivot languages only the target side is found here; its
    pivot sides are found beside it when it is classified.
    """
    head, rest = _chain(url)
    if sides.several:
        target = _companion(head, "", sides.lang, rest)
        return [target] if target else []
    found = []
    for code in (sides.pivot, sides.lang):
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


def _side(url: str, sides: _Sides) -> tuple[str, str, str, str] | None:
    """Return (stem, side, compression, pivot language) if the file's suffix names a side.

    The pivot language is ``""`` for the candidate side. For a chained URL
    (``zip://c.en::c.zip``) the stem is that of the first link.
    """
    name, compression = _strip_compression(_chain(url)[0])
    stem, dot, suffix = name.rpartition(".")
    if not dot or "/" in suffix:
        return None
    code = sides.pivot_of(suffix)
    if code is not None:
        return stem, "pivot", compression, code
    if sides.is_target(suffix):
        return stem, "candidate", compression, ""
    return None


def _companion(stem: str, compression: str, code: str, rest: str = "") -> str | None:
    for alias in sorted(lang_aliases(code)):
        for suffix in dict.fromkeys((compression, "", *COMPRESSION_SUFFIXES)):
            candidate = f"{stem}.{alias}{suffix}{rest}"
            fs, path = fsspec.core.url_to_fs(candidate)
            if fs.isfile(path):
                return candidate
    return None


def _siblings(stem: str, rest: str = "") -> list[tuple[str, str]]:
    """The files ``STEM.<suffix>`` (compressed or not) beside a stem, with their suffixes."""
    fs, path = fsspec.core.url_to_fs(f"{stem}.x{rest}")
    folder, base = posixpath.split(path[: -len(".x")])
    try:
        entries = fs.ls(folder or fs.root_marker, detail=True)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in sorted(entries, key=lambda e: str(e["name"])):
        name = posixpath.basename(str(entry["name"]).rstrip("/"))
        if entry.get("type") != "file" or not name.startswith(base + "."):
            continue
        suffix, compression = _strip_compression(name[len(base) + 1 :])
        if suffix and "." not in suffix:
            found.append((f"{stem}.{suffix}{compression}{rest}", suffix))
    return found


def _pivot_sides(stem: str, compression: str, rest: str, sides: _Sides) -> list[tuple[str, str]]:
    """The pivot-side files beside a candidate-side file, each with its pivot language."""
    languages = pivot_languages(sides.pivot) if sides.several else frozenset({sides.pivot})
    if languages is None:
        # --src-lang auto: whatever language suffix the stem's other files carry.
        found = [(url, sides.pivot_of(suffix)) for url, suffix in _siblings(stem, rest)]
        return [(url, code) for url, code in found if code is not None]
    pairs = []
    for code in sorted(languages):
        other = _companion(stem, compression, code, rest)
        if other is not None:
            pairs.append((other, code))
    return pairs


def _corpus_name(url: str) -> str:
    name = basename(_strip_compression(url)[0])
    for suffix in (*TSV_SUFFIXES, *TMX_SUFFIXES, *XML_SUFFIXES):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name.rsplit(".", 1)[0] if "." in name else name


#: The key of a stem's candidate-side member in ``_zip_shards`` (pivot sides go by language).
_TARGET = ""


def _zip_shards(url: str, sides: _Sides, fmt: str, corpus: str | None) -> list[Shard] | None:
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
        side = _side(member, sides)
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
    languages = pivot_languages(pivot_lang)
    lang = canonical_language(lang)
    if languages is not None and len(languages) == 1:
        (only,) = languages
        sides = _Sides(only, lang)
    else:
        spec = "auto" if languages is None else ",".join(sorted(languages))
        sides = _Sides(spec, lang, several=True)
    shards: dict[tuple[str, ...], Shard] = {}
    # Moses files of other languages skipped in a directory: named if nothing is left.
    skipped: list[str] = []
    hints: list[str] = []  # what stray Moses files' siblings suggest
    for url in inputs:
        files, many = _expand(url)
        if not files:
            files = _moses_prefix(url, sides)
        if not files:
            raise _missing_member(url) or InputError(
                f"input {url!r} matches no file (nor a Moses prefix {url}.<lang>)"
            )
        for file in files:
            try:
                found = _classify(file, sides, fmt, corpus)
            except _Unpaired as stray:
                if not many:
                    raise
                log.warning("skipping %s; it is counted as rejected (unpaired_file)", stray)
                if stray.hint:
                    hints.append(stray.hint)
                found = [_unpaired_shard(file, str(stray), sides, corpus)]
            except _NoTarget as other:
                if not many:
                    raise
                log.warning("skipping %s", other)
                skipped.append(str(other))
                continue
            if found is None:
                if many:
                    log.warning("skipping %s: not a bitext format paramine recognizes", file)
                    continue
                raise InputError(
                    f"cannot tell the format of {file}; name it with --format "
                    f"({', '.join(selectable_formats())}), or for a Moses pair give files ending "
                    f"in .{sides.shown()} and .{lang} (or an OPUS moses .zip holding them)"
                )
            for shard in found:
                shards.setdefault(shard.files, shard)
    resolved = list(shards.values())
    if inputs and not any(s.format != UNPAIRED for s in resolved):
        strays = [s.url for s in resolved]
        others = ""
        if skipped:
            others = f" ({skipped[0]}" + (f"; and {len(skipped) - 1} more)" if skipped[1:] else ")")
        if hints:  # the first stray's siblings name another pivot language
            others += f" ({hints[0]})"
        raise InputError(
            f"no bitext to read in {', '.join(inputs)}"
            + (f": only Moses files without a partner ({', '.join(strays)})" if strays else "")
            + others
            + f"; give Moses pairs ending in .{sides.shown()} and .{lang}, or TSV, TMX or XCES "
            "files"
        )
    return resolved


def _other_pivots_hint(stem: str, rest: str, url: str) -> str:
    """What a target file's siblings say: another pivot language, given by --src-lang.

    Only suffixes that are language codes count (``.deu``, not ``.ids``).
    """
    own = _strip_compression(_chain(url)[0])[0].rpartition(".")[2]
    siblings = {suffix for _, suffix in _siblings(stem, rest) if suffix != own}
    others = sorted(suffix for suffix in siblings if len(lang_aliases(suffix)) > 1)
    if not others:
        return ""
    shown = ", ".join(f".{suffix}" for suffix in others)
    return (
        f"beside it: {shown}; for another pivot language give --src-lang {others[0]}, "
        "or --src-lang auto for several"
    )


class _NoTarget(InputError):
    """With several pivot languages: a Moses file of a pivot language with no target side."""


def _no_target(url: str, stem: str, suffix: str, code: str, rest: str, sides: _Sides) -> _NoTarget:
    beside = sorted(
        {f".{other}" for _, other in _siblings(stem, rest) if other.lower() != suffix.lower()}
    )
    return _NoTarget(
        f"{url}: a Moses file in {code} (its suffix .{suffix}), but no {stem}.{sides.lang}{rest} "
        f"is beside it"
        + (f" (its other sides: {', '.join(beside)})" if beside else "")
        + f": with --tgt-lang {sides.lang} a Moses pair needs a .{sides.lang} side; give the "
        "target language of this bitext with --tgt-lang, or leave the file out"
    )


def _unpaired_shard(url: str, why: str, sides: _Sides, corpus: str | None) -> Shard:
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


def _check_tsv_languages(url: str, sides: _Sides) -> None:
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


def _classify(url: str, sides: _Sides, fmt: str, corpus: str | None) -> list[Shard] | None:
    name = _strip_compression(basename(url))[0].lower()
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
    side = _side(url, sides)
    if side is not None:
        stem, which, compression, code = side
        rest = _chain(url)[1]
        if which == "pivot":
            other = _companion(stem, compression, sides.lang, rest)
            if other is None and sides.several:
                suffix = _strip_compression(_chain(url)[0])[0].rpartition(".")[2]
                raise _no_target(url, stem, suffix, code, rest, sides)
            if other is None:
                raise _Unpaired(
                    f"{url} looks like one side of a Moses pair, but no "
                    f"{stem}.{sides.lang}{rest} file is beside it"
                )
            pivots, candidate_file = [(url, code)], other
        else:
            pivots, candidate_file = _pivot_sides(stem, compression, rest, sides), url
            if not pivots:
                raise _Unpaired(
                    f"{url} looks like one side of a Moses pair, but no "
                    f"{stem}.{sides.shown()}{rest} file is beside it",
                    _other_pivots_hint(stem, rest, url),
                )
        return [
            Shard(
                format="moses",
                url=pivot_file,
                companion=candidate_file,
                corpus=corpus or basename(stem),
                pivot_lang=pivot_lang,
                lang=sides.lang,
            )
            for pivot_file, pivot_lang in pivots
        ]
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


def _check_self_describing(url: str, fmt: str, sides: _Sides) -> None:
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
