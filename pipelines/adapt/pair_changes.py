"""What a pass of ``paramine adapt`` changed: its new pairs, against the pass before.

The loop's stop rule on pairs reads them (a pass that writes few new pairs
ends the loop), and so do its progress lines and record.
"""

from __future__ import annotations

from paramine.schemas.adapt_record import MiningPass


def pair_changes(
    dataset: str, previous: MiningPass | None, held_out: float
) -> tuple[int, int | None, int | None]:
    """Pairs of held-out pivots; pairs, and pairs of held-out pivots, the pass before lacked."""
    from paramine.encoders.evaluation.holdout import eval_mask
    from paramine.schemas.reader import read_pairs

    def pairs(url: str) -> tuple[set[str], set[str]]:
        table, _ = read_pairs(url)
        frame = table.select(["pair_id", "pivot_sentence"]).to_pandas()
        held = eval_mask(frame["pivot_sentence"], held_out)
        return set(frame["pair_id"]), set(frame["pair_id"][held])

    every, held = pairs(dataset)
    if previous is None:
        return len(held), None, None
    every_before, held_before = pairs(previous.dataset)
    return len(held), len(every - every_before), len(held - held_before)


def new_share(current: MiningPass, previous: MiningPass) -> float:
    """New pairs, as a share of the pass before's pairs (1 when it wrote none)."""
    if not previous.pairs:
        return 1.0 if current.pairs else 0.0
    return (current.new_pairs or 0) / previous.pairs
