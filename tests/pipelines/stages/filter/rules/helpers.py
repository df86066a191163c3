"""What the tests of the per-line checks share."""

from __future__ import annotations


def figures(side: str, **found: int) -> dict[str, int]:
    """``{"candidate:lad:script:Latn": n, ...}`` from ``script_Latn=n``-style names."""
    out = {}
    for name, n in found.items():
        kind, _, item = name.partition("_")
        out[f"{side}:{kind}:{item}" if item else f"{side}:{kind}"] = n
    return out
