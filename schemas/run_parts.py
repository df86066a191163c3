"""What a run records beside its settings: the model it mined with, the shards it read, its facts.

Typed parts of ``Manifest`` (``model``, ``inputs``, ``extra``), read from and
written to manifest.json with the layout unchanged: a key a run does not
record is absent from the JSON and ``None`` here; ``ModelRecord``'s four keys
are always written, ``null`` where unknown, as runs have always written them.
A key this code does not know is an error naming the part, as for the parts
in ``schemas/written.py``: a newer paramine wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from paramine.schemas.written import known_keys, present


@dataclass(frozen=True)
class TrainedFrom:
    """What a model folder paramine trained says of its training: ``manifest.model.training``.

    Attributes:
        dataset: The dataset it learned from (a first pass of a mine -> train -> mine loop).
        dataset_created_at: When that dataset was mined.
        base: The model it was trained from.
        recipe: The training recipe (``paper``, ``small``, ``adapt``).
        train_on: What it trained on (pairs, aligned lines ...).
        loss_directions: The loss's directions.
        seed: The training seed.
        eval_share: The share of rows held out for its evaluation.
        train_rows: Rows it trained on.
        global_step: Optimizer steps taken.
    """

    dataset: str | None = None
    dataset_created_at: str | None = None
    base: str | None = None
    recipe: str | None = None
    train_on: str | None = None
    loss_directions: Any = None
    seed: int | None = None
    eval_share: float | None = None
    train_rows: int | None = None
    global_step: int | None = None

    def to_json(self) -> dict[str, Any]:
        """Every key, ``null`` where the folder did not say (as ``training_record`` wrote it)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def read(cls, record: TrainedFrom | Mapping[str, Any]) -> TrainedFrom:
        """The typed training record of a manifest's ``model.training``."""
        if isinstance(record, TrainedFrom):
            return record
        known_keys(cls, record, "model.training")
        return cls(**record)


@dataclass(frozen=True)
class ModelRecord:
    """The model a run mined with: ``manifest.model``.

    Attributes:
        spec: ``--model`` as given.
        id: The model's id (a hub name, or the folder's).
        revision: Its revision, where it has one.
        prefix: The prefix put before every text.
        training: Where paramine trained the model: what it learned from.
    """

    spec: str | None = None
    id: str | None = None
    revision: str | None = None
    prefix: str | None = None
    training: TrainedFrom | None = None

    def to_json(self) -> dict[str, Any]:
        """The record: spec, id, revision and prefix always, training where there is one."""
        record = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "training"}
        if self.training is not None:
            record["training"] = self.training.to_json()
        return record

    @classmethod
    def read(cls, record: ModelRecord | Mapping[str, Any]) -> ModelRecord:
        """The typed model record of a manifest's ``model``.

        Raises:
            DatasetError: A key this code does not know.
        """
        if isinstance(record, ModelRecord):
            return record
        known_keys(cls, record, "model")
        training = record.get("training")
        return cls(
            **{**record, "training": None if training is None else TrainedFrom.read(training)}
        )


@dataclass(frozen=True)
class FileRecord:
    """One input file as a run fingerprinted it (``pipelines/run/input_fingerprint.py``).

    Attributes:
        url: The file (any fsspec URL).
        size: Its size in bytes.
        mtime: Its modification time, where the store gives one.
        checksum: Its etag or hash, where the store gives one.
    """

    url: str
    size: int = 0
    mtime: str | None = None
    checksum: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The fingerprint: url and size, mtime and checksum where known."""
        return present(self)

    @classmethod
    def read(cls, record: FileRecord | Mapping[str, Any]) -> FileRecord:
        """The typed fingerprint of a shard's file."""
        if isinstance(record, FileRecord):
            return record
        known_keys(cls, record, "inputs.files")
        return cls(**{**record, "size": int(record.get("size") or 0)})


@dataclass(frozen=True)
class InputRecord:
    """One shard a run read: ``manifest.inputs[i]``.

    ``paramine mine`` records its languages, ``paramine refresh`` its url (the
    key it retracts the shard's rows by); either leaves the other out.

    Attributes:
        files: Every file it read, fingerprinted.
        format: The reader (``moses``, ``tsv``, ...).
        corpus: The corpus name recorded in its pairs.
        pivot_lang: The pivot side's language.
        lang: The candidate side's language.
        url: The shard's first file.
    """

    files: tuple[FileRecord, ...] = ()
    format: str | None = None
    corpus: str | None = None
    pivot_lang: str | None = None
    lang: str | None = None
    url: str | None = None

    @property
    def size(self) -> int:
        """Bytes in its files."""
        return sum(f.size for f in self.files)

    def to_json(self) -> dict[str, Any]:
        """The shard's record: its files, and each fact the run recorded."""
        return {**present(self), "files": [f.to_json() for f in self.files]}

    @classmethod
    def read(cls, record: InputRecord | Mapping[str, Any]) -> InputRecord:
        """The typed record of one of a manifest's ``inputs``."""
        if isinstance(record, InputRecord):
            return record
        known_keys(cls, record, "inputs")
        files = tuple(FileRecord.read(f) for f in record.get("files", ()))
        return cls(**{**record, "files": files})


@dataclass(frozen=True)
class RunExtra:
    """A run's facts that are not settings: ``manifest.extra``; ``None``: not recorded.

    Attributes:
        unchecked_languages: Per check, the languages of the inputs it could not judge.
        filters: The settings the prefilter applied, its profile's defaults filled in.
        runner: The Beam runner that ran the job.
        encoding: Texts encoded, per input pair (``run/encoding_figures``).
        line_checks: What the per-line checks decided of each side (``Manifest.line_checks``
            reads it typed).
        eval_exclusion: The evaluation sentences kept out of the pairs.
        adapt: The rounds of the ``paramine adapt`` loop whose last pass this is.
        refresh: A refresh's run: what it mined and retracted.
    """

    unchecked_languages: dict[str, list[str]] | None = None
    filters: dict[str, Any] | None = None
    runner: str | None = None
    encoding: dict[str, Any] | None = None
    line_checks: dict[str, Any] | None = None
    eval_exclusion: dict[str, Any] | None = None
    adapt: dict[str, Any] | None = None
    refresh: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The facts the run recorded."""
        return present(self)

    def with_facts(self, **facts: Any) -> RunExtra:
        """These facts added (or replaced)."""
        return replace(self, **facts)

    @classmethod
    def read(cls, record: RunExtra | Mapping[str, Any]) -> RunExtra:
        """The typed facts of a manifest's ``extra``.

        Raises:
            DatasetError: A key this code does not know.
        """
        if isinstance(record, RunExtra):
            return record
        known_keys(cls, record, "extra")
        return cls(**record)
