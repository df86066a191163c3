"""Which pivot languages a run reads: one (``--src-lang en``), a list, or ``auto``.

With one language every input is read as it always was. With ``auto`` or a
list (``de,en,eo``), each input says its own pivot language: a Moses file by
its language suffix (the one that is not ``--tgt-lang``), an OPUS moses zip
by its members' suffixes, a Tatoeba TSV by the language columns of each line.
Formats that do not name their languages (a 2-column TSV, TMX, XCES, CzEng)
need one ``--src-lang``.
"""

from __future__ import annotations

from typing import Any

from paramine.schemas.errors import UsageError
from paramine.schemas.languages import canonical_language

#: ``--src-lang auto``: each input's pivot language is read from the input.
AUTO = "auto"
#: The formats whose inputs say their languages: they can be read with several.
SELF_DESCRIBING = ("moses", "tsv")


def parse_pivot_langs(value: Any) -> str:
    """``--src-lang``'s text: a language, ``auto``, or languages separated by commas.

    One language is kept as given (the config checks it); a list loses its
    spaces (``de, en`` -> ``de,en``).

    Raises:
        ValueError: An empty item, or ``auto`` inside a list.
    """
    text = str(value)
    if text.strip().lower() == AUTO:
        return AUTO
    if "," not in text:
        return text
    parts = [part.strip() for part in text.split(",")]
    if not all(parts) or AUTO in (part.lower() for part in parts):
        raise ValueError(
            f"{text!r}: give one language (en), languages separated by commas (de,en,eo), or auto"
        )
    return ",".join(parts)


def pivot_languages(spec: str) -> frozenset[str] | None:
    """The canonical pivot languages ``--src-lang`` allows; ``None`` for ``auto`` (any).

    Raises:
        UsageError: A language that is not known.
    """
    if spec.strip().lower() == AUTO:
        return None
    return frozenset(canonical_language(part) for part in spec.split(","))


def several(spec: str) -> bool:
    """Whether inputs may have different pivot languages (``auto`` or a list)."""
    if spec.strip().lower() == AUTO:
        return True
    # One code is never canonicalized here: a reader's shard may carry any.
    return "," in spec and len(pivot_languages(spec) or ()) > 1


def allows(spec: str, language: str, target: str) -> bool:
    """Whether ``language`` (canonical) may be a pivot language of a run of ``spec``."""
    if language == target:
        return False
    languages = pivot_languages(spec)
    return languages is None or language in languages


def describe(spec: str) -> str:
    """``spec`` as a message says it: ``any language`` or ``de, en``."""
    languages = pivot_languages(spec)
    return "any language" if languages is None else ", ".join(sorted(languages))


def check_sides(src_lang: str, tgt_lang: str, tsv_columns: tuple[int, int] | None) -> None:
    """Check that the pivot languages are other than the target, and say what lists cannot read.

    Raises:
        UsageError: ``--tgt-lang`` among the pivot languages, or ``--tsv-columns``
            with several (chosen columns do not say a line's pivot language).
    """
    sources = pivot_languages(src_lang)  # None: auto
    if sources is not None and canonical_language(tgt_lang) in sources:
        raise UsageError(
            f"--src-lang {src_lang} and --tgt-lang {tgt_lang} are the same language: paramine "
            "mines paraphrases in the target language from a pivot in another language"
        )
    if several(src_lang) and tsv_columns is not None:
        raise UsageError(
            f"--tsv-columns with --src-lang {src_lang}: chosen columns do not say a line's "
            "pivot language; give one --src-lang, or Tatoeba's 4-column TSV"
        )
