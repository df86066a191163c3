"""Every input format: TMX, XCES, OPUS moses zips, CzEng, TSV columns, compression, storage."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from pathlib import Path

import fsspec
import pytest
from paramine.pipelines.files.opening import sniff_compression
from paramine.pipelines.formats import (
    ReaderOptions,
    Shard,
    read_input_list,
    resolve_inputs,
    split_shard,
)
from paramine.schemas.errors import UsageError

from tests.pipelines.formats.helpers import read_all, read_inputs, reasons, write_zip

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


class TestMosesZip:
    def test_opus_zip_either_language_order(self, tmp_path: Path) -> None:
        archive = write_zip(
            tmp_path / "Books.pl-en.txt.zip",
            {
                "Books.pl-en.pl": b"Kot.\nPies.\n",
                "Books.pl-en.en": b"Cat.\nDog.\n",
                "README": b"about",
                "LICENSE": b"CC-BY",
            },
        )
        shards = resolve_inputs([str(archive)], "en", "pl")
        assert len(shards) == 1 and shards[0].corpus == "Books.pl-en"
        assert shards[0].url.startswith("zip://Books.pl-en.en::")
        pairs, rejected, _ = read_all(shards)
        assert [(p.pivot, p.candidate, p.line) for p in pairs] == [
            ("Cat.", "Kot.", 1),
            ("Dog.", "Pies.", 2),
        ]
        assert rejected == []


class TestCzEng:
    def test_six_columns_documents_and_direction(self, tmp_path: Path) -> None:
        path = tmp_path / "czeng20-train"
        path.write_text(
            "d1-s1\t0.9\t1\t1\tDobrý den.\tGood day.\n"
            "d1-s2\t0.8\t1\t1\tAhoj.\tHi.\n"
            "\n"
            "d2-s1\t0.7\t1\tAno.\tYes.\n"
            "d2-s2\t0.7\t1\t1\tNe.\tNo.\n",
            encoding="utf-8",
        )
        pairs, rejected, _ = read_inputs([str(path)], "en", "cs")
        assert [(p.pivot, p.candidate, p.line) for p in pairs] == [
            ("Good day.", "Dobrý den.", 1),
            ("Hi.", "Ahoj.", 2),
            ("No.", "Ne.", 5),
        ]
        assert [(r.reason, r.line) for r in rejected] == [("column_count", 4)]
        pairs, _, _ = read_inputs([str(path)], "cs", "en", fmt="czeng")
        assert (pairs[0].pivot, pairs[0].candidate) == ("Dobrý den.", "Good day.")
        with pytest.raises(ValueError, match="Czech-English"):
            read_inputs([str(path)], "en", "pl", fmt="czeng")


class TestTsvColumns:
    def test_chosen_columns(self, tmp_path: Path) -> None:
        path = tmp_path / "scored.tsv"
        path.write_text("0.9\tid1\tHello.\tCześć.\n0.1\tid2\tshort\n", encoding="utf-8")
        pairs, rejected, _ = read_inputs([str(path)], tsv_columns=(3, 4))
        assert [(p.pivot, p.candidate) for p in pairs] == [("Hello.", "Cześć.")]
        assert [(r.reason, r.line) for r in rejected] == [("column_count", 2)]
        pairs, _, _ = read_inputs([str(path)], tsv_columns=(4, 3))
        assert (pairs[0].pivot, pairs[0].candidate) == ("Cześć.", "Hello.")

    @pytest.mark.parametrize("columns", [(2, 2), (0, 3), (1, 2, 3), "2,x"])
    def test_bad_columns_are_refused_as_the_flag_refuses_them(self, columns: object) -> None:
        """One message for one bad value, from Python as from ``--tsv-columns``."""
        with pytest.raises(UsageError, match=r"^--tsv-columns .*(must differ|column numbers)"):
            ReaderOptions(tsv_columns=columns)  # type: ignore[arg-type]  # a bad value on purpose


TSV_BYTES = "Hello.\tCześć.\nBye.\tPa.\n".encode()


class TestCompression:
    @pytest.mark.parametrize(
        ("name", "data"),
        [
            ("plain.tsv.gz", TSV_BYTES),  # named gzip, really plain text
            ("hidden.tsv", gzip.compress(TSV_BYTES)),  # gzip without the extension
            ("text.tsv.bz2", bz2.compress(TSV_BYTES)),
            ("text.tsv.xz", lzma.compress(TSV_BYTES)),
        ],
        # By name: gzip's header holds the time, and test ids must be the same in every
        # process that collects them (pytest -n).
        ids=["plain.tsv.gz", "hidden.tsv", "text.tsv.bz2", "text.tsv.xz"],
    )
    def test_compression_by_content(self, tmp_path: Path, name: str, data: bytes) -> None:
        path = tmp_path / name
        path.write_bytes(data)
        pairs, rejected, _ = read_inputs([str(path)])
        assert [(p.pivot, p.candidate) for p in pairs] == [("Hello.", "Cześć."), ("Bye.", "Pa.")]
        assert rejected == []

    def test_one_file_zip(self, tmp_path: Path) -> None:
        archive = write_zip(tmp_path / "pairs.tsv.zip", {"pairs.tsv": TSV_BYTES})
        pairs, _, _ = read_inputs([str(archive)])
        assert len(pairs) == 2

    def test_sniff(self) -> None:
        assert sniff_compression(gzip.compress(b"x")) == "gzip"
        assert sniff_compression(b"PK\x03\x04rest") == "zip"
        assert sniff_compression(b"plain") == ""


class TestStorage:
    def test_memory_filesystem_glob_and_input_list(self) -> None:
        fs = fsspec.filesystem("memory")
        for i in range(3):
            fs.pipe(f"/paramine-test/shard-{i}.tsv", f"a{i}\tb{i}\n".encode())
        fs.pipe("/paramine-test/list.txt", b"# shards\nmemory://paramine-test/shard-*.tsv\n\n")
        try:
            inputs = read_input_list("memory://paramine-test/list.txt")
            assert inputs == ["memory://paramine-test/shard-*.tsv"]
            shards = resolve_inputs(inputs, "en", "pl")
            assert len(shards) == 3
            pairs, _, _ = read_all(shards)
            assert sorted(p.pivot for p in pairs) == ["a0", "a1", "a2"]
        finally:
            fs.rm("/paramine-test", recursive=True)


def _lines(n: int) -> list[str]:
    return [f"sentence number {i} " + "x" * (i % 17) for i in range(1, n + 1)]


class TestSplitting:
    """Spans of a file give exactly the records of the whole file."""

    def test_tsv_spans_match_whole_file(self, tmp_path: Path) -> None:
        path = tmp_path / "big.tsv"
        rows = [f"{a}\t{a.upper()}" for a in _lines(500)]
        rows[10] = "only one column"
        path.write_bytes(("\r\n".join(rows) + "\r\n").encode())
        shard = resolve_inputs([str(path)], "en", "pl")[0]
        whole = read_all([shard], ReaderOptions(split_bytes=0))
        split = read_all([shard], ReaderOptions(split_bytes=500))
        assert split == whole
        assert len(whole[0]) == 499 and whole[1][0].line == 11

    def test_moses_spans_match_whole_pair(self, tmp_path: Path) -> None:
        (tmp_path / "c.en").write_text("\n".join(_lines(400)) + "\n", encoding="utf-8")
        (tmp_path / "c.pl").write_text(
            "\n".join(s.upper() + " ż" for s in _lines(400)), encoding="utf-8"
        )
        shard = resolve_inputs([str(tmp_path / "c.en")], "en", "pl")[0]
        whole = read_all([shard], ReaderOptions(split_bytes=0))
        split = read_all([shard], ReaderOptions(split_bytes=700))
        assert split == whole
        assert [p.line for p in split[0]] == list(range(1, 401))
        assert all(p.candidate == p.pivot.upper() + " ż" for p in split[0])

    def test_small_files_are_not_split(self, tmp_path: Path) -> None:
        path = tmp_path / "small.tsv"
        path.write_bytes(TSV_BYTES)
        shard = Shard("tsv", str(path), "small", "en", "pl")
        assert list(split_shard(shard, ReaderOptions())) == [shard]
        spans = list(split_shard(shard, ReaderOptions(split_bytes=5)))
        assert [s.span.first_line for s in spans if s.span] == [1, 2]


def test_stream_reading_is_independent_of_io_class() -> None:
    from paramine.pipelines.files.lines import decoded_lines

    lines = list(decoded_lines(io.BytesIO(b"a\r\nb\n"), b"\n", "replace", 20_000))
    assert [(line.number, line.text) for line in lines] == [(1, "a"), (2, "b")]
