"""Tab-separated bitext: 2 columns, or Tatoeba's 4 (srclang, trglang, src, trg)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from pipelines.formats.base import (
    ReaderOptions,
    ReadResult,
    Shard,
    aligned,
    iter_lines,
    open_binary,
    register_format,
    reject,
)
from pipelines.text import canonical_lang


class TsvFormat:
    """Plain 2-column TSV (pivot, candidate) and the 4-column Tatoeba layout.

    In the 4-column layout each line names its languages, so a file may hold
    either direction: lines in the other direction are swapped, and lines in
    languages other than the run's are rejected as ``language_mismatch``.
    """

    name = "tsv"

    def read(self, shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
        """Yield the pairs and rejections of a TSV shard."""
        wanted = (canonical_lang(shard.pivot_lang), canonical_lang(shard.lang))
        with open_binary(shard.url) as stream:
            for line in iter_lines(stream, options):
                if line.reason:
                    yield reject(shard, line.number, line.text, line.reason)
                    continue
                if not line.text.strip():
                    yield reject(shard, line.number, line.text, "blank_line")
                    continue
                columns = line.text.split("\t")
                if len(columns) == 2:
                    yield aligned(shard, line.number, columns[0], columns[1])
                elif len(columns) == 4:
                    langs = (canonical_lang(columns[0]), canonical_lang(columns[1]))
                    if langs == wanted:
                        yield aligned(replace(shard, swap=False), line.number, *columns[2:])
                    elif langs == wanted[::-1]:
                        yield aligned(replace(shard, swap=True), line.number, *columns[2:])
                    else:
                        yield reject(shard, line.number, line.text, "language_mismatch")
                else:
                    yield reject(shard, line.number, line.text, "column_count")


register_format(TsvFormat())
