"""KeepFirst: the first of equal records kept, the others dropped and counted as duplicates.

"First" is the smallest by a key the caller gives (an origin, a line number),
so the record kept does not depend on the order a runner delivers them in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import apache_beam as beam
from apache_beam import pvalue
from paramine.pipelines.core.accounting import DROPPED, DropTally, StageResult
from paramine.schemas.stages import Stage


class _FirstAndCount(beam.CombineFn):
    """The first element by ``order`` (by its own order without one), and how many there were.

    The accumulator is the element itself while one has been seen, and
    ``[first, n]`` once there are more: the runner holds an accumulator per
    distinct key until the search ends (4.3M of them for the prefilter's
    duplicate search at 10M subtitle pairs, most seen once), and a
    ``(first, 1)`` tuple for each cost 64 bytes more. So elements are never
    lists, and never None (the empty accumulator).
    """

    def __init__(self, order: Callable[[Any], Any] | None) -> None:
        self.order = order

    def create_accumulator(self) -> Any:
        return None

    def _first(self, a: Any, b: Any) -> Any:
        if self.order is None:
            return a if a <= b else b
        return a if self.order(a) <= self.order(b) else b

    def add_input(self, acc: Any, element: Any) -> Any:
        if element is None or type(element) is list:
            raise TypeError(f"KeepFirst takes no lists and no None, got {element!r}")
        if acc is None:
            return element
        if type(acc) is list:
            acc[0] = self._first(acc[0], element)
            acc[1] += 1
            return acc
        return [self._first(acc, element), 2]

    def merge_accumulators(self, accs: Iterable[Any]) -> Any:
        first, total = None, 0
        for acc in accs:
            if acc is None:
                continue
            other, n = self.extract_output(acc)
            first = other if first is None else self._first(first, other)
            total += n
        return first if total <= 1 else [first, total]

    def extract_output(self, acc: Any) -> tuple[Any, int]:
        if acc is None:
            return None, 0
        if type(acc) is list:
            return acc[0], acc[1]
        return acc, 1


def first_of_each(
    keyed: Iterable[tuple[Any, Any]], order: Callable[[Any], Any] | None = None
) -> dict[Any, Any]:
    """KeepFirst's decision without a runner: each key's first element by ``order``.

    The same combine as the stage's, in one process (a benchmark's plain
    loop, which must keep what the pipeline keeps).
    """
    combine = _FirstAndCount(order)
    held: dict[Any, Any] = {}
    for key, element in keyed:
        held[key] = combine.add_input(held.get(key), element)
    return {key: combine.extract_output(acc)[0] for key, acc in held.items()}


class _EmitFirst(beam.DoFn):
    def __init__(self, stage: Stage, reason: str, keep_key: bool) -> None:
        stage.check_reason(reason)
        self.reason = reason
        self.keep_key = keep_key
        self.tally = DropTally(stage)

    def process(self, keyed: tuple[Any, tuple[Any, int]]) -> Iterator:
        key, (first, n) = keyed
        yield (key, first) if self.keep_key else first
        if n > 1:
            self.tally.add(self.reason, n - 1)

    def finish_bundle(self) -> Iterator[pvalue.TaggedOutput]:
        yield from self.tally.flush()


class KeepFirst(beam.PTransform):
    """Keeps one element per key, the first by ``order``; drops the rest as ``reason``.

    A combiner rather than a GroupByKey: duplicates collapse on each worker
    before the shuffle, and a record repeated 100,000 times ("Yes." /
    "Tak.") never sits in memory as a list. The kept element does not depend
    on the order elements arrive in.

    Applied to ``(key, element)`` pairs, the elements neither lists nor
    None; returns a ``StageResult`` whose kept elements are the first of each
    key, or ``(key, first)`` with ``keep_key`` (a caller that keys by most of
    a record need not carry it twice).

    Args:
        stage: The stage the drops are counted under.
        reason: The drop reason of the other elements of a key.
        order: Sort key of elements; the smallest is kept. ``None``: the
            elements' own order (tuples, compared field by field).
        keep_key: Emit ``(key, first)`` rather than ``first``.
    """

    def __init__(
        self,
        stage: Stage,
        reason: str,
        order: Callable[[Any], Any] | None = None,
        keep_key: bool = False,
    ) -> None:
        super().__init__()
        self.stage = stage
        self.reason = reason
        self.order = order
        self.keep_key = keep_key

    def expand(self, keyed: beam.PCollection) -> StageResult:
        results = (
            keyed
            | "FirstAndCount" >> beam.CombinePerKey(_FirstAndCount(self.order))
            | "EmitFirst"
            >> beam.ParDo(_EmitFirst(self.stage, self.reason, self.keep_key)).with_outputs(
                DROPPED, main="kept"
            )
        )
        return StageResult(results["kept"], results[DROPPED])
