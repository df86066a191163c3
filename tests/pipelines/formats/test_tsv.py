"""Tests of pipelines/formats/tsv.py: chosen columns; every line of any bytes accounted for."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paramine.pipelines.files.opening import MAGIC
from paramine.pipelines.formats import ReaderOptions, Shard

from tests.pipelines.formats.helpers import BYTES, expected_lines, read_all, read_inputs, write


class TestTsvColumns:
    def test_chosen_columns(self, tmp_path: Path) -> None:
        path = tmp_path / "scored.tsv"
        path.write_text("0.9\tid1\tHello.\tCześć.\n0.1\tid2\tshort\n", encoding="utf-8")
        pairs, rejected, _ = read_inputs([str(path)], tsv_columns=(3, 4))
        assert [(p.pivot, p.candidate) for p in pairs] == [("Hello.", "Cześć.")]
        assert [(r.reason, r.line) for r in rejected] == [("column_count", 2)]
        pairs, _, _ = read_inputs([str(path)], tsv_columns=(4, 3))
        assert (pairs[0].pivot, pairs[0].candidate) == ("Cześć.", "Hello.")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=BYTES,
    max_chars=st.sampled_from([5, 20_000]),
    policy=st.sampled_from(["replace", "reject"]),
)
def test_tsv_reader_accounts_for_every_line(data: bytes, max_chars: int, policy: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = write(Path(tmp), "fuzz.tsv", data)
        shard = Shard("tsv", url, "fuzz", "en", "pl")
        for split_bytes in (0, 7):
            options = ReaderOptions(
                invalid_utf8=policy, max_line_chars=max_chars, split_bytes=split_bytes
            )
            pairs, rejected, _ = read_all([shard], options)
            if not data.startswith(tuple(magic for magic, _ in MAGIC)):
                assert len(pairs) + len(rejected) == expected_lines(data)
                lines = sorted([p.line for p in pairs] + [r.line for r in rejected])
                assert lines == list(range(1, len(lines) + 1))
            else:
                assert rejected  # a damaged compressed stream is never silently empty
