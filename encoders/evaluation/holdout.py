"""The held-out split of a mined dataset, shared by ``paramine train`` and ``evaluate``.

Pivots are split before anything is filtered, by a hash of the normalized
pivot, so the held-out pairs are the same whatever the training filters, and
no pivot has pairs on both sides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
from paramine.schemas.errors import DatasetError, ParamineError, UsageError
from paramine.schemas.text_keys import comparison_key, hash_fraction

if TYPE_CHECKING:
    from paramine.schemas.manifest import Manifest

SPLITS = ("eval", "train", "all")
#: Share of pivots held out by hash: ``paramine train`` holds them out and
#: ``paramine evaluate`` must pick the same ones, so both read this one value
#: (their options' defaults, ``evaluation/config.py`` and ``training/config.py``).
EVAL_SHARE = 0.05


def split_key(pivot: str) -> str:
    """Return the key that decides a pivot's side of the split: its comparison key.

    Case, punctuation and spacing are ignored, so "Yes." and "yes" land on
    the same side of the split even where mining kept them apart. (Not the
    mining pipeline's group key, which keeps them apart.)
    """
    return comparison_key(pivot)


def eval_mask(pivots: pd.Series, eval_share: float) -> pd.Series:
    """Return True for rows whose pivot falls in the held-out share."""
    if not 0.0 <= eval_share < 1.0:
        raise UsageError(f"--eval-share must be in [0, 1), got {eval_share}")
    # Hash each distinct pivot once: subtitles repeat pivots like "Yes." a lot.
    keys = pivots.map(split_key)
    fractions = {key: hash_fraction(key) for key in keys.unique()}
    return keys.map(fractions) < eval_share


def sample_rows(df: pd.DataFrame, max_rows: int) -> pd.DataFrame:
    """Return at most ``max_rows`` rows, a deterministic sample by pair_id hash."""
    if max_rows <= 0 or len(df) <= max_rows:
        return df
    order = df["pair_id"].map(hash_fraction).sort_values(kind="stable").index
    return df.loc[order[:max_rows]]


def read_dataset(dataset_url: str) -> tuple[pd.DataFrame, Manifest]:
    """Read a finished dataset's pairs (manifest and schema checked) as a DataFrame.

    Raises:
        IncompleteDatasetError: The folder has no manifest.
        DatasetError: A pairs file is missing, of an unknown schema, or not
            readable Parquet (truncated, corrupt); the message names it.
    """
    import pyarrow as pa
    from paramine.schemas.reader import read_pairs

    try:
        table, manifest = read_pairs(dataset_url)
    except ParamineError:
        raise
    except (pa.ArrowException, OSError) as error:
        found = _unreadable_file(dataset_url)
        where, reason = found if found else (dataset_url, error)
        raise DatasetError(
            f"{where} cannot be read as Parquet ({_first_line(reason)}): the dataset is "
            "damaged (a copy cut short?); copy it again or mine it again"
        ) from error
    except ValueError as error:  # read_pairs says which file is missing or of which schema
        raise DatasetError(str(error)) from error
    return table.to_pandas(), manifest


def _unreadable_file(dataset_url: str) -> tuple[str, BaseException] | None:
    """The first pairs file of a mined dataset that does not read, and why."""
    import fsspec
    import pyarrow as pa
    import pyarrow.parquet as pq
    from paramine.schemas.manifest import read_manifest
    from paramine.schemas.reader import _join

    try:
        names = read_manifest(dataset_url).files.pairs or ()
    except (ParamineError, ValueError, OSError):
        return None  # a refreshed table, or a manifest read_pairs already judged
    for name in names:
        url = _join(dataset_url, name)
        fs, path = fsspec.core.url_to_fs(url)
        try:
            pq.read_table(path, filesystem=fs)
        except (pa.ArrowException, OSError) as error:
            return url, error
    return None


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    if not text:
        return type(error).__name__
    line = text.splitlines()[0]
    # pyarrow names the file again: "Could not open Parquet input source '<path>': why"
    if line.startswith("Could not open Parquet input source") and "': " in line:
        line = line.split("': ", 1)[1]
    return line


def load_split(
    dataset_url: str, eval_share: float = EVAL_SHARE, split: str = "eval", max_rows: int = 0
) -> pd.DataFrame:
    """Return one split of a dataset, as ``paramine train`` makes it.

    Args:
        dataset_url: The dataset directory, any fsspec URL.
        eval_share: Share of pivots held out.
        split: ``eval``, ``train`` (before training filters) or ``all``.
        max_rows: Keep a deterministic sample of at most this many rows; 0 keeps all.
    """
    if split not in SPLITS:
        raise UsageError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")
    df, _ = read_dataset(dataset_url)
    if split != "all":
        held_out = eval_mask(df["pivot_sentence"], eval_share)
        df = df[held_out] if split == "eval" else df[~held_out]
    return sample_rows(df, max_rows).reset_index(drop=True)
