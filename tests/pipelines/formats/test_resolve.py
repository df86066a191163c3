"""Tests of pipelines/formats/resolve.py: zips and their members, input lists, stray files."""

from __future__ import annotations

from pathlib import Path

import fsspec
import pytest
from paramine.pipelines.formats import read_input_list, resolve_inputs
from paramine.schemas.errors import InputError

from tests.pipelines.formats.helpers import MOSES_ZIP, needs_corpora, read_all, write_zip


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


class TestZipMembers:
    def test_unsafe_member_names_are_never_read_or_extracted(self, tmp_path: Path) -> None:
        inner = tmp_path / "inner"
        inner.mkdir()
        archive = write_zip(
            inner / "Evil.en-pl.txt.zip",
            {
                "../Evil.en-pl.en": b"escaped\n",
                "/abs/Evil.en-pl.pl": b"absolute\n",
                "Safe.en-pl.en": b"Cat.\n",
                "Safe.en-pl.pl": b"Kot.\n",
            },
        )
        shards = resolve_inputs([str(archive)], "en", "pl")
        assert [s.corpus for s in shards] == ["Safe.en-pl"]
        pairs, _, _ = read_all(shards)
        assert [(p.pivot, p.candidate) for p in pairs] == [("Cat.", "Kot.")]
        assert sorted(p.name for p in tmp_path.rglob("*")) == ["Evil.en-pl.txt.zip", "inner"]

    def test_only_unsafe_members_is_an_error(self, tmp_path: Path) -> None:
        archive = write_zip(tmp_path / "x.tsv.zip", {"../x.tsv": b"a\tb\n"})
        with pytest.raises(ValueError, match="cannot tell the format"):
            resolve_inputs([str(archive)], "en", "pl")

    @needs_corpora
    def test_missing_member_names_the_zip_and_the_member(self) -> None:
        """Defect 4: an InputError at resolution, not a traceback about ``X.zip.en``."""
        with pytest.raises(InputError) as caught:
            resolve_inputs([f"zip://Tatoeba-test.en-pl.de::{MOSES_ZIP}"], "en", "pl")
        message = str(caught.value)
        assert f"the zip {MOSES_ZIP} has no member 'Tatoeba-test.en-pl.de'" in message
        assert "Tatoeba-test.en-pl.en, Tatoeba-test.en-pl.pl" in message

    def test_missing_archive_is_named(self, tmp_path: Path) -> None:
        missing = tmp_path / "nowhere.zip"
        with pytest.raises(InputError, match=rf"the archive {missing} does not exist"):
            resolve_inputs([f"zip://c.en::{missing}"], "en", "pl")


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


class TestStrayFile:
    """Defect 10: a stray file is skipped with a counted reject, not an abort."""

    def test_only_stray_files_is_an_error(self, tmp_path: Path) -> None:
        (tmp_path / "x.en").write_text("Lonely.\n")
        with pytest.raises(InputError, match=r"only Moses files without a partner .*x\.en"):
            resolve_inputs([str(tmp_path)], "en", "pl")
