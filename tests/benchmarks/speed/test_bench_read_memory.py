"""benchmarks/speed/bench_read_memory.py at 10,000 and 100,000 lines: every record read, flat."""

from __future__ import annotations

import pytest

from benchmarks.speed import bench_read_memory

pytestmark = pytest.mark.pipeline


def test_both_readers_read_every_line_in_spans_and_their_peak_does_not_grow(capsys):
    assert bench_read_memory.main(["--lines", "10000", "--split-bytes", "262144"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["input", "scale", "lines", "MB", "spans", "s", "peak", "RSS", "MiB"]
    rows = {}
    for line in lines[1:]:
        kind, scale, records, _, spans, _, peak = line.replace("x", " ", 1).split()
        rows[kind, int(scale)] = (int(records.replace(",", "")), int(spans), float(peak))
    assert set(rows) == {("tsv", 1), ("moses", 1), ("tsv", 10), ("moses", 10)}
    for (_, scale), (records, spans, _) in rows.items():
        assert records == 10_000 * scale
        # 256 KiB spans: more than one at 1x (about 0.8 MB), ten times as many at 10x.
        assert spans > 1
    for kind in ("tsv", "moses"):
        small, large = rows[kind, 1], rows[kind, 10]
        assert large[1] >= 8 * small[1]
        # Streaming: 10x the lines (8 MB of text, 100,000 records) adds no memory
        # beyond noise; holding them would add well over 50 MiB.
        assert large[2] < small[2] + 24
