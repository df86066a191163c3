"""A file that resolution could not pair: one rejection that names it, so the run goes on.

An input folder of Moses pairs with one stray ``x.en`` (its ``x.pl`` missing
or misnamed) must not stop a run over thousands of good pairs, nor vanish
from the books: resolution makes the stray file a shard of this format, and
reading it gives one ``unpaired_file`` rejection whose record says why.
"""

from __future__ import annotations

from collections.abc import Iterator

from paramine.pipelines.formats.base import (
    ReaderOptions,
    ReadResult,
    Shard,
    register_format,
    reject,
)

#: The format name resolution gives a stray file; never chosen by a user.
UNPAIRED = "unpaired"


class UnpairedFormat:
    """Reads nothing from the file: the shard stands for the skipped file."""

    name = UNPAIRED
    splittable = False
    #: Not a ``--format`` a user may name.
    selectable = False

    def read(self, shard: Shard, options: ReaderOptions) -> Iterator[ReadResult]:
        """Yield the one rejection of a file that has no partner."""
        yield reject(shard, 1, shard.note, "unpaired_file")


register_format(UnpairedFormat())
