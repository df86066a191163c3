"""The dataset card: ``README.md`` with the YAML that Hugging Face ``datasets`` reads.

``datasets.load_dataset(DIR)`` reads a folder's ``README.md`` front matter:
its ``configs`` say which files make which config and split. Without it,
``datasets`` globs every Parquet file in the folder and fails on the two
schemas of ``pairs/`` and ``rejects/``. The card makes ``pairs`` the default
config (split ``train``) and ``rejects`` a second one, and carries the
languages, size category, task, licence (where known) and the run's figures.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from paramine.pipelines.formats.pivot_languages import several

#: Licences of well-known corpora, by a lowercase substring of the corpus
#: name, as Hugging Face licence ids. Only corpora whose terms are one
#: licence for all their text are listed.
KNOWN_LICENSES = {
    # tatoeba.org terms of use: sentences are CC BY 2.0 FR.
    "tatoeba": "cc-by-2.0",
}

#: Hugging Face's size categories: (upper bound, name).
SIZE_CATEGORIES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
    (100_000_000, "10M<n<100M"),
    (1_000_000_000, "100M<n<1B"),
)


def size_category(rows: int) -> str:
    """Hugging Face's ``size_categories`` value for ``rows`` examples."""
    for bound, name in SIZE_CATEGORIES:
        if rows < bound:
            return name
    return "n>1B"


def input_license(stats: Mapping[str, Any]) -> str:
    """The inputs' licence as a Hugging Face id, or ``unknown``.

    An explicit ``license`` option wins; otherwise every corpus of the run
    must have the same known licence.
    """
    explicit = stats.get("options", {}).get("license")
    if explicit:
        return str(explicit)
    licences = set()
    for shard in stats.get("inputs", []):
        corpus = str(shard.get("corpus", "")).lower()
        urls = " ".join(str(f.get("url", "")) for f in shard.get("files", [])).lower()
        found = {lic for key, lic in KNOWN_LICENSES.items() if key in corpus or key in urls}
        if len(found) != 1:
            return "unknown"
        licences |= found
    return licences.pop() if len(licences) == 1 else "unknown"


def _data_files(names: Sequence[str], folder: str) -> list[str] | str:
    """A glob where it names exactly the manifest's files, else the files themselves."""
    inside = all(posixpath.dirname(n) == folder and n.endswith(".parquet") for n in names)
    return f"{folder}/*.parquet" if inside else sorted(names)


def pivot_languages(stats: Mapping[str, Any]) -> list[str]:
    """The run's pivot languages: ``--src-lang``, or with several those the pairs came from."""
    option = stats["languages"].get("pivot")
    if option and not several(str(option)):
        return [str(option)]
    return sorted(stats["languages"].get("pivots") or {})


def _several_pivots(stats: Mapping[str, Any]) -> bool:
    return several(str(stats["languages"].get("pivot")))


