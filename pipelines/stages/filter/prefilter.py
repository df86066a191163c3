"""Prefilter: normalize pairs and drop those not worth encoding.

pairs (Rows) | "NormalizeAndFilter" -------------------------------> kept entries
                        | pending --- "ResolvePending" (side profiles) --^   | "FirstOfDuplicates"
                        | line_checks figures -> "SideProfiles" ---------'         -> entries
                                                                   | "AsPairs" -> records (if asked)

Every aligned pair of the input passes here, so its cost per pair is much of
a run's: at a million subtitle pairs this stage took half of the run's time
before it worked as it does now (docs/results.md). So:

- pairs come in batches, and the language check, the one costly rule,
  judges the new lines of a batch in one pass (``LanguageDetector.judge_many``);
  the reader hands them over as they are read, a thousand to a ``Rows``
  (``core.batches``: Beam's batched DoFns), to this stage's DoFn and to the
  books' counts: between the reader and the judge no step is called per pair;
- a worker remembers the verdicts of the pairs it saw last: subtitles repeat
  "Yes." / "Tak." tens of thousands of times, and a repeat costs a lookup;
  it holds the first of each kept pair of a bundle too, so a repeat is
  dropped there and never reaches the duplicate search's shuffle;
- the duplicate search keys a pair by its texts and keeps the rest of its
  record as one short string (``core.origins``, shards named by number): the
  runner holds one such entry per distinct pair until the search is done;
- the pairs it keeps go on as entries (``Prefiltered``) to the stages that
  read them all again, which make records of the pairs they keep; records
  of them all, with a coder of their own (``core.coders``), only where the
  caller asks (``--write-scored``, ``paramine refresh``).

Each new pair is judged by ``stages.filter.rules.column_judge.ColumnJudge`` (the rules of
``stages.filter.rules.pair_judge.PairJudge`` over the batch's columns). The per-line checks
follow the run's own lines (``stages/filter/rules/line_checks.py``): each
pair adds what its lines are to its sides' figures (their main script, the
languages the detector finds in them by strong evidence), and the few pairs
whose fate depends on what the whole run holds (a line in a script no table
knows its language in; a line the detector leans to a neighbouring language
by weak evidence) wait in ``pending`` until the figures are summed, then are
settled by the same rules. A line that a check cannot judge (a language the
detector does not know, or a script it was not trained on for it; no known
or learned script; no punkt model under the sentence count) is kept, and
counted: ``<check>_unchecked.<language>`` on the ``unchecked`` output, which
the manifest holds as ``counts.unchecked``.

Why it is longer than 400 lines: the stage's transform and the DoFns that
share the held-back pairs' protocol (``FilterFn`` holds a pair back,
``_ResolveFn`` settles it from the side figures, ``settle``) are read together.
``FilterFn``, ``side_decisions`` and ``settle`` are public: bench_floor runs
them in a plain loop (``benchmarks/lib/pair_loop.py``), the floor of this stage.
"""

from __future__ import annotations

import heapq
import zlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import apache_beam as beam
from apache_beam import pvalue
from paramine.pipelines.core.accounting import DROPPED, Dropper, NoteTally
from paramine.pipelines.core.batches import Rows
from paramine.pipelines.core.coders import register_coders
from paramine.pipelines.core.keep_first import KeepFirst
from paramine.pipelines.core.origins import DedupKey, Origins
from paramine.pipelines.core.windows import in_global_window
from paramine.pipelines.formats import Shard
from paramine.pipelines.stages.filter.rules.column_judge import ColumnJudge
from paramine.pipelines.stages.filter.rules.detectors import (
    language_detector,
)
from paramine.pipelines.stages.filter.rules.junk import REASONS
from paramine.pipelines.stages.filter.rules.line_check_record import run_record
from paramine.pipelines.stages.filter.rules.line_checks import (
    DROP,
    SAMPLES,
    Pending,
    Resolved,
    SideDecision,
    decide,
    figure,
    resolve,
    with_earlier,
)
from paramine.pipelines.stages.filter.rules.pair_judge import PrefilterOptions
from paramine.pipelines.stages.filter.rules.verdict import Verdict
from paramine.schemas.records import AlignedPair
from paramine.schemas.run_counts import LINE_CHECKS, UNCHECKED
from paramine.schemas.stages import ALIGNED_PAIR, Stage

