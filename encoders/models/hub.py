"""Models named by a Hugging Face hub id: the local Hugging Face cache, else the hub."""

from __future__ import annotations

import os
from pathlib import Path

from paramine.encoders.models.registry import DEFAULT_MODEL, ResolvedModel, detect_prefix
from paramine.schemas.errors import ModelError

HUB_TIMEOUT_S = 5.0


def hub_offline() -> bool:
    """Whether the environment forbids reaching the hub (``HF_HUB_OFFLINE`` and kin)."""
    return any(
        os.environ.get(var, "").strip().upper() in {"1", "ON", "YES", "TRUE"}
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def hf_cached_snapshot(repo_id: str) -> Path | None:
    """The local Hugging Face cache's snapshot of ``repo_id``, if it holds one."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    for filename in ("modules.json", "config.json"):
        try:
            found = try_to_load_from_cache(repo_id, filename)
        except ValueError as err:  # huggingface_hub's HFValidationError
            raise ModelError(f"--model {repo_id!r} is not a valid hub id: {err}") from err
        if isinstance(found, str):
            return Path(found).parent
    return None


def _unreachable(repo_id: str, why: str) -> ModelError:
    return ModelError(
        f"--model {repo_id!r} is a Hugging Face hub id, but the hub cannot be reached "
        f"({why}) and the model is not in the local Hugging Face cache. Use the offline "
        f"default `--model {DEFAULT_MODEL}`, a local sentence-transformers folder, or a "
        "folder URL such as gs://bucket/models/name"
    )


def resolve_hub(repo_id: str) -> ResolvedModel:
    """Resolve a hub id: its snapshot in the local cache, else the hub's revision.

    Raises:
        ModelError: the hub cannot be reached and the cache lacks the model, or
            the hub has no such model.
    """
    snapshot = hf_cached_snapshot(repo_id)
    if snapshot is not None:
        # Snapshot folders are named after the commit they hold.
        return ResolvedModel(
            str(snapshot), repo_id, snapshot.name, detect_prefix(repo_id, snapshot)
        )
    if hub_offline():
        raise _unreachable(repo_id, "HF_HUB_OFFLINE is set")
    try:
        from huggingface_hub import HfApi
        from huggingface_hub.errors import RepositoryNotFoundError
    except ImportError as err:
        raise _unreachable(repo_id, "huggingface_hub is not installed") from err
    try:
        info = HfApi().model_info(repo_id, timeout=HUB_TIMEOUT_S)
    except RepositoryNotFoundError as err:
        raise ModelError(
            f"--model {repo_id!r}: no such model on the Hugging Face hub (or it is private)"
        ) from err
    except Exception as err:  # any network failure means the same to the user
        raise _unreachable(repo_id, f"{type(err).__name__}: {err}") from err
    return ResolvedModel(repo_id, repo_id, info.sha, detect_prefix(repo_id))
