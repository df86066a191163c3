"""What the tests of the per-line checks share."""

from __future__ import annotations

import random
from collections.abc import Sequence


def figures(side: str, **found: int) -> dict[str, int]:
    """``{"candidate:lad:script:Latn": n, ...}`` from ``script_Latn=n``-style names."""
    out = {}
    for name, n in found.items():
        kind, _, item = name.partition("_")
        out[f"{side}:{kind}:{item}" if item else f"{side}:{kind}"] = n
    return out


def random_line(rng: random.Random, ranges: Sequence[tuple[int, int]]) -> str:
    """Up to 40 characters drawn from one to three of ``ranges``, about a fifth of them spaces."""
    chosen = rng.sample(list(ranges), rng.randint(1, 3))
    chars = []
    for _ in range(rng.randint(0, 40)):
        if rng.random() < 0.2:
            chars.append(" ")
            continue
        low, high = rng.choice(chosen)
        chars.append(chr(rng.randint(low, high)))
    return "".join(chars)
