"""ProfileOptions: a corpus profile's four defaults, each overridable, as docs/filters.md says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from paramine.pipelines.stages.filter.rules.junk import PROFILES, RULES, Limits
from paramine.pipelines.stages.filter.rules.profile_options import ProfileOptions
from paramine.schemas.errors import UsageError

DOCS = Path(__file__).resolve().parents[5] / "docs" / "filters.md"


def test_a_profile_sets_the_four_defaults() -> None:
    web = ProfileOptions(profile="web")
    assert web.rules == tuple(RULES)
    assert web.limits == Limits(min_letter_share=0.6, min_script_share=0.9)
    assert web.language_ratio == 0.3


def test_each_default_can_be_given_on_its_own() -> None:
    chosen = ProfileOptions(
        profile="web", junk_rules="urls", language_check="off", min_script_share=0.5
    )
    assert chosen.rules == ("urls",)
    assert chosen.language_ratio is None  # off
    assert chosen.limits == Limits(min_letter_share=0.6, min_script_share=0.5)
    assert chosen.record() == {
        "profile": "web",
        "junk_rules": ["urls"],
        "language_check": None,
        "language_id": "py3langid",
        "min_letter_share": 0.6,
        "min_script_share": 0.5,
    }
    assert ProfileOptions(junk_rules="none").rules == ()


def test_options_made_again_from_their_own_values_are_the_same() -> None:
    """The settings make these options from values already parsed: parsing them again is a no-op."""
    chosen = ProfileOptions(
        profile="subtitles", junk_rules="urls,script", language_check="off", min_letter_share=0.4
    )
    again = ProfileOptions(
        chosen.profile,
        chosen.junk_rules,
        chosen.language_check,
        chosen.language_id,
        chosen.min_letter_share,
        chosen.min_script_share,
    )
    assert again == chosen and again.language_ratio is None


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"profile": "news"}, r"^--profile 'news'; allowed: curated, subtitles, web"),
        ({"language_check": "1.5"}, r"^--language-check 1.5 is not a ratio in \(0, 1\], or 'off'"),
        ({"min_letter_share": 1.0}, r"^--min-letter-share 1.0 is not a share in \(0, 1\)"),
        ({"junk_rules": "urls,emoji"}, r"^--junk-rules .*emoji"),
        ({"language_id": "cld3"}, r"^--language-id 'cld3'; allowed:"),
    ],
)
def test_a_bad_choice_names_its_flag(values: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ProfileOptions(**values)


def _docs_table() -> dict[str, dict[str, str]]:
    """docs/filters.md's profile table: {flag: {profile: cell}}."""
    rows: dict[str, dict[str, str]] = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        row = line.strip().strip("|").replace("\\|", "/")  # an escaped | inside a cell
        cells = [cell.strip() for cell in row.split("|")]
        flag = re.match(r"`(--[a-z-]+)", cells[1]) if len(cells) == 5 else None
        if flag:
            rows[flag.group(1)] = dict(zip(PROFILES, cells[2:], strict=True))
    return rows


def test_the_docs_table_states_each_profiles_defaults() -> None:
    table = _docs_table()
    assert set(table) == {
        "--junk-rules",
        "--language-check",
        "--min-letter-share",
        "--min-script-share",
    }
    for name in PROFILES:
        record = ProfileOptions(profile=name).record()
        rules = table["--junk-rules"][name]
        expected = list(RULES) if rules == "all seven" else rules.split(", ")
        assert record["junk_rules"] == expected and len(RULES) == 7, name
        assert float(table["--language-check"][name]) == record["language_check"], name
        assert float(table["--min-letter-share"][name]) == record["min_letter_share"], name
        assert float(table["--min-script-share"][name]) == record["min_script_share"], name
