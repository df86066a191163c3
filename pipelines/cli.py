"""The ``paramine`` command: one subcommand per job.

Each subcommand lives in its own module with a ``main(argv) -> int``; the
module is imported only when its subcommand runs, so ``paramine --help`` and
building a pipeline graph never import torch.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "mine": ("pipelines.mine", "mine paraphrase pairs from bitext into a Parquet dataset"),
    "models": ("encoders.models", "list the encoders paramine can use and what is cached"),
    "train": ("encoders.train", "train an LSTM-pooled sentence encoder on a mined dataset"),
    "evaluate": ("encoders.evaluate", "score an encoder on paraphrase retrieval and STS"),
    "refresh": ("pipelines.refresh", "mine only new or changed shards into a new version"),
}


class _BeamImportNoise(logging.Filter):
    """Hides Beam's import-time warning about BigQuery clients paramine never uses."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "apitools not found" not in record.getMessage()


def _usage() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    lines = ["usage: paramine COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in SUBCOMMANDS.items()]
    lines += ["", "Run `paramine COMMAND --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run a paramine subcommand; return its exit status."""
    # Before torch or faiss is imported: on small machines OpenMP threads that
    # spin while waiting made encoding 5x slower (shared/DESIGN.md).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    logging.getLogger().addFilter(_BeamImportNoise())
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"paramine: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(SUBCOMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
