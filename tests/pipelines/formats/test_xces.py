"""Tests of pipelines/formats/xces.py: links, documents, damaged alignments, the real release."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
from paramine.pipelines.files.xml_safety import UnsafeXmlError
from paramine.pipelines.formats import resolve_inputs
from paramine.pipelines.formats.xces import MissingDocumentError
from paramine.schemas.errors import InputError

from tests.paths import CORPORA
from tests.pipelines.formats.helpers import (
    BOMB,
    needs_corpora,
    read_all,
    read_inputs,
    readable_prefix,
    reasons,
    tsv,
    write_zip,
)

XCES = "opus_rf_xces/t/xml"
XCES_RELEASE = CORPORA / "opus_rf_xces" / "t"


def _doc(sentences: dict[str, str], tokens: bool) -> bytes:
    body = []
    for sid, text in sentences.items():
        if tokens:
            words = "".join(f'<w id="w{sid}.{i}">{w}</w>\n' for i, w in enumerate(text.split()))
            body.append(f'<s id="{sid}"><chunk>{words}</chunk></s>')
        else:
            body.append(f'<s id="{sid}">\n  {text}\n</s>')
    xml = '<?xml version="1.0" encoding="utf-8"?>\n<text><p id="1">' + "".join(body) + "</p></text>"
    return gzip.compress(xml.encode())


ALIGN = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE cesAlign PUBLIC "-//CES//DTD XML cesAlign//EN" "">
<cesAlign version="1.0">
<linkGrp targType="s" fromDoc="en/d1.xml.gz" toDoc="fr/d1.xml.gz">
<link xtargets="s1;s1" id="SL1"/>
<link xtargets="s2;" id="SL2"/>
<link xtargets=";s2" id="SL3"/>
<link xtargets="s3 s4;s3" id="SL4"/>
<link xtargets="s5;s9" id="SL5"/>
</linkGrp>
<linkGrp targType="s" fromDoc="en/d2.xml.gz" toDoc="fr/d2.xml.gz">
<link xtargets="s1;s1" id="SL6"/>
</linkGrp>
</cesAlign>
"""


@pytest.fixture
def xces_corpus(tmp_path: Path) -> Path:
    """An OPUS-layout XCES corpus: en documents as files, fr documents in fr.zip."""
    root = tmp_path / "xml"
    (root / "en").mkdir(parents=True)
    (root / "en" / "d1.xml.gz").write_bytes(
        _doc({"s1": "Hello .", "s2": "Extra .", "s3": "Two", "s4": "parts .", "s5": "X"}, True)
    )
    (root / "en" / "d2.xml.gz").write_bytes(_doc({"s1": "Second document ."}, False))
    write_zip(
        root / "fr.zip",
        {
            "RF/xml/fr/d1.xml.gz": _doc({"s1": "Bonjour .", "s2": "En plus .", "s3": "Deux"}, True),
            "RF/xml/fr/d2.xml.gz": _doc({"s1": "Deuxième document ."}, False),
        },
    )
    (root / "en-fr.xml").write_text(ALIGN, encoding="utf-8")
    return root / "en-fr.xml"


