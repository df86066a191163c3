"""The one command on several languages in one sitting: each set's loop and its bounds, one table.

Each DIRECTORY is a Tatoeba pair directory (``eng-jbo`` holding
``tatoeba-test-v2021-08-07.eng`` and ``.jbo``, as Helsinki-NLP's
OPUS-MT-testsets lays them out). Each set runs ``bench_quality DIRECTORY
--adapt`` (its noise planted, then ``paramine adapt`` on the corrupted
input, every round's pass judged) in a process of its own, one set at a
time: a loop's training uses every core. A set's figures are kept as
``WORKDIR/<set>.json`` (with the settings it ran with beside it) and its
output as ``WORKDIR/<set>.log``. A set whose JSON is there is read, not run
again, so a sitting that was stopped resumes with the next set, and the set
it stopped in resumes its loop at the last finished round (``paramine
adapt``'s own resume); a JSON run with other settings is refused, and one
put there by hand (a ``bench_quality --adapt --json`` run of your own) is
read as it is::

    python -m benchmarks.quality.bench_languages testsets/eng-jbo testsets/eng-kha \\
        --workdir W [--adapt-flags="--quiet --tied-round later"]

It prints one row a set: the first pass's recall, the final round's
precision and recall, and whether they meet issue 74's bounds (the
``RECALL`` and ``PRECISION`` constants): on a set of ``LINES`` lines or
more, recall of at least ``RECALL`` at precision of at least ``PRECISION``;
on a smaller one, at least twice the first pass's recall at that precision.

The issue holds a set to the means of three training seeds. ``--train-seeds
42,43,44`` runs every set once per seed (``paramine adapt --seed N``), each
seed's sitting in ``WORKDIR/seed-N`` as above (a stopped sitting resumes
there too), prints each seed's table, then one row a set with the seeds'
figures and their means, and holds the means to the bounds::

    python -m benchmarks.quality.bench_languages testsets/eng-nst --workdir W --train-seeds 42,43,44
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The bounds a set's final round is held to (issue 74).
LINES, RECALL, PRECISION = 1_000, 0.80, 0.99


@dataclass(frozen=True)
class SetFigures:
    """One set's loop, as its ``bench_quality --adapt --json`` file records it."""

    name: str
    lines: int
    candidates: int
    first_recall: float
    final_round: int
    precision: float
    recall: float
    minutes: float

    @classmethod
    def read(cls, name: str, path: Path) -> SetFigures:
        """The figures of a finished set's JSON file."""
        found = json.loads(path.read_text(encoding="utf-8"))
        if "loop_seconds" not in found:
            raise SystemExit(
                f"bench_languages: {path} holds no loop's lines and time: not a bench_quality "
                "--adapt --json file, or one written before it recorded them; run the set again"
            )
        rounds: dict[str, dict[str, Any]] = found["results"]
        final = next(label for label in rounds if label.endswith("(final)"))
        first = rounds["round 0"]
        return cls(
            name=name,
            lines=found["lines"],
            candidates=first["eligible"],
            first_recall=first["recall"],
            final_round=int(final.split()[1]),
            precision=rounds[final]["precision"],
            recall=rounds[final]["recall"],
            minutes=found["loop_seconds"] / 60,
        )

    @property
    def bound(self) -> str:
        """The recall bound this set is held to, in words."""
        if self.lines >= LINES:
            return f"R >= {RECALL:.2f}"
        return f"R >= 2 x {self.first_recall:.4f}"

    def meets(self, precision: float, recall: float) -> bool:
        """Whether a precision and recall on this set meet its bounds."""
        wanted = RECALL if self.lines >= LINES else 2 * self.first_recall
        return precision >= PRECISION and recall >= wanted

    @property
    def met(self) -> bool:
        """Whether the final round meets the set's bounds."""
        return self.meets(self.precision, self.recall)


@dataclass(frozen=True)
class SeedMeans:
    """One set's loop at several training seeds: each seed's figures, the bounds on their means."""

    runs: list[SetFigures]

    @property
    def precision(self) -> float:
        return sum(r.precision for r in self.runs) / len(self.runs)

    @property
    def recall(self) -> float:
        return sum(r.recall for r in self.runs) / len(self.runs)

    @property
    def met(self) -> bool:
        """Whether the means meet the set's bounds (the first pass is the same at every seed)."""
        return self.runs[0].meets(self.precision, self.recall)


def settings_of(args: argparse.Namespace) -> dict[str, Any]:
    """What a set's figures depend on besides its input: a file read again must share them."""
    return {k: getattr(args, k) for k in ("noise", "rate", "seed", "model", "adapt_flags")}


def run_set(directory: Path, workdir: Path, args: argparse.Namespace) -> Path:
    """``bench_quality DIRECTORY --adapt`` in a process of its own; the JSON file it wrote."""
    name = directory.name
    result = workdir / f"{name}.json"
    command = [
        sys.executable, "-m", "benchmarks.quality.bench_quality", str(directory),
        "--noise", args.noise, "--rate", str(args.rate), "--seed", str(args.seed),
        "--model", args.model, "--adapt", f"--adapt-flags={args.adapt_flags}",
        "--workdir", str(workdir / name), "--json", str(result),
    ]  # fmt: skip
    print(f"[bench] {name}: {shlex.join(command)}", file=sys.stderr, flush=True)
    started = time.monotonic()
    with (workdir / f"{name}.log").open("w", encoding="utf-8") as log:
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0 or not result.exists():
        raise SystemExit(
            f"bench_languages: {name}: bench_quality exited {done.returncode}; "
            f"see {workdir / f'{name}.log'}"
        )
    print(f"[bench] {name}: {(time.monotonic() - started) / 60:.1f} min", file=sys.stderr)
    return result


