"""How the two files of a Moses pair find each other: by their language suffixes.

``corpus.en-pl.en`` pairs with ``corpus.en-pl.pl`` beside it (compressed or
not, in a folder, a bucket or a zip chain); with several pivot languages a
target-side file pairs with every pivot side beside it. ``resolve.py``
decides what each INPUT is and asks here when a file looks like one side of
a pair; the one-line errors for a file without its partner are made here.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

import fsspec
from paramine.pipelines.core.text import lang_aliases
from paramine.pipelines.files.opening import basename
from paramine.pipelines.formats.base import Shard
from paramine.pipelines.formats.pivot_languages import allows, describe, pivot_languages
from paramine.schemas.errors import InputError, UsageError
from paramine.schemas.languages import canonical_language, registered

COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz")
#: A file suffix that may name a language: ``pol``, ``pl``, ``jpn_Hani``, ``pt-BR``.
LANGUAGE_SUFFIX = re.compile(r"[a-z]{2,3}([-_][a-z0-9]{2,8})*", re.IGNORECASE)
#: Suffixes that ISO 639-3 also lists as languages but that name files of
#: another kind beside bitext (OPUS puts ``.ids`` beside its Moses files).
NOT_LANGUAGE_SUFFIXES = frozenset(
    {"bak", "cfg", "csv", "doc", "err", "ids", "log", "tmp", "tsv", "txt", "xml", "yml"}
)


@dataclass(frozen=True)
class Sides:
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
        # Only a language the registry knows: a suffix is no declaration, and
        # any three letters are an ISO 639-3 code's shape (a run that names
        # an unregistered code reads its files by that code).
        return canonical_language(suffix) if registered(suffix) else None
    except UsageError:
        return None


def strip_compression(name: str) -> tuple[str, str]:
    """``c.en.gz`` -> (``c.en``, ``.gz``); a name without a compression suffix -> (name, "")."""
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def chain(url: str) -> tuple[str, str]:
    """Split a chained URL into its first link and the rest, ``::`` included.

    ``zip://c.en-pl.en::data/c.zip`` -> (``zip://c.en-pl.en``, ``::data/c.zip``);
    a plain URL -> (url, ``""``). Names of siblings (a Moses companion) are
    made on the first link, then the rest is put back.
    """
    head, sep, rest = url.partition("::")
    return head, sep + rest


class Unpaired(InputError):
    """One side of a Moses pair whose other side is not beside it.

    ``hint``: what the file's siblings suggest (another pivot language), or "".
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message + (f" ({hint})" if hint else ""))
        self.hint = hint


def moses_prefix(url: str, sides: Sides) -> list[str]:
    """Find ``PREFIX.<pivot>`` and ``PREFIX.<lang>`` for a Moses prefix input.

    With several pivot languages only the target side is found here; its
    pivot sides are found beside it when it is classified.
    """
    head, rest = chain(url)
    if sides.several:
        target = companion(head, "", sides.lang, rest)
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


def side_of(url: str, sides: Sides) -> tuple[str, str, str, str] | None:
    """Return (stem, side, compression, pivot language) if the file's suffix names a side.

    The pivot language is ``""`` for the candidate side. For a chained URL
    (``zip://c.en::c.zip``) the stem is that of the first link.
    """
    name, compression = strip_compression(chain(url)[0])
    stem, dot, suffix = name.rpartition(".")
    if not dot or "/" in suffix:
        return None
    code = sides.pivot_of(suffix)
    if code is not None:
        return stem, "pivot", compression, code
    if sides.is_target(suffix):
        return stem, "candidate", compression, ""
    return None


def companion(stem: str, compression: str, code: str, rest: str = "") -> str | None:
    """The file ``STEM.<code>`` beside a stem, by any alias of the language and any compression.

    The compression of the file in hand is tried first.
    """
    for alias in sorted(lang_aliases(code)):
        for suffix in dict.fromkeys((compression, "", *COMPRESSION_SUFFIXES)):
            candidate = f"{stem}.{alias}{suffix}{rest}"
            fs, path = fsspec.core.url_to_fs(candidate)
            if fs.isfile(path):
                return candidate
    return None


