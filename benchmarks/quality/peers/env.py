"""The peer tools' own virtual environment: created once by bench_peers, reused after.

OpusFilter is a peer to measure, not a dependency: it goes into a virtual
environment of its own, never into paramine's. The environment is made from
the interpreter that runs the benchmark (``python -m venv``), filled by pip
from the package index, and marked complete by a file written last, so that
a killed install is not taken for a finished one. A lock keeps two
benchmarks (or a test and a benchmark) from building it at once.

The pins are what works here, not what pip picks alone:

- ``opusfilter==3.3.1``, the latest release when this was written;
- ``py3langid==0.3.0``: OpusFilter 3.3.1 asks for ``py3langid>=0.2.2``, so pip
  takes 0.4.0, whose ``LanguageIdentifier`` has no ``from_pickled_model``:
  OpusFilter's ``LangidFilter`` then fails when it is built. 0.3.0 has it;
  its model knows 97 languages where paramine's 0.4.0 knows 140, so
  OpusFilter's language filter is given paramine's labels that 0.3.0 knows
  (``prefilter.peer_langid_labels``).

With no package index (offline), creating it fails and ``PeersEnvError``
says why; the benchmark then reports OpusFilter as not run.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: What the peers' environment holds (pip requirement strings).
REQUIREMENTS = ("opusfilter==3.3.1", "py3langid==0.3.0")
#: Written last into a complete environment: what it holds and how long it took.
MARKER = "paramine-peers.json"
#: pip gives up after this long without the index; offline it fails at once.
PIP_FLAGS = ("--disable-pip-version-check", "--retries", "1", "--timeout", "30")


class PeersEnvError(RuntimeError):
    """The peers' environment is missing and could not be made; the message says why."""


@dataclass(frozen=True)
class PeersEnv:
    """A complete peers' environment.

    Attributes:
        root: Its folder.
        python: Its interpreter.
        versions: Installed version of each package named in ``REQUIREMENTS``.
        created_seconds: Wall seconds it took to create (venv and pip), when
            this run created it; ``None`` when it was reused.
        recorded_seconds: The creation time recorded when it was made.
    """

    root: Path
    python: Path
    versions: dict[str, str]
    created_seconds: float | None
    recorded_seconds: float | None

    def bin(self, name: str) -> Path:
        """A console script of the environment, e.g. ``opusfilter``."""
        return self.root / "bin" / name


def default_root(requirements: tuple[str, ...] = REQUIREMENTS) -> Path:
    """Where the environment lives unless told: the user's cache, one folder per recipe.

    The folder's name holds a digest of the requirements and the Python
    version, so a changed pin makes a new environment instead of a mixed one.
    ``PARAMINE_PEERS_ENV`` overrides it.
    """
    if os.environ.get("PARAMINE_PEERS_ENV"):
        return Path(os.environ["PARAMINE_PEERS_ENV"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    recipe = "\n".join((*requirements, sys.version.split()[0]))
    digest = hashlib.sha256(recipe.encode()).hexdigest()[:12]
    return cache / "paramine-bench" / f"peers-{digest}"


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f"{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _complete(root: Path) -> dict | None:
    marker = root / MARKER
    if not marker.exists():
        return None
    try:
        return json.loads(marker.read_text())
    except (OSError, ValueError):
        return None


def ensure_peers_env(
    root: Path | None = None,
    requirements: tuple[str, ...] = REQUIREMENTS,
    install: bool = True,
    log: Path | None = None,
) -> PeersEnv:
    """The peers' environment at ``root``: reused when complete, else created.

    Args:
        root: Its folder (default: ``default_root``).
        requirements: What pip installs into it.
        install: Create it when missing; ``False``: only reuse one.
        log: Where pip's output goes (default: a file beside the environment).

    Raises:
        PeersEnvError: It is missing and ``install`` is off, or creating it
            failed (no package index, most often); the message says which.
    """
    root = root or default_root(requirements)
    with _locked(root):
        record = _complete(root)
        if record is not None:
            return PeersEnv(
                root, root / "bin" / "python", record["versions"], None, record.get("seconds")
            )
        if not install:
            raise PeersEnvError(f"no peers' environment at {root} and --no-install was given")
        shutil.rmtree(root, ignore_errors=True)  # a half-made one from a killed run
        log = log or root.parent / f"{root.name}.log"
        start = time.perf_counter()
        with log.open("w") as out:
            steps = [
                [sys.executable, "-m", "venv", str(root)],
                [str(root / "bin" / "python"), "-m", "pip", "install", *PIP_FLAGS, *requirements],
            ]
            for command in steps:
                out.write(f"$ {' '.join(command)}\n")
                out.flush()
                done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
                if done.returncode != 0:
                    shutil.rmtree(root, ignore_errors=True)
                    tail = log.read_text(errors="replace").strip().splitlines()[-3:]
                    raise PeersEnvError(
                        f"could not create the peers' environment ({' '.join(command[:4])}... "
                        f"exited {done.returncode}; is the package index reachable?): "
                        + " | ".join(tail)
                    )
        seconds = time.perf_counter() - start
        versions = installed_versions(root / "bin" / "python", requirements)
        record = {"requirements": list(requirements), "versions": versions, "seconds": seconds}
        (root / MARKER).write_text(json.dumps(record, indent=1))
        return PeersEnv(root, root / "bin" / "python", versions, seconds, seconds)


def installed_versions(python: Path, requirements: tuple[str, ...]) -> dict[str, str]:
    """The installed version of each required package, as the environment's pip metadata says."""
    names = [r.split("=")[0].split("<")[0].split(">")[0].strip() for r in requirements]
    script = (
        "import json, sys\nfrom importlib.metadata import version\n"
        "print(json.dumps({n: version(n) for n in sys.argv[1:]}))"
    )
    done = subprocess.run(
        [str(python), "-c", script, *names], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)
