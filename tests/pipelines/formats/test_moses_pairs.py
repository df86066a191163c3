"""Tests of pipelines/formats/moses_pairs.py: how one side of a Moses pair finds the other."""

from __future__ import annotations

from pathlib import Path

import pytest
from paramine.pipelines.formats import resolve_inputs
from paramine.schemas.errors import InputError

from tests.pipelines.formats.helpers import MOSES_ZIP, needs_corpora, read_all, read_inputs


@needs_corpora
class TestZipMembers:
    def test_documented_zip_member_form_of_a_moses_pair(self) -> None:
        """Defect 3: ``zip://X.en::file.zip`` finds ``X.pl`` in the same zip."""
        member = f"zip://Tatoeba-test.en-pl.en::{MOSES_ZIP}"
        shards = resolve_inputs([member], "en", "pl")
        assert [(s.format, s.url, s.companion) for s in shards] == [
            ("moses", member, f"zip://Tatoeba-test.en-pl.pl::{MOSES_ZIP}")
        ]
        pairs, rejected, _ = read_all(shards)
        whole, _, _ = read_inputs([str(MOSES_ZIP)])
        assert len(pairs) == 10_099 and rejected == []
        assert [(p.pivot, p.candidate) for p in pairs] == [(p.pivot, p.candidate) for p in whole]

    def test_zip_moses_prefix(self) -> None:
        shards = resolve_inputs([f"zip://Tatoeba-test.en-pl::{MOSES_ZIP}"], "en", "pl")
        assert [s.companion for s in shards] == [f"zip://Tatoeba-test.en-pl.pl::{MOSES_ZIP}"]


class TestStrayFile:
    """Defect 10: a stray file is skipped with a counted reject, not an abort."""

    def test_a_stray_file_named_on_its_own_is_an_error(self, tmp_path: Path) -> None:
        (tmp_path / "x.en").write_text("Lonely.\n")
        with pytest.raises(InputError, match=r"x\.en looks like one side of a Moses pair"):
            resolve_inputs([str(tmp_path / "x.en")], "en", "pl")

    def test_a_target_beside_another_pivot_language_says_which_flag(self, tmp_path: Path) -> None:
        # Tatoeba's x-pol folders: German and Polish, mined with the default --src-lang en.
        (tmp_path / "t.deu").write_text("Katze.\n")
        (tmp_path / "t.pol").write_text("Kot.\n")
        (tmp_path / "t.ids").write_text("1\n")  # not a language: never suggested
        hint = r"\(beside it: \.deu; for another pivot language give --src-lang deu"
        with pytest.raises(InputError, match=r"only Moses files without a partner .*" + hint):
            resolve_inputs([str(tmp_path)], "en", "pl")
        with pytest.raises(InputError, match=r"no .*t\.en file is beside it " + hint):
            resolve_inputs([str(tmp_path / "t.pol")], "en", "pl")
        [shard] = resolve_inputs([str(tmp_path)], "deu", "pl")
        assert (shard.pivot_lang, shard.lang) == ("de", "pl")
