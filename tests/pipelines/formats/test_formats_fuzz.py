"""Fuzzing every reader at once: a mine over fuzzed TSV and TMX files balances its books.

Each reader's own fuzzing is beside its module (test_tsv.py, test_tmx.py).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paramine.pipelines.files.opening import MAGIC
from paramine.pipelines.run.mine import run

from tests.pipelines.formats.helpers import BYTES, expected_lines, write


@pytest.mark.pipeline
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(files=st.lists(BYTES, min_size=4, max_size=4))
def test_pipeline_over_fuzzed_files_balances_its_books(
    files: list[bytes], tiny_model_dir: Path
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "in"
        folder.mkdir()
        # One sound file keeps the later stages fed; the rest are fuzz.
        write(folder, "sound.tsv", "Good morning.\tDzień dobry.\nHello.\tCześć.\n".encode())
        for i, data in enumerate(files):
            write(folder, f"fuzz{i}.tsv", data)
            write(folder, f"fuzz{i}.tmx", data)
        out = Path(tmp) / "out"
        manifest = run(
            [
                str(folder),
                *("--model", str(tiny_model_dir), "--output", str(out), "--threshold", "0.0"),
                *("--on-malformed-xml", "reject", "--split-bytes", "50"),
            ]
        )
        assert manifest.accounting_errors() == []
        read = manifest.counts["ReadBitext"]
        rejects = pq.read_table(out / "rejects").num_rows
        assert rejects == sum(read["dropped"].values())
        plain = [d for d in files if not d.startswith(tuple(m for m, _ in MAGIC))]
        tsv_records = sum(expected_lines(d) for d in plain)
        assert read["in"] >= 2 + tsv_records
