"""Sizes as a user writes them: ``10k``, ``1M``."""

from __future__ import annotations

import argparse
import re


def parse_size(text: str) -> int:
    """``10k`` -> 10000, ``1M`` -> 1000000, ``2500`` -> 2500."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of pairs such as 10k or 1M")
    scale = {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2).lower()]
    return int(float(match.group(1)) * scale)


def label(n: int) -> str:
    """10000 -> 10k, 1000000 -> 1M."""
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)
