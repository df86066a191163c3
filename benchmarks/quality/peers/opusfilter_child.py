"""Run inside the peers' environment: OpusFilter's filters one at a time, timed, with drops named.

``opusfilter CONFIG`` runs its filters as a lazy chain, pair by pair, so its
log says nothing of where the time goes. This script takes the ``filter``
step of the same configuration, reads that step's input (the normalized,
deduplicated files the steps before it wrote), and applies the filters in
the configuration's order, each to the pairs the ones before it accepted:
the same pairs reach each filter as in the chain. It writes, as JSON, each
filter's pairs in, pairs accepted and CPU seconds (``time.process_time``),
and, as TSV, every rejected pair with the filter that rejected it.

Only OpusFilter and the standard library are imported: paramine is not
installed here.

    python opusfilter_child.py CONFIG.json OUT.json DROPPED.tsv
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    """Profile the configuration's filter step; see the module's docstring."""
    from opusfilter.pipeline import FilterPipeline

    config_path, out_path, dropped_path = (Path(a) for a in argv)
    config = json.loads(config_path.read_text())
    workdir = Path(config["common"]["output_directory"])
    step = next(s for s in config["steps"] if s["type"] == "filter")["parameters"]
    sources = [workdir / name for name in step["inputs"]]
    specs = step["filters"]
    start = time.process_time()
    pipeline = FilterPipeline.from_config(json.loads(json.dumps(specs)), workdir=str(workdir))
    build_seconds = time.process_time() - start
    readers = [path.open(encoding="utf-8") for path in sources]
    pairs = [tuple(line.rstrip("\n") for line in lines) for lines in zip(*readers, strict=True)]
    for reader in readers:
        reader.close()
    rows = []
    with dropped_path.open("w", encoding="utf-8") as dropped:
        for spec, filt in zip(specs, pipeline.filters, strict=True):
            name = next(iter(spec))
            start = time.process_time()
            decisions = list(filt.decisions(pairs))
            seconds = time.process_time() - start
            kept = [pair for pair, ok in zip(pairs, decisions, strict=True) if ok]
            for pair, ok in zip(pairs, decisions, strict=True):
                if not ok:
                    dropped.write(name + "\t" + "\t".join(pair) + "\n")
            rows.append({"filter": name, "in": len(pairs), "kept": len(kept), "cpu_s": seconds})
            pairs = kept
    result = {"build_cpu_s": build_seconds, "filters": rows, "kept": len(pairs)}
    out_path.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
