"""The ``paramine`` command: one subcommand per job, and the one place errors reach the user.

Each subcommand lives in its own module with a ``main(argv) -> int``; the
module is imported only when its subcommand runs, so ``paramine --help`` and
``paramine mine --help`` import neither Beam nor torch.

Errors: ``guarded`` is the one boundary between every command and the user.
A ``ParamineError`` (bad options, input, model or output) is printed once as
``paramine: error: <message>`` and exits with its code (2 for the user's
mistakes, 1 when paramine's own books do not add up); no command catches
them itself. An error raised inside a Beam worker reaches the launcher
wrapped by the runner, its message repeated in every layer of the wrapping;
``run/runner_errors.py`` finds the original, so it too is printed once.
``--debug`` (anywhere on the command line, or ``PARAMINE_DEBUG=1``) shows the
traceback instead.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading
from collections.abc import Callable

from paramine.schemas import errors

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "mine": (
        "paramine.pipelines.run.mine",
        "mine paraphrase pairs from bitext into a Parquet dataset",
    ),
    "adapt": (
        "paramine.pipelines.adapt.command",
        "mine, teach the encoder the language from all the bitext, mine again (one command)",
    ),
    "models": (
        "paramine.encoders.models.command",
        "list the encoders paramine can use and what is cached",
    ),
    "train": (
        "paramine.encoders.training.train",
        "train an LSTM-pooled sentence encoder on a mined dataset",
    ),
    "evaluate": (
        "paramine.encoders.evaluation.evaluate",
        "score encoders on a task suite (--suite pl: the paper's eight), retrieval and STS",
    ),
    "refresh": (
        "paramine.pipelines.refresh.cli",
        "mine only new or changed shards into a new version",
    ),
    "report": (
        "paramine.pipelines.run.report_command",
        "rebuild a dataset's report.html, stats.json and dataset card",
    ),
}


class _BeamImportNoise(logging.Filter):
    """Hides Beam's import-time warning about BigQuery clients paramine never uses."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "apitools not found" not in record.getMessage()


def _usage() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    lines = ["usage: paramine [--debug] COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in SUBCOMMANDS.items()]
    lines += [
        "",
        "Run `paramine COMMAND --help` for a command's options; --debug shows the "
        "traceback of an error.",
    ]
    return "\n".join(lines)


def _reader_gone() -> int:
    """The reader of our output went away (``paramine refresh --history | head``).

    Not an error; Python would complain again flushing stdout at exit.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run a paramine subcommand; return its exit status.

    After a run stopped by a signal, the process ends here, at once, if a
    thread of the interrupted runner is still alive: the interpreter would
    otherwise wait for it at exit, and one blocked in native code never
    ends (seen in CI: SIGTERM handled and the staging removed, then the
    main thread in ``threading._shutdown`` for two minutes).
    """
    try:
        status = _main(argv)
    except BrokenPipeError:
        return _reader_gone()
    if _STOPPED_BY_SIGNAL and _lingering_threads():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    return status


#: Set when a job ended on a signal (``RunInterrupted``); read by ``main``.
_STOPPED_BY_SIGNAL = False


def _lingering_threads() -> list[threading.Thread]:
    """Non-daemon threads other than this one: what the interpreter would wait for at exit."""
    current = threading.current_thread()
    return [t for t in threading.enumerate() if t is not current and not t.daemon and t.is_alive()]


def _main(argv: list[str] | None) -> int:
    # Before torch or faiss is imported: on small machines OpenMP threads that
    # spin while waiting made encoding 5x slower (shared/DESIGN.md).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    logging.getLogger().addFilter(_BeamImportNoise())
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("PARAMINE_DEBUG") == "1"
    args = [a for a in args if a != "--debug"]
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if not debug:
        # Beam logs a worker's exception, traceback and all, at every layer it
        # passes; the boundary below prints it once.
        for noisy in ("apache_beam.runners.common", "apache_beam.runners.worker"):
            logging.getLogger(noisy).setLevel(logging.CRITICAL)
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"paramine: error: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    if name in ("train", "evaluate", "adapt") and not debug:
        _quiet_libraries()
    module = importlib.import_module(SUBCOMMANDS[name][0])
    return guarded(module.main, rest, debug)


#: Other libraries' loggers that speak on every model load or search: their
#: INFO lines (sentence-transformers' "Load pretrained SentenceTransformer",
#: faiss's "Could not load library with AVX2 support") stay out of a terminal.
THIRD_PARTY_LOGGERS = (
    "sentence_transformers",
    "transformers",
    "faiss",
    "faiss.loader",
    "datasets",
    "accelerate",
    "huggingface_hub",
    "torch",
)


def _quiet_libraries() -> None:
    """``train`` and ``evaluate`` as ``mine``: other libraries' logs and loading bars out.

    Their warnings still show; ``--debug`` shows everything. The trainer's
    own progress bar (steps, loss) is paramine's to show and stays.
    """
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")


def guarded(job: Callable[[list[str]], int | None], argv: list[str], debug: bool = False) -> int:
    """Run ``job(argv)``, printing a ``ParamineError`` once instead of a traceback.

    A job that stopped on a signal and cleaned up after itself raises
    ``RunInterrupted``: printed as ``paramine: <message>`` (it is not an
    error), and its exit status kept under ``--debug`` too, for schedulers.

    Output piped into a reader that stops early (``| head``) ends the job
    quietly with status 0, as ``ls | head`` does.

    Returns:
        The job's exit status, the error's ``exit_code``, or 130 on Ctrl-C.
    """
    try:
        return int(job(argv) or 0)
    except BrokenPipeError:
        return _reader_gone()
    except KeyboardInterrupt:
        print("paramine: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        from paramine.pipelines.run.runner_errors import paramine_error

        found = paramine_error(error)
        if isinstance(found, errors.RunInterrupted):
            global _STOPPED_BY_SIGNAL
            _STOPPED_BY_SIGNAL = True
            if debug:
                import traceback

                traceback.print_exc()
            print(f"paramine: {found}", file=sys.stderr)
            return found.exit_code
        if found is None or debug:
            raise
        print(f"paramine: error: {found}", file=sys.stderr)
        return found.exit_code


if __name__ == "__main__":
    sys.exit(main())
