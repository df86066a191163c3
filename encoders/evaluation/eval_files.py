"""The files ``paramine evaluate`` and ``paramine train`` score on: bitexts, held-out lines, STS.

``--eval-bitext`` (two line-aligned files or a two-column TSV), ``--eval-held-out``
(a bitext's held-out pivots, split by the hash the trainer splits a dataset by)
and ``--eval-sts`` (``sentence1<TAB>sentence2<TAB>score``), read with errors
that name the file and line.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from paramine.schemas.errors import InputError, UsageError

if TYPE_CHECKING:
    from paramine.encoders.evaluation.config import EvalOptions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StsData:
    """Sentence pairs with gold similarity scores."""

    sentence1: list[str]
    sentence2: list[str]
    scores: list[float]


@dataclass(frozen=True)
class Bitext:
    """Line-aligned translations: ``target[i]`` translates ``source[i]``."""

    name: str
    source: list[str]
    target: list[str]


def read_sts_tsv(path: str) -> StsData:
    """Read ``sentence1<TAB>sentence2<TAB>score`` lines (fsspec URL or path).

    A first line whose score is not a number is taken as a header. Blank
    lines are skipped; any other malformed line is an error naming it.
    """
    s1: list[str] = []
    s2: list[str] = []
    scores: list[float] = []
    for number, line in enumerate(_read_lines(path, "--eval-sts"), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise InputError(
                f"{path}:{number}: expected 3 tab-separated fields "
                f"(sentence1, sentence2, score), found {len(fields)}"
            )
        try:
            score = float(fields[2])
        except ValueError:
            if number == 1:
                continue  # a header
            raise InputError(f"{path}:{number}: score {fields[2]!r} is not a number") from None
        s1.append(fields[0])
        s2.append(fields[1])
        scores.append(score)
    if len(scores) < 2:
        raise InputError(f"{path}: {len(scores)} scored sentence pairs; Spearman needs 2 or more")
    return StsData(s1, s2, scores)


def _read_lines(path: str, flag: str) -> list[str]:
    """The lines of a UTF-8 text file, line ends stripped; ``flag`` names it in errors."""
    import fsspec

    try:
        with fsspec.open(path, "r", encoding="utf-8") as f:
            return [line.rstrip("\r\n") for line in f]
    except FileNotFoundError:
        raise InputError(f"{flag}: {path} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{flag}: {path} is a folder; give a file") from None
    except UnicodeDecodeError as error:
        raise InputError(
            f"{flag}: {path} is not UTF-8 text ({error.reason} at byte {error.start})"
        ) from None


def read_bitext(paths: Sequence[str]) -> Bitext:
    """Read a bitext: two line-aligned files (Moses style), or one two-column TSV.

    Raises:
        InputError: the files differ in length, a TSV line has not 2 fields,
            or fewer than 2 pairs remain (retrieval needs a distractor).
    """
    if len(paths) == 2:
        source, target = (_read_lines(path, "--eval-bitext") for path in paths)
        if len(source) != len(target):
            raise InputError(
                f"--eval-bitext: {paths[0]} has {len(source)} lines but {paths[1]} has "
                f"{len(target)}; give two line-aligned files"
            )
        name = "-".join(PurePosixPath(path).suffix.lstrip(".") or "x" for path in paths)
        # tatoeba.pol-eng.pol + .eng -> "pol-eng"
        name = name if name != "x-x" else PurePosixPath(paths[0]).stem
    elif len(paths) == 1:
        source, target = [], []
        for number, line in enumerate(_read_lines(paths[0], "--eval-bitext"), start=1):
            fields = line.split("\t")
            if len(fields) != 2:
                raise InputError(
                    f"{paths[0]}:{number}: expected 2 tab-separated fields (a sentence and "
                    f"its translation), found {len(fields)}"
                )
            source.append(fields[0])
            target.append(fields[1])
        name = PurePosixPath(paths[0]).stem
    else:
        raise UsageError(
            f"--eval-bitext takes one TSV or two line-aligned files, got {len(paths)} paths"
        )
    # Blank lines on either side are not pairs.
    kept = [(s, t) for s, t in zip(source, target, strict=True) if s.strip() and t.strip()]
    if len(kept) < 2:
        raise InputError(f"--eval-bitext {' '.join(paths)}: {len(kept)} sentence pairs, need 2+")
    return Bitext(name, [s for s, _ in kept], [t for _, t in kept])


def held_out_bitexts(paths: Sequence[str], eval_share: float) -> list[Bitext]:
    """The held-out lines of a bitext as two retrieval sets: translations, and paraphrases.

    A line is held out when its pivot (first file) falls in the held-out
    split, by the hash ``paramine train`` splits a dataset's pivots by
    (:mod:`paramine.encoders.evaluation.holdout`), so a model trained on a
    dataset mined from this bitext never saw these pivots. The sets are
    :func:`retrieval_sets`'.
    """
    from paramine.encoders.evaluation.holdout import split_key
    from paramine.schemas.text_keys import hash_fraction

    bitext = read_bitext(paths)
    held = [
        (pivot, candidate)
        for pivot, candidate in zip(bitext.source, bitext.target, strict=True)
        if hash_fraction(split_key(pivot)) < eval_share
    ]
    target = bitext.name.rsplit("-", 1)[-1]
    return retrieval_sets(held, f"held-out {bitext.name}", f"held-out paraphrases {target}")


def retrieval_sets(
    lines: Sequence[tuple[str, str]], translations_name: str, paraphrases_name: str
) -> list[Bitext]:
    """Aligned (pivot, candidate) lines as two retrieval sets: translations, and paraphrases.

    Per distinct pivot (by its split key): the pivot against its first
    candidate (``translations_name``), and, where it has two distinct
    candidates, one against the other (``paraphrases_name``). A text already
    taken by another pivot is not used again: retrieval needs every text
    once. A set of fewer than two pairs is left out, with a warning.
    """
    from paramine.encoders.evaluation.holdout import split_key

    groups: dict[str, list[str]] = {}
    first: dict[str, str] = {}
    for pivot, candidate in lines:
        key = split_key(pivot)
        first.setdefault(key, pivot)
        found = groups.setdefault(key, [])
        if candidate not in found:
            found.append(candidate)
    used: set[str] = set()
    translations: list[tuple[str, str]] = []
    paraphrases: list[tuple[str, str]] = []
    for key, candidates in groups.items():
        pivot = first[key]
        fresh = [c for c in candidates if c not in used]
        if pivot in used or not fresh:
            continue
        used.update((pivot, fresh[0]))
        translations.append((pivot, fresh[0]))
        if len(fresh) >= 2:
            used.add(fresh[1])
            paraphrases.append((fresh[0], fresh[1]))
    found_sets = []
    for name, pairs in ((translations_name, translations), (paraphrases_name, paraphrases)):
        if len(pairs) < 2:
            log.warning("%s: %d pairs in the held-out split; not scored", name, len(pairs))
            continue
        found_sets.append(Bitext(name, [a for a, _ in pairs], [b for _, b in pairs]))
    return found_sets


def read_eval_files(
    config: EvalOptions, eval_share: float
) -> tuple[list[Bitext], list[tuple[str, StsData]]]:
    """Read the files that ``--eval-bitext``, ``--eval-held-out`` and ``--eval-sts`` name.

    ``eval_share``: the held-out share of pivots, which ``--eval-held-out`` follows.
    """
    bitexts = [read_bitext(paths) for paths in config.eval_bitext]
    for paths in config.eval_held_out:
        bitexts += held_out_bitexts(paths, eval_share)
    sts = [(PurePosixPath(path).stem, read_sts_tsv(path)) for path in config.eval_sts]
    return bitexts, sts