def format_table(sets: list[SetFigures]) -> str:
    """One Markdown row a set, and how many meet their bounds."""
    lines = [
        "| set | lines | candidates | recall, round 0 | final round | precision | recall "
        "| bound | met | loop min |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    for s in sets:
        lines.append(
            f"| {s.name} | {s.lines:,} | {s.candidates:,} | {s.first_recall:.4f} "
            f"| {s.final_round} | {s.precision:.4f} | {s.recall:.4f} "
            f"| {s.bound}, P >= {PRECISION:.2f} | {'yes' if s.met else 'no'} "
            f"| {s.minutes:.1f} |"
        )
    lines.append(f"\n{sum(s.met for s in sets)} of {len(sets)} sets meet their bounds")
    return "\n".join(lines)


def format_means(sets: list[SeedMeans], seeds: list[int]) -> str:
    """One Markdown row a set: each seed's precision and recall, their means, the bounds."""
    each = ", ".join(str(seed) for seed in seeds)
    lines = [
        f"| set | lines | recall, round 0 | final rounds | precision ({each}) | recall ({each}) "
        "| mean precision | mean recall | bound | met |",
        "|---|---:|---:|---|---|---|---:|---:|---|---|",
    ]
    for s in sets:
        first = s.runs[0]
        lines.append(
            f"| {first.name} | {first.lines:,} | {first.first_recall:.4f} "
            f"| {', '.join(str(r.final_round) for r in s.runs)} "
            f"| {', '.join(f'{r.precision:.4f}' for r in s.runs)} "
            f"| {', '.join(f'{r.recall:.4f}' for r in s.runs)} "
            f"| {s.precision:.4f} | {s.recall:.4f} | {first.bound}, P >= {PRECISION:.2f} "
            f"| {'yes' if s.met else 'no'} |"
        )
    lines.append(
        f"\n{sum(s.met for s in sets)} of {len(sets)} sets meet their bounds "
        f"on the means of {len(seeds)} seeds"
    )
    return "\n".join(lines)


def seed_list(text: str) -> list[int]:
    """``42,43,44`` -> [42, 43, 44]: distinct training seeds."""
    try:
        seeds = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of seeds: {text!r}") from None
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"a seed given twice: {text!r}")
    return seeds


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "directories", nargs="+", type=Path, metavar="DIRECTORY",
        help="Tatoeba pair directories, English on one side",
    )  # fmt: skip
    parser.add_argument(
        "--workdir", type=Path, required=True,
        help="each set's JSON, log and loop; a set whose JSON is here is read",
    )  # fmt: skip
    parser.add_argument("--noise", default="random", help="bench_quality --noise (random)")
    parser.add_argument("--rate", type=float, default=0.2, help="bench_quality --rate (0.2)")
    parser.add_argument("--seed", type=int, default=13, help="bench_quality --seed (13)")
    parser.add_argument("--model", default="e5-small", help="the base encoder (e5-small)")
    parser.add_argument("--adapt-flags", default="--quiet", help="paramine adapt's flags (--quiet)")
    parser.add_argument(
        "--train-seeds", type=seed_list, metavar="N,N,...",
        help="run every set once per training seed (paramine adapt --seed N), each seed in "
        "WORKDIR/seed-N, and hold the means to the bounds",
    )  # fmt: skip
    return parser.parse_args(argv)


def sitting(args: argparse.Namespace) -> list[SetFigures]:
    """Each set run in ``args.workdir`` (or read, where its JSON is there), in order."""
    args.workdir.mkdir(parents=True, exist_ok=True)
    wanted = settings_of(args)
    sets = []
    for directory in args.directories:
        result = args.workdir / f"{directory.name}.json"
        recorded = args.workdir / f"{directory.name}.settings.json"
        if result.exists() and recorded.exists():
            found = json.loads(recorded.read_text(encoding="utf-8"))
            if found != wanted:
                raise SystemExit(
                    f"bench_languages: {result} was run with {found}, not {wanted}; "
                    "give another --workdir"
                )
        if not result.exists():
            recorded.write_text(json.dumps(wanted), encoding="utf-8")
            result = run_set(directory, args.workdir, args)
        sets.append(SetFigures.read(directory.name, result))
    return sets


def main(argv: list[str] | None = None) -> int:
    """Run (or read) each set's loop and print the table (with ``--train-seeds``, the means too)."""
    args = parse_args(argv)
    missing = [str(d) for d in args.directories if not d.is_dir()]
    if missing:
        raise SystemExit(f"bench_languages: not a directory: {', '.join(missing)}")
    names = [d.name for d in args.directories]
    if len(set(names)) != len(names):
        raise SystemExit("bench_languages: two directories share a name; their files would too")
    if not args.train_seeds:
        print(format_table(sitting(args)))
        return 0
    if any(flag.split("=")[0] == "--seed" for flag in shlex.split(args.adapt_flags)):
        raise SystemExit(
            "bench_languages: --train-seeds gives paramine adapt's --seed; "
            "drop it from --adapt-flags"
        )
    by_seed = []
    for seed in args.train_seeds:
        flags = f"{args.adapt_flags} --seed {seed}".strip()
        one = argparse.Namespace(
            **{**vars(args), "workdir": args.workdir / f"seed-{seed}", "adapt_flags": flags}
        )
        by_seed.append(sitting(one))
        print(f"training seed {seed}:\n{format_table(by_seed[-1])}\n")
    means = [SeedMeans(list(runs)) for runs in zip(*by_seed, strict=True)]
    print(format_means(means, args.train_seeds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
