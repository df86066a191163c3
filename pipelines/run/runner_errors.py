"""A worker's error as a Beam runner hands it back, unwrapped: paramine's own, or a full disk.

What this relies on, as Beam 2.77 behaves:

- The in-process runner (FnApiRunner, the local default) re-raises a
  worker's exception in the launcher with the step added to its message
  (``... [while running 'MineDataset/MineParaphrases/...']``). It keeps the exception's
  type where it can build one with the new message, and chains the original
  as ``__cause__``; an ``OSError`` it cannot rebuild comes back as a
  ``RuntimeError`` whose text holds the original's.
- Multi-process and remote runners (``--direct_running_mode
  multi_processing``, Dataflow, Flink, Spark) pass only text: the worker's
  formatted traceback, inside the runner's own error.

So the original is looked for in the exception's chain first, then in the
text of every link. This is the one place paramine reads an error's text.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Iterator

from paramine.schemas.errors import ParamineError

#: How Python's traceback writes one of paramine's errors as text: the class's
#: full name, then its message; the runner may append the step it was running.
_RELAYED = re.compile(
    r"^(paramine(?:\.\w+)*)\.(\w+): (.+?)(?: \[while running '.*)?$", re.MULTILINE
)
#: How a runner that passes a worker's error on as text writes a full disk.
_DISK_FULL_TEXT = (f"[Errno {errno.ENOSPC}]", os.strerror(errno.ENOSPC))


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error``, then its causes (or contexts), each once."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def relayed_error(text: str) -> ParamineError | None:
    """The ``ParamineError`` a worker in another process raised, from the text relayed.

    The class is found by its full name (its module is already imported: the
    launcher built the graph from it), so only paramine's own errors are
    rebuilt; the innermost (last) of them in the text is the one raised where
    the problem was found.
    """
    for module_name, name, message in reversed(_RELAYED.findall(text)):
        cls = getattr(sys.modules.get(module_name), name, None)
        if isinstance(cls, type) and issubclass(cls, ParamineError):
            try:
                return cls(message.strip())
            except TypeError:  # a class with arguments of its own
                return ParamineError(message.strip())
    return None


def paramine_error(error: BaseException) -> ParamineError | None:
    """The ``ParamineError`` behind ``error``: itself, a cause, or one a runner relayed as text."""
    for link in _chain(error):
        if isinstance(link, ParamineError):
            return link
    return relayed_error(str(error))


def disk_full_error(error: BaseException) -> OSError | None:
    """The "no space left on device" error behind ``error``, if a full disk caused it."""
    texts = []
    for link in _chain(error):
        if isinstance(link, OSError) and link.errno == errno.ENOSPC:
            return link
        texts.append(str(link))
    if any(marker in text for text in texts for marker in _DISK_FULL_TEXT):
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return None
