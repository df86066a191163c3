"""Tests of pipelines/formats/tmx.py: units, languages, markup, damaged and unsafe XML, fuzz."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from paramine.pipelines.files.opening import CorruptInputError
from paramine.pipelines.files.xml_safety import MalformedXmlError, UnsafeXmlError
from paramine.pipelines.formats import ReaderOptions, Shard
from paramine.schemas.text_keys import sha256_hex

from tests.paths import CORPORA
from tests.pipelines.formats.helpers import (
    BOMB,
    BYTES,
    MALFORMED,
    needs_corpora,
    read_all,
    read_inputs,
    readable_prefix,
    reasons,
    tsv,
    write,
)

TMX = """<?xml version="1.0" encoding="utf-8"?>
<tmx version="1.4">
<header srclang="en" adminlang="en" segtype="sentence" datatype="PlainText"/>
<body>
  <tu><tuv xml:lang="en"><seg>Good morning.</seg></tuv>
      <tuv xml:lang="pl"><seg>Dzień dobry.</seg></tuv></tu>
  <tu><tuv lang="EN-GB"><seg>Press <bpt i="1">&lt;b&gt;</bpt>Save<ept i="1">&lt;/b&gt;</ept>
 <hi>now</hi>.</seg></tuv>
      <tuv lang="pl"><seg>Naciśnij <ph>&lt;br/&gt;</ph>Zapisz.</seg></tuv></tu>
  <tu><tuv xml:lang="de"><seg>Ja.</seg></tuv>
      <tuv xml:lang="pl"><seg>Tak.</seg></tuv>
      <tuv xml:lang="en"><seg>Yes.</seg></tuv>
      <tuv xml:lang="pl-PL"><seg>Owszem.</seg></tuv></tu>
  <tu><tuv xml:lang="en"><seg>Only English &amp; nothing else.</seg></tuv></tu>
</body>
</tmx>
"""


class TestTmx:
    def test_units_languages_markup_and_variants(self, tmp_path: Path) -> None:
        path = tmp_path / "memory.tmx"
        path.write_text(TMX, encoding="utf-8")
        pairs, rejected, _ = read_inputs([str(path)])
        assert [(p.pivot, p.candidate, p.line) for p in pairs] == [
            ("Good morning.", "Dzień dobry.", 1),
            ("Press Save\n now.", "Naciśnij Zapisz.", 2),
            ("Yes.", "Tak.", 3),
            ("Yes.", "Owszem.", 3),
        ]
        assert {p.corpus for p in pairs} == {"memory"}
        assert [(r.reason, r.line) for r in rejected] == [("missing_language", 4)]
        assert "en:Only English & nothing else." in rejected[0].record

    def test_reversed_direction_and_gzip(self, tmp_path: Path) -> None:
        path = tmp_path / "memory.tmx.gz"
        path.write_bytes(gzip.compress(TMX.encode()))
        pairs, _, _ = read_inputs([str(path)], src="pl", tgt="en")
        assert (pairs[0].pivot, pairs[0].candidate) == ("Dzień dobry.", "Good morning.")
        assert (pairs[0].pivot_lang, pairs[0].lang) == ("pl", "en")


EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE tmx [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<tmx version="1.4"><body><tu><tuv xml:lang="en"><seg>&secret;</seg></tuv></tu></body></tmx>
"""


class TestXml:
    def test_malformed_xml_names_file_and_line(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, MALFORMED, "broken.tmx")
        with pytest.raises(MalformedXmlError, match=r"broken\.tmx: malformed XML at line 3"):
            read_inputs([url])

    def test_malformed_xml_rejected_under_option(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, MALFORMED, "broken.tmx")
        pairs, rejected, _ = read_inputs([url], on_malformed_xml="reject")
        assert [p.pivot for p in pairs] == ["Fine."]
        assert [(r.reason, r.line) for r in rejected] == [("malformed_xml", 2)]
        assert "line 3" in rejected[0].record

    @pytest.mark.parametrize("data", [BOMB, EXTERNAL], ids=["entity_expansion", "external"])
    def test_entities_are_refused(self, tmp_path: Path, data: bytes) -> None:
        url = tsv(tmp_path, data, "evil.tmx")
        with pytest.raises(UnsafeXmlError, match=r"evil\.tmx: refused XML"):
            read_inputs([url])
        _, rejected, _ = read_inputs([url], on_malformed_xml="reject")
        assert reasons(rejected) == {"unsafe_xml": 1}

    def test_damaged_zip_named_tmx(self, tmp_path: Path) -> None:
        # Zip magic with no archive behind it: an error naming the file, or one
        # corrupt_input rejection (not malformed_xml: the XML was never reached).
        url = tsv(tmp_path, b"PK\x03\x04 truncated", "memory.tmx")
        with pytest.raises(CorruptInputError, match=r"memory\.tmx: not a readable zip archive"):
            read_inputs([url])
        pairs, rejected, _ = read_inputs([url], on_malformed_xml="reject")
        assert pairs == []
        assert [(r.reason, r.line) for r in rejected] == [("corrupt_input", 1)]