def siblings(stem: str, rest: str = "") -> list[tuple[str, str]]:
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
        suffix, compression = strip_compression(name[len(base) + 1 :])
        if suffix and "." not in suffix:
            found.append((f"{stem}.{suffix}{compression}{rest}", suffix))
    return found


def pivot_sides(stem: str, compression: str, rest: str, sides: Sides) -> list[tuple[str, str]]:
    """The pivot-side files beside a candidate-side file, each with its pivot language."""
    languages = pivot_languages(sides.pivot) if sides.several else frozenset({sides.pivot})
    if languages is None:
        # --src-lang auto: whatever language suffix the stem's other files carry.
        found = [(url, sides.pivot_of(suffix)) for url, suffix in siblings(stem, rest)]
        return [(url, code) for url, code in found if code is not None]
    pairs = []
    for code in sorted(languages):
        other = companion(stem, compression, code, rest)
        if other is not None:
            pairs.append((other, code))
    return pairs


def other_pivots_hint(stem: str, rest: str, url: str) -> str:
    """What a target file's siblings say: another pivot language, given by --src-lang.

    Only suffixes that are language codes count (``.deu``, not ``.ids``).
    """
    own = strip_compression(chain(url)[0])[0].rpartition(".")[2]
    beside = {suffix for _, suffix in siblings(stem, rest) if suffix != own}
    others = sorted(suffix for suffix in beside if len(lang_aliases(suffix)) > 1)
    if not others:
        return ""
    shown = ", ".join(f".{suffix}" for suffix in others)
    return (
        f"beside it: {shown}; for another pivot language give --src-lang {others[0]}, "
        "or --src-lang auto for several"
    )


class NoTarget(InputError):
    """With several pivot languages: a Moses file of a pivot language with no target side."""


def no_target(url: str, stem: str, suffix: str, code: str, rest: str, sides: Sides) -> NoTarget:
    """The error for a pivot-side file without a target side, naming its other sides."""
    beside = sorted(
        {f".{other}" for _, other in siblings(stem, rest) if other.lower() != suffix.lower()}
    )
    return NoTarget(
        f"{url}: a Moses file in {code} (its suffix .{suffix}), but no {stem}.{sides.lang}{rest} "
        f"is beside it"
        + (f" (its other sides: {', '.join(beside)})" if beside else "")
        + f": with --tgt-lang {sides.lang} a Moses pair needs a .{sides.lang} side; give the "
        "target language of this bitext with --tgt-lang, or leave the file out"
    )


def moses_shards(url: str, sides: Sides, corpus: str | None) -> list[Shard] | None:
    """The shards of a file that is one side of a Moses pair, or ``None`` if it is not one.

    A pivot-side file pairs with the target side beside it; a target-side
    file with every pivot side beside it (several with ``--src-lang auto``).

    Raises:
        Unpaired: The file's partner is not beside it.
        NoTarget: With several pivot languages, a pivot-side file has no target side.
    """
    side = side_of(url, sides)
    if side is None:
        return None
    stem, which, compression, code = side
    rest = chain(url)[1]
    if which == "pivot":
        other = companion(stem, compression, sides.lang, rest)
        if other is None and sides.several:
            suffix = strip_compression(chain(url)[0])[0].rpartition(".")[2]
            raise no_target(url, stem, suffix, code, rest, sides)
        if other is None:
            raise Unpaired(
                f"{url} looks like one side of a Moses pair, but no "
                f"{stem}.{sides.lang}{rest} file is beside it"
            )
        pivots, candidate_file = [(url, code)], other
    else:
        pivots, candidate_file = pivot_sides(stem, compression, rest, sides), url
        if not pivots:
            raise Unpaired(
                f"{url} looks like one side of a Moses pair, but no "
                f"{stem}.{sides.shown()}{rest} file is beside it",
                other_pivots_hint(stem, rest, url),
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
