"""The prefiltered pairs as the duplicate search keeps them: compact entries.

An entry is ``(key, origin)``: the key is the pair's normalized texts and
languages (``DedupKey``), the origin one short string that says where the
pair was found (``Origins``). The runner holds one entry per distinct pair
(4.3M in a 10M-pair run), and the stages that read every prefiltered pair
again (``GroupByPivot``, ``RivalPairs``) read entries: 94 bytes encoded
against 124 for the pair's record on bench_scale's input. A stage makes the
record (``Origins.record``) only of the pairs it keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from paramine.pipelines.core.groups import pivot_language
from paramine.schemas.records import AlignedPair

#: A pair's key for the duplicate search: (pivot, candidate, lang, the
#: pivot's language part; one text in two languages is two pivots).
DedupKey = tuple[str, str, str, str]

#: A prefiltered pair as the duplicate search keeps it.
Entry = tuple[DedupKey, str]

#: A pair's pivot, candidate and pivot language, as the grouping stages read them.
PairTexts = tuple[str, str, str]


def ordinal(n: int) -> str:
    """A count >= 0 as ASCII that sorts as the number does: its digit count, then its digits."""
    digits = str(n)
    return chr(ord("A") + len(digits)) + digits


def _read_ordinal(text: str, at: int) -> tuple[int, int]:
    """The number written by ``ordinal`` at ``text[at:]``, and where it ends."""
    end = at + 1 + ord(text[at]) - ord("A")
    return int(text[at + 1 : end]), end


#: Marks a shard or corpus the run's table does not hold, written in full.
_UNLISTED = "\x7f"


class Origins:
    """Where a kept pair came from, as the duplicate search's compact value.

    The search keeps the smallest value of a key: one string that sorts as
    (shard, line, pivot language, corpus) do, with the shard and corpus
    named by their rank among the run's shards and corpora, about 15
    characters where the shard's URL alone is often 60.

    A shard or corpus not in the table (a bitext PCollection mined without
    its shard list) is written in full after ``_UNLISTED``, so it sorts
    after every listed one, and among its peers by name; a URL holds no NUL.

    Args:
        urls: The run's shard URLs (spans of one file share it).
        corpora: The run's corpus names.
    """

    def __init__(self, urls: Iterable[str] = (), corpora: Iterable[str] = ()) -> None:
        self.urls = sorted(set(urls))
        self.corpora = sorted(set(corpora))
        self._url_codes = {url: ordinal(i) for i, url in enumerate(self.urls)}
        self._corpus_codes = {corpus: ordinal(i) for i, corpus in enumerate(self.corpora)}

    def value(self, shard: str, line: int, pivot_lang: str, corpus: str) -> str:
        """The origin of a pair found at ``line`` of ``shard``."""
        url = self._url_codes.get(shard) or f"{_UNLISTED}{shard}\x00"
        name = self._corpus_codes.get(corpus) or f"{_UNLISTED}{corpus}"
        return f"{url}{ordinal(line)}{pivot_lang}\x00{name}"

    def pair(self, key: DedupKey, value: str) -> AlignedPair:
        """The record of a pair from its key and origin."""
        pivot, candidate, lang, _ = key
        if value[0] == _UNLISTED:
            end = value.index("\x00")
            shard, at = value[1:end], end + 1
        else:
            rank, at = _read_ordinal(value, 0)
            shard = self.urls[rank]
        line, at = _read_ordinal(value, at)
        pivot_lang, _, name = value[at:].partition("\x00")
        corpus = name[1:] if name[0] == _UNLISTED else self.corpora[_read_ordinal(name, 0)[0]]
        return AlignedPair(pivot, candidate, pivot_lang, lang, corpus, shard, line)

    def record(self, entry: Entry) -> AlignedPair:
        """``pair`` of an entry."""
        return self.pair(*entry)

    def entry(self, pair: AlignedPair) -> Entry:
        """The entry of a normalized pair's record: ``record``'s inverse."""
        key = (pair.pivot, pair.candidate, pair.lang, pivot_language(pair.pivot_lang))
        return key, self.value(pair.shard, pair.line, pair.pivot_lang, pair.corpus)


def entry_texts(entry: Entry) -> PairTexts:
    """An entry's pivot, candidate and pivot language part."""
    (pivot, candidate, _, pivot_lang), _ = entry
    return pivot, candidate, pivot_lang


def record_texts(pair: AlignedPair) -> PairTexts:
    """A record's pivot, candidate and pivot language."""
    return pair.pivot, pair.candidate, pair.pivot_lang


def _same(pair: AlignedPair) -> AlignedPair:
    return pair


def pair_reader(
    origins: Origins | None,
) -> tuple[Callable[[Any], PairTexts], Callable[[Any], AlignedPair]]:
    """How a stage reads its input pairs: records (``None``), or entries written with ``origins``.

    The texts' reader and the record's maker. The pivot language an entry
    gives is its language part (``pivot_language``), all that grouping
    by pivot or candidate reads of it.
    """
    if origins is None:
        return record_texts, _same
    return entry_texts, origins.record
