"""Time and peak memory of an evaluation suite (``paramine evaluate --suite``) per model.

Each model runs in a fresh process, so its peak resident memory is its own:
model loading, the suite's data, the vectors kept for later tasks, and the
probes. Prints per model the wall and CPU seconds, the seconds spent
encoding and in the probes, the texts encoded per second, the peak RSS and
the load average over the run (other work on the machine slows it), then
the suite's table.

``--random`` adds the probes' null model: random unit vectors, one fixed
vector per distinct sentence, of the width given. Every classification task
must then score its majority-class accuracy (within 2 points) and every
relatedness task a Spearman near 0; the check prints per task and says
whether it holds. ``--repeat 2`` runs each model twice and says whether the
two tables agree to the printed digit.

    python -m benchmarks.speed.bench_evaluate e5-small \\
        --suite-data ../shared/corpora/polish_sentence_evaluation
    python -m benchmarks.speed.bench_evaluate --random 384 \\
        --suite-data ../shared/corpora/polish_sentence_evaluation
    python -m benchmarks.speed.bench_evaluate e5-small --tasks PPC CDSC-R --repeat 2 \\
        --backend torch --suite-data ../shared/corpora/polish_sentence_evaluation
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.lib.paths import CORPORA

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

DATA = CORPORA / "polish_sentence_evaluation"
#: Random vectors pass when a classification task is this close to its majority class.
MAJORITY_POINTS = 2.0
#: ... and a relatedness task's Spearman x100 is this close to 0.
SPEARMAN_POINTS = 5.0


def load(args: argparse.Namespace) -> Any:
    """The suite, cut down to ``--tasks`` when given."""
    from paramine.encoders.evaluation.suite import load_suite

    suite = load_suite(args.suite)
    if args.tasks:
        unknown = sorted(set(args.tasks) - {t.name for t in suite.tasks})
        if unknown:
            sys.exit(f"--tasks: {unknown} are not tasks of {suite.name}")
        suite = dataclasses.replace(
            suite, tasks=tuple(t for t in suite.tasks if t.name in args.tasks)
        )
    return suite


def child(args: argparse.Namespace) -> dict[str, Any]:
    """Run the suite once for ``args.child`` in this process; return figures and costs."""
    import logging

    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    from paramine.encoders.evaluation.suite_eval import model_encoder, random_encoder, run_suite

    started, cpu0 = time.perf_counter(), time.process_time()
    load0 = os.getloadavg()[0]
    suite = load(args)
    if args.child.startswith("random-"):
        encode, backend = random_encoder(int(args.child.split("-", 1)[1])), "-"
    else:
        import torch
        from paramine.encoders.inference.backends import choose_backend
        from paramine.encoders.inference.loading import load_for_backend
        from paramine.encoders.models.resolve import resolve_model

        device = "cuda" if torch.cuda.is_available() else "cpu"
        choice = choose_backend(args.backend, None, device)
        resolved = resolve_model(args.child)
        model = load_for_backend(resolved.path, choice, resolved.revision)
        encode, backend = model_encoder(model, resolved.prefix, args.batch_size), choice.backend
    loaded = time.perf_counter() - started
    details: dict[str, dict[str, Any]] = {}
    result = run_suite(encode, suite, str(args.suite_data), details=details)
    return {
        "model": args.child,
        "backend": backend,
        "result": result,
        "details": details,
        "wall_s": time.perf_counter() - started,
        "load_model_s": loaded,
        "cpu_s": time.process_time() - cpu0,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "loadavg": (load0 + os.getloadavg()[0]) / 2,
    }


def run_child(args: argparse.Namespace, model: str) -> dict[str, Any]:
    """:func:`child` in a fresh interpreter; its last stdout line is the JSON."""
    argv = [sys.executable, "-m", "benchmarks.speed.bench_evaluate", "--child", model]
    argv += ["--suite", args.suite]
    argv += ["--suite-data", str(args.suite_data), "--backend", args.backend]
    argv += ["--batch-size", str(args.batch_size)]
    argv += ["--tasks", *args.tasks] if args.tasks else []
    done = subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(runs: list[dict[str, Any]], suite: Any) -> None:
    """Print the costs, the table, and the random-vector check where there is one."""
    from paramine.encoders.evaluation.suite_eval import suite_table

    print(
        f"{'model':<24}{'backend':>9}{'wall s':>8}{'cpu s':>8}{'load s':>8}{'encode s':>10}"
        f"{'probe s':>9}{'texts':>8}{'texts/s':>9}{'peak MiB':>10}{'loadavg':>9}"
    )
    for run in runs:
        details = run["details"].values()
        encode = sum(d["encode_s"] for d in details)
        probe = sum(d["probe_s"] for d in details)
        texts = sum(d["encoded"] for d in details)
        print(
            f"{run['model']:<24}{run['backend']:>9}{run['wall_s']:>8.0f}{run['cpu_s']:>8.0f}"
            f"{run['load_model_s']:>8.0f}{encode:>10.0f}{probe:>9.0f}{texts:>8}"
            f"{texts / max(encode, 1e-9):>9.0f}{run['peak_rss_mib']:>10.0f}{run['loadavg']:>9.1f}"
        )
    print()
    print(suite_table([(r["model"], r["result"]) for r in runs], suite))
    for run in runs:
        if run["model"].startswith("random-"):
            check_random(run)


def check_random(run: dict[str, Any]) -> None:
    """Print each task's figure beside chance, and whether the probe passes."""
    print(f"\n{run['model']}: figure vs chance (majority-class accuracy; Spearman 0)")
    ok = True
    for name, detail in run["details"].items():
        figure = run["result"]["tasks"][name]
        chance = detail.get("majority", 0.0)
        limit = MAJORITY_POINTS if "majority" in detail else SPEARMAN_POINTS
        passed = abs(figure - chance) <= limit
        ok &= passed
        verdict = "ok" if passed else "FAIL"
        print(f"  {name:<8}{figure:>8.2f}{chance:>8.2f}  C={detail['c']:g}  {verdict}")
    print(
        f"  {'all within' if ok else 'NOT all within'} {MAJORITY_POINTS} points of the majority "
        f"class and {SPEARMAN_POINTS} of Spearman 0"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help="models as `paramine evaluate` takes them")
    parser.add_argument("--suite", default="pl", help="a built-in suite or a suite file")
    parser.add_argument("--suite-data", type=Path, default=DATA, help=f"default {DATA}")
    parser.add_argument("--tasks", nargs="+", help="only these tasks (default: all)")
    parser.add_argument("--backend", default="auto", help="auto, torch, onnx or openvino")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--random", type=int, metavar="DIM", help="add random DIM-d vectors")
    parser.add_argument("--repeat", type=int, default=1, help="runs per model (default 1)")
    parser.add_argument("--json", help="write every run's figures and costs here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return
    models = list(args.models) + ([f"random-{args.random}"] if args.random else [])
    if not models:
        parser.error("name a model, or --random DIM")
    runs = []
    for model in models:
        figures = []
        for _ in range(args.repeat):
            runs.append(run_child(args, model))
            figures.append(runs[-1]["result"])
        if args.repeat > 1:
            same = all(f == figures[0] for f in figures)
            print(f"{model}: {args.repeat} runs {'identical' if same else 'DIFFER'}: {figures}")
    report(runs, load(args))
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
