"""Training steps/s of each recipe, all in one process: the GPU check's training part.

    python -m benchmarks.speed.train_recipes DATASET --model M --out DIR --steps N
        [--device cpu|cuda] [--recipe paper --recipe small ...] [--summary FILE]
        [--mine-demo] [--lstm-hidden N]

Runs ``paramine train DATASET --recipe R --max-steps N`` for each recipe, in
this process, one after the other, into ``DIR/train-R``; then prints a line
per recipe: steps, steps/s, CPU-s per step, device and peak GPU memory (from
each run's ``paramine_training.json``), to stdout or to ``--summary``. With
``--mine-demo``, DATASET is mined first, in this process, from the built-in
demo (``paramine mine --threshold 0.0 --write-scored``). One process instead
of one per recipe and one for the dataset: each process paid the imports of
torch, transformers and sentence-transformers again (the check's dry run is a
CI test, and its time the suite's).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

#: The recipes the check times, in this order.
RECIPES = ("paper", "small", "adapt")


def summary_line(recipe: str, training: dict[str, Any]) -> str:
    """One recipe's figures, as the check prints them."""
    peak = training.get("peak_gpu_memory_mib")
    return (
        f"  {recipe:6s} {training['global_step']} steps, "
        f"{training['steps_per_second'] or 0:.3f} steps/s, "
        f"{training['cpu_s_per_step'] or 0:.2f} CPU-s/step on {training['device']}"
        + (f", peak GPU memory {peak} MiB" if peak else "")
    )


def train_each(
    dataset: str,
    model: str,
    out: Path,
    steps: int,
    device: str,
    recipes: tuple[str, ...],
    lstm_hidden: int | None = None,
) -> list[str]:
    """Train each recipe ``steps`` steps on ``dataset``; return their summary lines.

    ``lstm_hidden`` replaces the recipes' LSTM size (the dry run's: on the
    CPU the paper's 1024 units are most of a tiny model's step).

    Raises:
        SystemExit: A training failed (its status, the recipe named on stderr).
    """
    from paramine.pipelines.cli import main

    lines = []
    for recipe in recipes:
        _fresh_gpu_peak()
        output = out / f"train-{recipe}"
        args = [
            "train", dataset, "--base", model, "--recipe", recipe, "--output", str(output),
            "--max-steps", str(steps), "--eval-share", "0", "--device", device,
            "--save-steps", "1000",
            *(["--lstm-hidden", str(lstm_hidden)] if lstm_hidden else []),
        ]  # fmt: skip
        status = main(args)
        if status:
            print(
                f"train_recipes: recipe {recipe}: paramine train exited {status}", file=sys.stderr
            )
            raise SystemExit(status)
        facts = json.loads((output / "paramine_training.json").read_text())
        lines.append(summary_line(recipe, facts["training"]))
    return lines


def mine_demo(dataset: str, model: str, device: str) -> None:
    """Mine the built-in demo into ``dataset``, every scored pair kept, in this process.

    Raises:
        SystemExit: The mining failed (its status, said on stderr).
    """
    from paramine.pipelines.cli import main

    args = ["mine", "--model", model, "--output", dataset, "--threshold", "0.0"]
    status = main([*args, "--quiet", "--device", device, "--write-scored"])
    if status:
        print(f"train_recipes: paramine mine of the demo exited {status}", file=sys.stderr)
        raise SystemExit(status)


def _fresh_gpu_peak() -> None:
    """Free the last recipe's GPU memory and restart the peak, so each recipe's peak is its own."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", help="a mined dataset folder (paramine mine --write-scored)")
    parser.add_argument("--model", required=True, help="the base model")
    parser.add_argument("--out", required=True, type=Path, help="train-RECIPE folders go here")
    parser.add_argument("--steps", required=True, type=int, help="steps of each recipe")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    parser.add_argument(
        "--recipe", action="append", choices=RECIPES, help="a recipe to time (default: each)"
    )
    parser.add_argument("--summary", type=Path, help="write the lines here, not to stdout")
    parser.add_argument(
        "--lstm-hidden", type=int, help="LSTM size of every recipe (default: the recipes' own)"
    )
    parser.add_argument(
        "--mine-demo", action="store_true", help="mine the built-in demo into DATASET first"
    )
    args = parser.parse_args(argv)
    recipes = tuple(args.recipe or RECIPES)
    if args.mine_demo:
        mine_demo(args.dataset, args.model, args.device)
    lines = train_each(
        args.dataset, args.model, args.out, args.steps, args.device, recipes, args.lstm_hidden
    )
    text = "\n".join(lines) + "\n"
    if args.summary:
        args.summary.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