#: The prefilter's extra outputs: pairs waiting for the side decisions, and
#: samples of dropped lines.
PENDING = "pending"
SAMPLED = "sampled"

PREFILTER = Stage(
    "Prefilter",
    ALIGNED_PAIR,
    (
        "empty",
        "untranslated",
        "too_short",
        "too_long",
        "length_ratio",
        "sentence_count_mismatch",
        *REASONS,
        "wrong_language_pivot",
        "wrong_language_candidate",
        "duplicate_pair",
    ),
    "normalize text; drop pairs not worth encoding, junk, lines not in their declared "
    "language, and exact duplicates",
)


#: Pairs normalized and checked together: the language check judges the
#: new lines of a batch in one pass. The ``Rows`` the DoFn is handed
#: (``FilterFn.process_batch``) are cut to this.
BATCH_SIZE = 1024
#: Pairs whose verdicts a worker remembers (some 15 MB); then it forgets them
#: all, and the frequent ones come back first.
MEMO_SIZE = 1 << 16
#: Distinct kept pairs a worker holds to meet their repeats before the
#: duplicate search (``FilterFn``); then it sends them on and starts again.
FIRSTS_SIZE = 1 << 16


class _Samples:
    """Dropped lines kept per (side, reason): the ``SAMPLES`` of smallest hash, per bundle."""

    def __init__(self) -> None:
        self._heaps: dict[str, list] = {}

    def add(
        self, sides: Sequence[str], reason: str, shard: str, line: int, pivot: str, candidate: str
    ) -> None:
        """A dropped pair's lines, as read, on the sides it drops."""
        sample = None
        for side in sides:
            heap = self._heaps.setdefault(f"{side}|{reason}", [])
            if sample is None:
                text = f"{pivot}\t{candidate}"
                sample = (zlib.crc32(text.encode("utf-8")), line, shard, pivot, candidate)
            if len(heap) < SAMPLES:
                heapq.heappush(heap, _Reversed(sample))
            elif sample < heap[0].value:
                heapq.heapreplace(heap, _Reversed(sample))

    def flush(self) -> Iterator[pvalue.TaggedOutput]:
        for key, heap in sorted(self._heaps.items()):
            for item in heap:
                yield pvalue.TaggedOutput(SAMPLED, in_global_window((key, item.value)))
        self._heaps.clear()


class _Reversed:
    """A heap item ordered backwards: the heap's top is the largest kept."""

    __slots__ = ("value",)

    def __init__(self, value: tuple) -> None:
        self.value = value

    def __lt__(self, other: _Reversed) -> bool:
        return self.value > other.value