class TestXces:
    def test_links_one_to_one(self, xces_corpus: Path) -> None:
        pairs, rejected, _ = read_inputs([str(xces_corpus)], "en", "fr")
        assert [(p.pivot, p.candidate, p.line) for p in pairs] == [
            ("Hello .", "Bonjour .", 1),
            ("Second document .", "Deuxième document .", 6),
        ]
        assert [(r.reason, r.line) for r in rejected] == [
            ("unaligned_link_1_0", 2),
            ("unaligned_link_0_1", 3),
            ("many_to_one_link", 4),
            ("missing_sentence", 5),
        ]
        assert rejected[0].record.startswith("SL2\ts2;")
        assert "missing s9" in rejected[3].record

    def test_join_many_to_one_and_swap(self, xces_corpus: Path) -> None:
        pairs, rejected, _ = read_inputs([str(xces_corpus)], "fr", "en", xces_links="join")
        assert ("Deux", "Two parts .", 4) in [(p.pivot, p.candidate, p.line) for p in pairs]
        assert len(pairs) == 3
        assert reasons(rejected) == {
            "unaligned_link_1_0": 1,
            "unaligned_link_0_1": 1,
            "missing_sentence": 1,
        }

    def test_other_languages_and_missing_documents(self, xces_corpus: Path) -> None:
        _, rejected, _ = read_inputs([str(xces_corpus)], "en", "de")
        assert reasons(rejected) == {"language_mismatch": 6}
        (xces_corpus.parent / "fr.zip").unlink()
        pairs, rejected, _ = read_inputs([str(xces_corpus)], "en", "fr")
        assert pairs == []
        assert [(r.reason, r.line) for r in rejected] == [
            ("missing_document", n) for n in range(1, 7)
        ]
        assert rejected[0].record == "SL1\ts1;s1\tmissing document fr/d1.xml.gz"
        assert rejected[5].record == "SL6\ts1;s1\tmissing document fr/d2.xml.gz"

    def test_directory_input_skips_documents(self, xces_corpus: Path) -> None:
        shards = resolve_inputs([str(xces_corpus.parent)], "en", "fr")
        assert [(s.format, s.corpus) for s in shards] == [("xces", "en-fr")]


def test_empty_alignment_files_read_nothing(shared_corpora: Path) -> None:
    shards = resolve_inputs([str(shared_corpora / XCES / "de-en.xml")], "de", "en")
    assert [s.format for s in shards] == ["xces"]
    assert read_all(shards) == ([], [], [])


class TestXml:
    def test_xces_alignment_with_entities_is_refused(self, tmp_path: Path) -> None:
        url = tsv(tmp_path, BOMB.replace(b"tmx", b"cesAlign"), "en-fr.xml")
        with pytest.raises(UnsafeXmlError):
            read_inputs([url], "en", "fr", fmt="xces")


class TestTruncatedXml:
    """Defect 2: keep every unit before the damage; the damage is one reject."""

    @needs_corpora
    def test_real_xces_alignment_cut_in_half(self, tmp_path: Path) -> None:
        release = tmp_path / "t"
        shutil.copytree(XCES_RELEASE, release)
        alignment = release / "xml" / "en-fr.xml.gz"
        data = alignment.read_bytes()
        alignment.write_bytes(data[: len(data) // 2])
        links = readable_prefix(data[: len(data) // 2]).count(b"<link ")
        full, full_rejected, _ = read_inputs(
            [str(XCES_RELEASE / "xml" / "en-fr.xml.gz")], "en", "fr"
        )
        pairs, rejected, _ = read_inputs([str(alignment)], "en", "fr")
        # Links whose element is complete are read; one is the damage.
        read = len(pairs) + len(rejected)
        assert links - 1 <= read - 1 <= links
        assert [p.line for p in pairs] == [p.line for p in full if p.line < read]
        assert rejected[-1].reason == "truncated_input"
        assert rejected[-1].line == read
        assert len(full) + len(full_rejected) == 180


@needs_corpora
class TestMissingXcesDocument:
    """Defect 9: the links of a missing document are rejected; the rest is read."""

    def test_real_release_without_one_document(self, tmp_path: Path) -> None:
        release = tmp_path / "t"
        shutil.copytree(XCES_RELEASE, release)
        (release / "xml" / "fr" / "1988.xml.gz").unlink()
        full, full_rejected, _ = read_inputs(
            [str(XCES_RELEASE / "xml" / "en-fr.xml.gz")], "en", "fr"
        )
        pairs, rejected, _ = read_inputs([str(release / "xml" / "en-fr.xml.gz")], "en", "fr")
        missing = [r for r in rejected if r.reason == "missing_document"]
        assert {r.record.rsplit("\t", 1)[1] for r in missing} == {"missing document fr/1988.xml.gz"}
        # Every link is accounted for: the 1996 document's links read as before.
        first_1996 = min(r.line for r in missing) + len(missing)
        assert [p.line for p in pairs] == [p.line for p in full if p.line >= first_1996]
        assert len(pairs) + len(rejected) == len(full) + len(full_rejected) == 180
        assert [r.line for r in missing] == list(range(1, len(missing) + 1))

    def test_missing_document_error_is_an_input_error(self) -> None:
        assert issubclass(MissingDocumentError, InputError)
