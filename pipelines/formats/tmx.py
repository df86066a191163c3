"""TMX 1.4 translation memories, streamed: one translation unit at a time.

A TMX file from OPUS holds millions of ``<tu>``; the whole tree would not fit
in a worker's memory. The reader parses incrementally and throws each unit
away once it is read, so memory stays that of one unit.
"""

from __future__ import annotations

from collections.abc import Iterator
from xml.etree.ElementTree import Element

from paramine.pipelines.core.text import canonical_lang
from paramine.pipelines.files.opening import open_input
from paramine.pipelines.files.xml_safety import (
    XML_NS,
    XML_READ_ERRORS,
    TruncatedXmlError,
    element_text,
    iter_events,
    local_name,
    reject_reason,
)
from paramine.pipelines.formats.base import (
    ReaderOptions,
    ReadResult,
    Shard,
    aligned,
    register_format,
    reject,
)
from paramine.pipelines.formats.scores import MISSING_SCORE, score_reason

#: Inline elements that hold native codes (formatting of the source
#: application), not text: their content is dropped, their tail kept.
CODE_ELEMENTS = frozenset({"bpt", "ept", "ph", "it", "ut"})


def primary_lang(tag: str) -> str:
    """The canonical code of a language tag's primary subtag (``en-GB`` -> ``en``)."""
    return canonical_lang(tag.replace("_", "-").split("-", 1)[0])


def _tuvs(tu: Element) -> list[tuple[str, str]]:
    """``(language, text)`` of each ``tuv`` of a unit; TMX 1.1 spelled ``lang``."""
    found = []
    for tuv in tu:
        if local_name(tuv.tag) != "tuv":
            continue
        lang = tuv.get(XML_NS + "lang") or tuv.get("lang") or ""
        seg = next((c for c in tuv if local_name(c.tag) == "seg"), None)
        text = "" if seg is None else element_text(seg, CODE_ELEMENTS)
        found.append((primary_lang(lang), text.strip()))
    return found


def _score_reason(tu: Element, prop_type: str, minimum: float) -> str:
    """The reason a unit's ``<prop type=prop_type>`` score rejects it; ``""`` to keep it."""
    for child in tu:
        if local_name(child.tag) == "prop" and child.get("type") == prop_type:
            return score_reason((child.text or "").strip(), minimum, "score")
    return MISSING_SCORE


class TmxFormat:
    """TMX: each ``tu`` gives one pair per candidate-language ``tuv``.

    The pivot is the unit's first ``tuv`` in the pivot language. A unit with
    several ``tuv`` in the candidate language (variants) gives one pair for
    each; a unit without both languages is rejected as ``missing_language``.
    A file that breaks off keeps every unit before the damage and is
    rejected once there as ``truncated_input``. The locator is the unit's
    number in the file. With ``ReaderOptions.score_property`` a unit's
    ``<prop type="...">`` is its score, which ``min_score`` applies to
    (formats/scores.py).
    """

    name = "tmx"
    splittable = False

    def read(self, shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
        """Yield the pairs and rejections of a TMX file."""
        pivot_lang, lang = canonical_lang(shard.pivot_lang), canonical_lang(shard.lang)
        number = 0
        try:
            with open_input(shard.url) as opened:
                parent: Element | None = None
                for event, element in iter_events(opened.stream, shard.url):
                    name = local_name(element.tag)
                    if event == "start":
                        if name == "body":
                            parent = element
                        continue
                    if name != "tu":
                        continue
                    number += 1
                    yield from self._unit(shard, options, number, element, pivot_lang, lang)
                    # Forget the unit: memory stays that of one unit.
                    element.clear()
                    if parent is not None:
                        parent.clear()
        except TruncatedXmlError as damage:
            # Every unit before the damage was yielded: the damage is one record.
            yield reject(shard, number + 1, str(damage), damage.reason)
        except XML_READ_ERRORS as error:
            if options.on_malformed_xml == "error":
                raise
            yield reject(shard, number + 1, str(error), reject_reason(error))

    @staticmethod
    def _unit(
        shard: Shard,
        options: ReaderOptions,
        number: int,
        tu: Element,
        pivot_lang: str,
        lang: str,
    ) -> Iterator[ReadResult]:
        tuvs = _tuvs(tu)
        pivots = [text for code, text in tuvs if code == pivot_lang]
        candidates = [text for code, text in tuvs if code == lang]
        record = "\t".join(f"{code}:{text}" for code, text in tuvs)
        if not pivots or not candidates:
            yield reject(shard, number, record, "missing_language")
            return
        if max(len(t) for t in (pivots[0], *candidates)) > options.max_line_chars:
            yield reject(shard, number, record, "line_too_long")
            return
        if options.score_property is not None:
            reason = _score_reason(tu, options.score_property, options.min_score or 0.0)
            if reason:
                yield reject(shard, number, record, reason)
                return
        for candidate in candidates:
            yield aligned(shard, number, pivots[0], candidate)


register_format(TmxFormat())