class FilterFn(beam.DoFn):
    """A batch of pairs in; kept pairs out as duplicate-search entries, the pending ones apart.

    Drops are summed per reason; the side figures (``line_checks``), the
    notes of lines a check could not judge and samples of dropped lines go
    out at each bundle's end.

    A kept pair's repeats within a bundle are met here, as the duplicate
    search's combiner would meet them on the worker: the smallest origin of
    each key is held (up to ``FIRSTS_SIZE`` keys, then they all go on), the
    others are dropped as ``duplicate_pair`` at once. On bench_scale's 1M
    input half of the kept pairs were repeats, each encoded, buffered and
    decoded again before the search dropped it. The search still drops the
    repeats of different bundles, so the entry kept (the smallest origin of
    its key) and the drop counts are what they were. A held-back pair is
    not held here: each of its repeats is settled, and counted, on its own.
    """

    def __init__(self, options: PrefilterOptions, origins: Origins) -> None:
        self.options = options
        self.origins = origins
        self.drop = Dropper(PREFILTER)
        self.unchecked = NoteTally(UNCHECKED)
        self.figures = NoteTally(LINE_CHECKS)
        self.samples = _Samples()
        self.judge: ColumnJudge | None = None
        #: The bundle's figures, as each verdict's tuple of them and its count.
        self._figure_sets: dict[tuple[str, ...], int] = {}
        self._memo: dict[tuple[str, str, str, str], Verdict] = {}
        #: The bundle's kept pairs not yet sent on: the smallest origin of each key.
        self._firsts: dict[DedupKey, str] = {}

    def setup(self) -> None:
        self._memo = {}
        detector = None
        if self.options.language_ratio is not None:
            # One detector per worker, its answers cached per distinct line.
            detector = language_detector(self.options.language_id, self.options.language_ratio)
        self.judge = ColumnJudge(self.options, detector)

    def start_bundle(self) -> None:
        self.samples = _Samples()
        self._figure_sets = {}
        self._firsts = {}

    @beam.DoFn.yields_elements
    def process_batch(self, pairs: Rows) -> Iterator:
        for start in range(0, len(pairs), BATCH_SIZE):
            yield from self._filter(pairs[start : start + BATCH_SIZE])

    def get_input_batch_type(self, input_element_type: Any) -> Any:
        # The reader's Rows as it yields them; a caller's pairs gathered into
        # Rows by the runner (up to 4,096): no call per pair, no BatchElements.
        return Rows

    def _filter(self, batch: list[AlignedPair]) -> Iterator:
        drops: dict[str, int] = {}
        value = self.origins.value
        firsts = self._firsts
        repeats = 0
        # Counted as the verdicts' tuples, summed by name at the bundle's end:
        # most pairs leave one of a few tuples.
        figures = self._figure_sets
        for pair, verdict in zip(batch, self._verdicts(batch), strict=True):
            figures[verdict.figures] = figures.get(verdict.figures, 0) + 1
            if verdict.reason:
                drops[verdict.reason] = drops.get(verdict.reason, 0) + 1
                self.samples.add(
                    verdict.sides, verdict.reason, pair.shard, pair.line, pair.pivot, pair.candidate
                )
                continue
            pivot, candidate, pivot_lang = verdict.kept  # type: ignore[misc]
            key: DedupKey = (pivot, candidate, pair.lang, pivot_lang)
            origin = value(pair.shard, pair.line, pair.pivot_lang, pair.corpus)
            if verdict.pending is not None:
                row = (key, origin, pair.pivot, pair.candidate, verdict.pending.row())
                yield pvalue.TaggedOutput(PENDING, row)
                continue
            for note in verdict.notes:
                self.unchecked.add(note)
            first = firsts.get(key)
            if first is None:
                firsts[key] = origin
            else:
                repeats += 1
                if origin < first:
                    firsts[key] = origin
        if repeats:
            drops["duplicate_pair"] = repeats
        for reason, n in drops.items():
            yield self.drop(reason, n)
        if len(firsts) >= FIRSTS_SIZE:
            yield from firsts.items()
            firsts.clear()

    def finish_bundle(self) -> Iterator:
        for entry in self._firsts.items():
            yield in_global_window(entry)
        self._firsts.clear()
        for names, n in self._figure_sets.items():
            for name in names:
                self.figures.add(name, n)
        self._figure_sets.clear()
        yield from self.unchecked.flush(UNCHECKED)
        yield from self.figures.flush(LINE_CHECKS)
        yield from self.samples.flush()

    def _verdicts(self, batch: list[AlignedPair]) -> list[Verdict]:
        """Each pair's verdict: remembered, or judged with the batch's other new pairs."""
        memo = self._memo
        keys = [(p.pivot, p.candidate, p.pivot_lang, p.lang) for p in batch]
        found = [memo.get(key) for key in keys]
        new = list(dict.fromkeys(key for key, f in zip(keys, found, strict=True) if f is None))
        if not new:
            return found  # type: ignore[return-value]
        assert self.judge is not None
        judged = dict(zip(new, self.judge.judge(new), strict=True))
        if len(memo) + len(judged) > MEMO_SIZE:
            memo.clear()
        memo.update(judged)
        return [judged[key] if f is None else f for key, f in zip(keys, found, strict=True)]