TMX_FILE = CORPORA / "derived_formats" / "tatoeba-test.en-pl.tmx"


def units_tmx(n: int) -> bytes:
    # Digests make the text compress poorly, so half a gzip is about half the units.
    units = "".join(
        f'<tu><tuv xml:lang="en"><seg>Sentence {i} {sha256_hex([str(i).encode()])}.</seg></tuv>'
        f'<tuv xml:lang="pl"><seg>Zdanie {i}.</seg></tuv></tu>\n'
        for i in range(1, n + 1)
    )
    return f'<?xml version="1.0"?>\n<tmx version="1.4"><body>\n{units}</body></tmx>\n'.encode()


class TestTruncatedXml:
    """Defect 2: keep every unit before the damage; the damage is one reject."""

    @pytest.mark.parametrize("policy", ["error", "reject"])
    def test_truncated_tmx_gz_keeps_units_before_the_damage(
        self, tmp_path: Path, policy: str
    ) -> None:
        data = gzip.compress(units_tmx(26))
        path = tmp_path / "memory.tmx.gz"
        path.write_bytes(data[: len(data) // 2])
        complete = readable_prefix(data[: len(data) // 2]).count(b"</tu>")
        assert complete >= 5
        pairs, rejected, _ = read_inputs([str(path)], on_malformed_xml=policy)
        assert [p.candidate for p in pairs] == [f"Zdanie {i}." for i in range(1, complete + 1)]
        assert [(r.reason, r.line) for r in rejected] == [("truncated_input", complete + 1)]
        assert rejected[0].record.startswith(f"{path}: the file breaks off at line ")

    def test_truncated_plain_tmx_keeps_units_before_the_damage(self, tmp_path: Path) -> None:
        data = units_tmx(26)
        path = tmp_path / "memory.tmx"
        path.write_bytes(data[: len(data) // 2])
        complete = data[: len(data) // 2].count(b"</tu>")
        pairs, rejected, _ = read_inputs([str(path)])
        assert len(pairs) == complete
        assert [(r.reason, r.line) for r in rejected] == [("truncated_input", complete + 1)]
        assert "line" in rejected[0].record and "memory.tmx" in rejected[0].record

    @needs_corpora
    def test_real_tmx_gz_cut_in_half(self, tmp_path: Path) -> None:
        data = gzip.compress(TMX_FILE.read_bytes())
        cut = tmp_path / "tatoeba-test.en-pl.tmx.gz"
        cut.write_bytes(data[: len(data) // 2])
        complete = readable_prefix(data[: len(data) // 2]).count(b"</tu>")
        full, _, _ = read_inputs([str(TMX_FILE)])
        pairs, rejected, _ = read_inputs([str(cut)])
        assert len(pairs) == complete > 4000
        assert [(p.pivot, p.candidate) for p in pairs] == [
            (p.pivot, p.candidate) for p in full[:complete]
        ]
        assert [(r.reason, r.line) for r in rejected] == [("truncated_input", complete + 1)]


def test_unsafe_xml_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "evil.tmx"
    path.write_bytes(
        b'<?xml version="1.0"?>\n<!DOCTYPE tmx [\n<!ENTITY a "aaaa">]>\n<tmx version="1.4"/>\n'
    )
    with pytest.raises(UnsafeXmlError, match=rf"{path}: refused XML at line 3"):
        read_inputs([str(path)])
    _, rejected, _ = read_inputs([str(path)], on_malformed_xml="reject")
    assert reasons(rejected) == {"unsafe_xml": 1}


# Text that XML can carry: no control characters (bar tab) and no surrogates.
XML_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), whitelist_characters="\t"), max_size=30
)


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
