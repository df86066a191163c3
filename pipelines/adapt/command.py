"""``paramine adapt``: the mine -> train -> mine loop as one command.

It takes every flag of ``paramine mine`` (the input, the languages, the
filters; ``--model`` is the base the loop starts from) and a job file
(``--config``), and the loop's own (``AdaptSettings``): rounds, the stop
rule, the held-out share, flags for the rounds' training.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from paramine.pipelines.adapt.settings import AdaptSettings
from paramine.schemas.adapt_record import AdaptRecord, held_out_score
from paramine.schemas.options import add_fields, given_values

PROG = "paramine adapt"
DESCRIPTION = (
    "Mine a language the base encoder hardly knows, teach the encoder the language from every "
    "aligned line of the input, and mine again, until held-out pivots stop gaining: the mine "
    "-> train -> mine loop of docs/training.md as one command. Leaves OUTPUT/dataset (the "
    "final dataset) and OUTPUT/encoder (the trained encoder: --model and "
    "SentenceTransformer(path) load it)."
)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``paramine adapt``."""
    from paramine.pipelines.adapt.loop import AdaptLoop
    from paramine.pipelines.run.mine import job_from_command_line
    from paramine.pipelines.settings.job import build_parser

    args = list(sys.argv[1:] if argv is None else argv)
    parser = add_fields(build_parser(PROG), AdaptSettings)
    parser.description = DESCRIPTION
    namespace, _ = parser.parse_known_args(args)
    settings = AdaptSettings(**given_values(namespace, AdaptSettings))
    job = job_from_command_line(_without(args, parser, AdaptSettings))
    record = AdaptLoop(job, settings).run()
    print(rounds_table(record), file=sys.stderr)
    return 0


def _without(args: Sequence[str], parser: object, settings: type) -> list[str]:
    """The command line without the loop's own flags (and their values): ``paramine mine``'s."""
    import dataclasses

    from paramine.schemas.options import flag_name

    own = {flag_name(f.name, settings) for f in dataclasses.fields(settings)}
    rest: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in own:
            skip = "=" not in arg
            continue
        rest.append(arg)
    return rest


def rounds_table(record: AdaptRecord) -> str:
    """The rounds as a table: pairs, cut, held-out retrieval, time; and where it left what."""
    lines = [
        "paramine adapt: rounds",
        "  round   pairs   new   cut       held-out retrieval (gain ± se)   train s   mine s",
    ]
    for round_ in record.rounds:
        training, mined = round_.training, round_.mining
        if training is not None:
            score = held_out_score(training.held_out)
            held = "" if score is None else f"{score:.2f}"
            if training.gain:
                held += f" ({training.gain['gain']:+.2f} ± {training.gain['standard_error']:.2f})"
        elif record.rounds[1:] and record.rounds[1].training is not None:
            score = held_out_score(record.rounds[1].training.held_out_base)
            held = "" if score is None else f"{score:.2f} (base)"
        else:
            held = ""
        lines.append(
            f"  {round_.round:>5}"
            f"  {(f'{mined.pairs:,}' if mined else '-'):>6}"
            f"  {(f'{mined.new_pairs:,}' if mined and mined.new_pairs is not None else '-'):>4}"
            f"  {(str(mined.cut) if mined else '-'):<8}"
            f"  {held:<31}"
            f"  {(f'{training.seconds:,.0f}' if training else '-'):>7}"
            f"  {(f'{mined.seconds:,.0f}' if mined else '-'):>6}"
        )
    lines.append(f"  stopped: {record.stopped}")
    lines.append(f"  dataset: {record.dataset}")
    lines.append(
        f"  encoder: {record.encoder}" if record.encoder else "  encoder: the base stays the best"
    )
    return "\n".join(lines)