def side_decisions(
    figures: Mapping[str, int], options: PrefilterOptions, earlier: Mapping[str, int]
) -> dict[str, SideDecision]:
    """Each side's decisions from the ``line_checks`` figures of the run (and of earlier runs)."""
    return decide(with_earlier(figures, earlier), dict(options.declared_scripts))


def settle(
    row: tuple, decisions: Mapping[str, SideDecision], options: PrefilterOptions
) -> Resolved:
    """A held-back pair (a ``PENDING`` row of ``FilterFn``) settled with the sides' decisions."""
    key, _, _, _, needs = row
    return resolve(Pending.from_row(key[:2], needs), decisions, options.limits.min_script_share)


class _ResolveFn(beam.DoFn):
    """The pending pairs settled with the run's side decisions; kept ones out as entries."""

    def __init__(
        self, options: PrefilterOptions, origins: Origins, earlier: Mapping[str, int]
    ) -> None:
        self.options = options
        self.origins = origins
        self.earlier = dict(earlier)
        self.drop = Dropper(PREFILTER)
        self.unchecked = NoteTally(UNCHECKED)
        self.figures = NoteTally(LINE_CHECKS)
        self.samples = _Samples()
        self._decisions: tuple[int, dict] | None = None

    def start_bundle(self) -> None:
        self.samples = _Samples()

    def process(self, element: tuple, profile: dict[str, int]) -> Iterator:
        key, origin, pivot, candidate, _ = element
        if self._decisions is None or self._decisions[0] != id(profile):
            decisions = side_decisions(profile, self.options, self.earlier)
            self._decisions = (id(profile), decisions)
        resolved = settle(element, self._decisions[1], self.options)
        if resolved.reason:
            for side in resolved.sides:
                self.figures.add(figure(side, DROP, resolved.reason))
            where = self.origins.pair(key, origin)
            self.samples.add(
                resolved.sides, resolved.reason, where.shard, where.line, pivot, candidate
            )
            yield self.drop(resolved.reason)
            return
        for note in resolved.notes:
            self.unchecked.add(note)
        yield key, origin

    def finish_bundle(self) -> Iterator:
        yield from self.unchecked.flush(UNCHECKED)
        yield from self.figures.flush(LINE_CHECKS)
        yield from self.samples.flush()


class Prefiltered(NamedTuple):
    """The prefilter's kept pairs, as entries and (where asked for) as records, and its drops.

    ``entries`` are the kept pairs as the duplicate search keeps them
    (``core.origins``), read with ``Prefilter.origins``: the stages that
    read every prefiltered pair take these (``GroupByPivot``,
    ``RivalPairs``, ``CalibrationSample``) and make records only of the
    pairs they keep. ``kept`` holds the same pairs as records, made for
    every pair, or ``None`` where the prefilter was not asked for them.
    """

    kept: beam.PCollection | None
    dropped: beam.PCollection
    entries: beam.PCollection
    #: ``(note, key, n)`` count rows: kept lines a check could not judge
    #: (``unchecked``), and the sides' figures (``line_checks``).
    notes: beam.PCollection
    #: One dict: each side's decisions, drops by check and flags
    #: (``stages.filter.rules.line_check_record.run_record``), for the manifest.
    sides: beam.PCollection