def card_metadata(stats: Mapping[str, Any], files: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The YAML front matter of the card."""
    languages = [
        lang for lang in (stats["languages"].get("candidate"), *pivot_languages(stats)) if lang
    ]
    pivots = (
        f"pivots in {len(pivot_languages(stats))} languages"
        if _several_pivots(stats)
        else f"pivot {stats['languages'].get('pivot')}"
    )
    configs: list[dict[str, Any]] = [
        {
            "config_name": "pairs",
            "data_files": [
                {"split": "train", "path": _data_files(files.get("pairs", []), "pairs")}
            ],
            "default": True,
        }
    ]
    if files.get("rejects"):
        configs.append(
            {
                "config_name": "rejects",
                "data_files": [
                    {"split": "train", "path": _data_files(files["rejects"], "rejects")}
                ],
            }
        )
    return {
        "configs": configs,
        "language": languages,
        "license": input_license(stats),
        "size_categories": [size_category(int(stats["rows"].get("pairs", 0)))],
        "task_categories": ["sentence-similarity"],
        "tags": ["paraphrase-mining", "paramine", "bitext"],
        "pretty_name": f"paramine paraphrases ({stats['languages'].get('candidate')}, {pivots})",
    }


def _source(stats: Mapping[str, Any]) -> tuple[str, str]:
    """What the pairs were mined from, in words, and the table of pivot languages (or "")."""
    lang = stats["languages"].get("candidate")
    if not _several_pivots(stats):
        pivot_lang = stats["languages"].get("pivot")
        source = (
            f"`{pivot_lang}`-`{lang}`\nbitext: two `{lang}` sentences are a pair when they "
            f"translate the same `{pivot_lang}` pivot\nsentence"
        )
        return source, ""
    by_language = stats["languages"].get("pivots") or {}
    listed = ", ".join(f"`{p}`" for p in pivot_languages(stats)) or "none"
    source = (
        f"bitext with pivots in {len(by_language)} languages ({listed}): two `{lang}` "
        "sentences are a pair when they translate the same pivot sentence, in the same "
        "language (pivots in different languages never share a group),"
    )
    pivot_rows = "\n".join(
        f"| `{p}` | {n['pairs']:,} | {n['groups']:,} |" for p, n in by_language.items()
    )
    return source, "\n| pivot language | pairs | groups |\n|---|---:|---:|\n" + pivot_rows + "\n"


def _licence_line(licence: str, corpora: list[str]) -> str:
    if licence != "unknown":
        return f"The inputs' licence is `{licence}`; the pairs are derived from them and carry it."
    return (
        "The inputs' licence is not known to paramine: check the licence of "
        f"{', '.join(corpora) or 'the input corpora'} before sharing this dataset."
    )


def _unchecked_line(not_judged: Mapping[str, Mapping[str, int]]) -> str:
    """The lines kept without a judgment, per check and language; "" when there are none."""
    if not not_judged:
        return ""
    return (
        "- Kept without a judgment (a check that cannot judge the language): "
        + "; ".join(
            f"{check.replace('_', ' ')} check: "
            + ", ".join(f"`{code}` {n:,} lines" for code, n in langs.items())
            for check, langs in not_judged.items()
        )
        + ".\n"
    )


def render_card(stats: Mapping[str, Any], files: Mapping[str, Sequence[str]]) -> str:
    """The whole ``README.md``: YAML front matter, then what the data is and how to read it."""
    meta = card_metadata(stats, files)
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    funnel = stats["funnel"]
    cut = stats["cuts"][0] if stats.get("cuts") else {}
    lang = stats["languages"].get("candidate")
    source, pivot_table = _source(stats)
    model = stats.get("model", {})
    corpora = sorted({str(s.get("corpus")) for s in stats.get("inputs", [])})
    licence_line = _licence_line(meta["license"], corpora)
    unchecked_line = _unchecked_line(funnel.get("unchecked") or {})
    stage_lines = "\n".join(
        f"| {s['stage']} | {s['in']:,} | {s['kept']:,} | "
        + (", ".join(f"{k} {v:,}" for k, v in s["dropped"].items() if v) or "-")
        + " |"
        for s in funnel["stages"]
    )
    return f"""---
{front}---

# {meta["pretty_name"]}

Paraphrase pairs in `{lang}` mined by paramine from {source} and both score at or above the
cut against it. Open `report.html` beside this file
for the figures drawn (funnel, score histograms, group sizes, samples); `stats.json` holds
the same figures, `manifest.json` the run's full record.

- Pairs: **{funnel["written"]:,}** (`pairs/`, config `pairs`, the default).
- Rejected input records: {funnel["rejected_rows"]:,} (`rejects/`, config `rejects`).
- Model: `{model.get("id")}` (revision `{model.get("revision")}`); score `{cut.get("score")}`,
  cut {cut.get("value")} ({cut.get("mode")}).
- Corpora: {", ".join(f"`{c}`" for c in corpora)}. {licence_line}
- Mined {stats.get("created_at")} by {stats.get("code_version")}.
{unchecked_line}
| stage | in | kept | dropped by reason |
|---|---:|---:|---|
{stage_lines}
{pivot_table}
## Columns of `pairs/` (schema `{stats["schema_versions"]["pairs"]}`)

`pair_id`, `sentence_a`, `sentence_b` (the paraphrases), `lang`, `pivot_sentence` (the
sentence both translate), `pivot_lang`, `score_a`, `score_b` (each sentence's score against
the pivot), `group_size` (distinct candidates of the pivot), `corpus`.

## Reading it

```python
from datasets import load_dataset
pairs = load_dataset("path/to/this/folder")["train"]          # the pairs
rejects = load_dataset("path/to/this/folder", "rejects")["train"]

import pandas as pd
df = pd.read_parquet("path/to/this/folder/pairs")

import polars as pl
df = pl.read_parquet("path/to/this/folder/pairs/*.parquet")
```

```sql
-- DuckDB
SELECT pivot_sentence, sentence_a, sentence_b FROM 'path/to/this/folder/pairs/*.parquet';
```
"""
