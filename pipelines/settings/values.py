"""The parsers of paramine mine's settings, and the sections of its ``--help``.

Each parser takes the text of a flag (or a YAML scalar, or a Python value)
and returns the value, or raises ``ValueError`` saying what is allowed; the
flag's name is added by the caller (``schemas.options.parse_fields``).
"""

from __future__ import annotations

from typing import Any


def parse_threshold(value: Any) -> float | str:
    """``"auto"``, or a cosine in [-1, 1] as a float."""
    text = str(value).strip()
    if text == "auto":
        return "auto"
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"{text!r}: give 'auto' or a cosine such as 0.8") from None
    if not -1.0 <= number <= 1.0:
        raise ValueError(f"{number} is not a cosine in [-1, 1]")
    return number


def parse_unit_interval(value: Any) -> float:
    """A number in [0, 1]: a CzEng score's threshold (0 keeps every pair)."""
    number = float(value)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{number} is not in [0, 1]")
    return number


def parse_tsv_columns(value: Any) -> tuple[int, int] | None:
    """Two different 1-based column numbers, ``PIVOT,CANDIDATE``."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            pivot, candidate = (int(part) for part in value.split(","))
        except ValueError:
            raise ValueError(f"{value!r}: give two column numbers, pivot first, e.g. 3,4") from None
    else:
        pivot, candidate = (int(part) for part in value)
    if min(pivot, candidate) < 1 or pivot == candidate:
        raise ValueError(f"{value!r}: columns are numbered from 1 and must differ")
    return pivot, candidate


def parse_ratio_or_off(value: Any) -> float:
    """A ratio in (0, 1], or 'off' (0.0: no check)."""
    if str(value).strip().lower() == "off":
        return 0.0
    number = float(value)
    if not 0.0 < number <= 1.0:
        raise ValueError(f"{number} is not a ratio in (0, 1], or 'off'")
    return number


IO, BAD, MODEL, FILTERS, DEPLOY = (
    "input and output",
    "bad input",
    "model and scoring",
    "filters and pairing",
    "deployment (Dataflow, Flink, Spark)",
)