class Prefilter(beam.PTransform):
    """Normalizes text, drops bad pairs by reason, then exact duplicate pairs.

    Args:
        options: The limits and rules.
        shards: The shards the pairs are read from, when known as the graph
            is built: the duplicate search then names them by number
            (``Origins``). The pairs kept are the same either way.
        records: Make a record of every kept pair (``Prefiltered.kept``);
            ``paramine mine`` asks only with ``--write-scored``, which scores
            them all: at a million subtitle pairs, 437,701 records that
            nothing else reads took 1.2-1.8 s.
        earlier: The ``line_checks`` figures of the lines earlier runs read,
            counted with this run's where the sides are decided: a refresh's
            table (``line_checks.with_earlier``).
    """

    def __init__(
        self,
        options: PrefilterOptions | None = None,
        shards: Sequence[Shard] = (),
        records: bool = True,
        earlier: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__()
        self.options = options or PrefilterOptions()
        self.origins = Origins((s.url for s in shards), (s.corpus for s in shards))
        # A shard is named by its first file; a Moses pair's candidate lines
        # are in the other one, which a dropped candidate line's sample names.
        self.candidate_files = {s.url: s.companion for s in shards if s.companion}
        self.records = records
        self.earlier = dict(earlier or {})

    def expand(self, pairs: beam.PCollection) -> Prefiltered:
        register_coders()
        filtered = pairs | "NormalizeAndFilter" >> beam.ParDo(
            FilterFn(self.options, self.origins)
        ).with_outputs(DROPPED, UNCHECKED, LINE_CHECKS, PENDING, SAMPLED, main="kept")
        # The sides' figures as every pair left them, summed: what the pending
        # pairs are settled by (a side input: complete before any is settled).
        profile = filtered[LINE_CHECKS] | "SideProfiles" >> _SumFigures()
        resolved = filtered[PENDING] | "ResolvePending" >> beam.ParDo(
            _ResolveFn(self.options, self.origins, self.earlier), beam.pvalue.AsDict(profile)
        ).with_outputs(DROPPED, UNCHECKED, LINE_CHECKS, SAMPLED, main="kept")
        kept = (filtered["kept"], resolved["kept"]) | "AllKept" >> beam.Flatten()
        # The first occurrence in the input (shard, line) stands for all.
        deduped = kept | "FirstOfDuplicates" >> KeepFirst(
            PREFILTER, "duplicate_pair", keep_key=True
        )
        records = None
        if self.records:
            records = deduped.kept | "AsPairs" >> beam.MapTuple(
                self.origins.pair
            ).with_output_types(AlignedPair)
        dropped = (
            filtered[DROPPED],
            resolved[DROPPED],
            deduped.dropped,
        ) | "AllDropped" >> beam.Flatten()
        figures = (filtered[LINE_CHECKS], resolved[LINE_CHECKS]) | "AllFigures" >> beam.Flatten()
        notes = (filtered[UNCHECKED], resolved[UNCHECKED], figures) | "Notes" >> beam.Flatten()
        samples = (
            (filtered[SAMPLED], resolved[SAMPLED])
            | "AllSamples" >> beam.Flatten()
            | "FewestPerSide" >> beam.combiners.Top.SmallestPerKey(SAMPLES)
        )
        declared = self.options.declared_scripts
        sides = (
            pairs.pipeline
            | "SidesOnce" >> beam.Create([None])
            | "SideRecord"
            >> beam.Map(
                _side_record,
                declared,
                self.earlier,
                self.candidate_files,
                beam.pvalue.AsDict(figures | "SumAll" >> _SumFigures()),
                beam.pvalue.AsList(samples),
            )
        )
        return Prefiltered(records, dropped, deduped.kept, notes, sides)


class _SumFigures(beam.PTransform):
    """``(note, key, n)`` rows summed per key: ``(key, n)``."""

    def expand(self, rows: beam.PCollection) -> beam.PCollection:
        return (
            rows
            | "ByKey" >> beam.Map(lambda row: (row[1], row[2]))
            | "Sum" >> beam.CombinePerKey(sum)
        )


def _side_record(
    _: None,
    declared: tuple[tuple[str, frozenset[str]], ...],
    earlier: dict[str, int],
    candidate_files: dict[str, str],
    figures: dict[str, int],
    samples: list[tuple[str, list[tuple]]],
) -> dict[str, Any]:
    """The manifest's record of the sides (``stages.filter.rules.line_check_record.run_record``).

    Each sample names its shard and the file that holds the dropped line
    (``file``): a Moses pair's candidate file for a candidate line.
    """
    kept = []
    for key, found in samples:
        candidate_side = key.startswith("candidate:")
        for h, line, shard, pivot, candidate in found:
            where = candidate_files.get(shard, shard) if candidate_side else shard
            sample = {
                "hash": h,
                "line": line,
                "shard": shard,
                "file": where,
                "pivot": pivot,
                "candidate": candidate,
            }
            kept.append((key, sample))
    return run_record(figures, dict(declared), kept, earlier)
