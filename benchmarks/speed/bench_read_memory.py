"""Peak memory of reading bitext at 1x and 10x the size: it must not grow.

Generates a TSV file and a Moses pair of ``--lines`` lines (and 10 times
that), then reads each the way ReadBitext does (split into spans, every span
read to the end) in a fresh process, and prints the process's peak resident
memory. Readers stream: the peak is the interpreter plus one block and one
record, whatever the file size.

    python -m benchmarks.speed.bench_read_memory --lines 2000000

Results on the 2-core development machine are in docs/formats.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.lib.paths import ROOT

ROW_PIVOT = "The quick brown fox number {i} jumps over the lazy dog near the river bank."
ROW_CANDIDATE = "Szybki brązowy lis numer {i} przeskakuje nad leniwym psem przy brzegu rzeki."


def generate(folder: Path, lines: int) -> tuple[Path, Path]:
    """Write ``bench.tsv`` and ``bench.en``/``bench.pl`` with ``lines`` lines each."""
    tsv, en, pl = folder / "bench.tsv", folder / "bench.en", folder / "bench.pl"
    with tsv.open("w", encoding="utf-8") as t, en.open("w") as e, pl.open("w") as p:
        step = 10_000
        for start in range(0, lines, step):
            rng = range(start, min(start + step, lines))
            pivots = [ROW_PIVOT.format(i=i) for i in rng]
            candidates = [ROW_CANDIDATE.format(i=i) for i in rng]
            t.write("".join(f"{a}\t{b}\n" for a, b in zip(pivots, candidates, strict=True)))
            e.write("".join(a + "\n" for a in pivots))
            p.write("".join(b + "\n" for b in candidates))
    return tsv, en


def measure(url: str, split_bytes: int) -> dict:
    """Read one input in this process; return counts, time and peak memory."""
    from paramine.pipelines.formats import ReaderOptions, read_shard, resolve_inputs, split_shard

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    options = ReaderOptions(split_bytes=split_bytes)
    start = time.perf_counter()
    records = spans = 0
    for shard in resolve_inputs([url], "en", "pl"):
        for span in split_shard(shard, options):
            spans += 1
            for _ in read_shard(span, options):
                records += 1
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "records": records,
        "spans": spans,
        "seconds": round(seconds, 1),
        "peak_rss_mib": round(peak / 1024, 1),
        "rss_after_imports_mib": round(before / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Generate the inputs at 1x and 10x, measure each in a fresh process, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2_000_000, help="lines at 1x")
    parser.add_argument("--scales", default="1,10", help="multiples of --lines to measure")
    parser.add_argument("--split-bytes", type=int, default=64 * 1024 * 1024)
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # internal: one measurement
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure, args.split_bytes)))
        return 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the child finds benchmarks from any folder
    print(f"{'input':<8}{'scale':>6}{'lines':>12}{'MB':>8}{'spans':>7}{'s':>8}{'peak RSS MiB':>14}")
    for scale in (int(s) for s in args.scales.split(",")):
        lines = args.lines * scale
        with tempfile.TemporaryDirectory(prefix="paramine-bench-") as tmp:
            tsv, moses = generate(Path(tmp), lines)
            for kind, path in (("tsv", tsv), ("moses", moses)):
                result = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "benchmarks.speed.bench_read_memory",
                        "--measure",
                        str(path),
                        "--split-bytes",
                        str(args.split_bytes),
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                    env=env,
                )
                r = json.loads(result.stdout.strip().splitlines()[-1])
                size = path.stat().st_size / 1e6
                print(
                    f"{kind:<8}{scale:>5}x{r['records']:>12,}{size:>8.0f}{r['spans']:>7}"
                    f"{r['seconds']:>8}{r['peak_rss_mib']:>14}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
