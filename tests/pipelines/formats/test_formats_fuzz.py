"""Fuzzing the TSV and TMX readers: arbitrary bytes never crash, and every line is accounted for."""

from __future__ import annotations

import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from paramine.pipelines.files.opening import MAGIC, CorruptInputError, sniff_terminator
from paramine.pipelines.files.xml_safety import MalformedXmlError, UnsafeXmlError
from paramine.pipelines.formats import ReaderOptions, Shard
from paramine.pipelines.run.mine import run

from tests.pipelines.formats.helpers import read_all

# Bytes that make the format questions interesting: line ends, tabs, BOM,
# NUL, invalid UTF-8, multi-byte characters, and XML syntax.
LINE_BYTES = [b"\n", b"\r", b"\r\n", b"\t", b"\xef\xbb\xbf", b"\x00", b"\xff", b"\xc5\x84", b"a"]
XML_BYTES = [b" ", b"<", b">", b"&", b"<tu>", b"</tu>", b'<tuv xml:lang="en">', b"<seg>", b"</seg>"]
INTERESTING = st.sampled_from([*LINE_BYTES, *XML_BYTES])
BYTES = st.one_of(st.binary(max_size=300), st.lists(INTERESTING, max_size=80).map(b"".join))
# Text that XML can carry: no control characters (bar tab) and no surrogates.
XML_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), whitelist_characters="\t"), max_size=30
)


def expected_lines(data: bytes) -> int:
    """Lines in an uncompressed file, by the rules the readers document."""
    if not data:
        return 0
    terminator = sniff_terminator(data[: 64 * 1024])
    parts = data.split(terminator)
    return len(parts) - 1 if data.endswith(terminator) else len(parts)


def write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)


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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=BYTES)
# Zip magic with no archive behind it: found by this test in CI.
@example(data=b"PK\x03\x04")
def test_tmx_reader_never_crashes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = write(Path(tmp), "fuzz.tmx", data)
        shard = Shard("tmx", url, "fuzz", "en", "pl")
        try:
            read_all([shard], ReaderOptions())
        except (MalformedXmlError, UnsafeXmlError, CorruptInputError) as error:
            assert "fuzz.tmx" in str(error)
        pairs, rejected, _ = read_all([shard], ReaderOptions(on_malformed_xml="reject"))
        known = {"malformed_xml", "unsafe_xml", "corrupt_input", "truncated_input"}
        known |= {"missing_language", "line_too_long"}
        assert {r.reason for r in rejected} <= known
        assert all(r.line >= 1 for r in rejected) and all(p.line >= 1 for p in pairs)


@settings(max_examples=100, deadline=None)
@given(units=st.lists(st.tuples(XML_TEXT, XML_TEXT), max_size=8))
def test_tmx_texts_round_trip(units: list[tuple[str, str]]) -> None:
    body = "".join(
        f'<tu><tuv xml:lang="en"><seg>{escape(a)}</seg></tuv>'
        f'<tuv xml:lang="pl"><seg>{escape(b)}</seg></tuv></tu>\n'
        for a, b in units
    )
    with tempfile.TemporaryDirectory() as tmp:
        url = write(Path(tmp), "t.tmx", f'<tmx version="1.4"><body>{body}</body></tmx>'.encode())
        pairs, rejected, _ = read_all([Shard("tmx", url, "t", "en", "pl")])
    assert rejected == []
    assert [(p.pivot, p.candidate) for p in pairs] == [(a.strip(), b.strip()) for a, b in units]
    assert [p.line for p in pairs] == list(range(1, len(units) + 1))


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
