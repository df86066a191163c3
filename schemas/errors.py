"""The errors paramine raises on purpose: one family, one way to reach the user.

Every error that a user can act on is a ``ParamineError``. Its message says
what was wrong, where (option, file and line, or record), and what to do; the
CLI prints it once as ``paramine: error: <message>`` and exits with
``exit_code`` (2 for the user's mistakes), and ``--debug`` adds the traceback.
Anything else that escapes is a bug in paramine and keeps its traceback.

The classes also derive from the built-in exception a Python caller would
expect (``ValueError`` for bad options and input, ``FileExistsError`` for a
refused output ...), so ``except ValueError`` around the Python API keeps
working.
"""

from __future__ import annotations


class ParamineError(Exception):
    """Base of the errors paramine raises for the user to act on."""

    #: The process exit status the CLI uses for this error.
    exit_code = 2


class UsageError(ParamineError, ValueError):
    """An option, or a combination of options, that cannot work."""


class InputError(ParamineError, ValueError):
    """Input that cannot be read as given: a missing file, a broken shard, a bad record."""


class UnmatchedInput(InputError):
    """An input that matches no file; ``url`` is the input as given (a job file names its line)."""

    def __init__(self, message: str, url: str) -> None:
        super().__init__(message)
        self.url = url


class OutputError(ParamineError, FileExistsError):
    """An output location paramine refuses to write to, or cannot write to."""


class ModelError(ParamineError, ValueError):
    """A ``--model`` that cannot be resolved or loaded."""


class DatasetError(ParamineError, ValueError):
    """A dataset directory that is not a complete paramine dataset of a known version."""


class AccountingError(ParamineError, RuntimeError):
    """A run's counts do not add up: records were lost or counted twice.

    This is paramine's fault, not the user's, so it exits with 1.
    """

    exit_code = 1


class RunInterrupted(ParamineError):
    """A run stopped by SIGTERM or SIGINT, after removing what it had made.

    Not a mistake: the CLI prints it as ``paramine: <message>`` (no
    ``error:``) and exits as a shell reports a process the signal killed,
    128 + the signal's number (143 for SIGTERM, 130 for SIGINT).
    """

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.signum = signum
        self.exit_code = 128 + signum
