"""Checks a mining run before anything is built, launched or written.

A job that will fail should fail in the first second, with one line that
says why, not after an hour on a cluster or with half a dataset written.
``check_run`` resolves the inputs into shards and fingerprints them, resolves
the model and reads its folder (every JSON file, the module classes it
names, then its config and tokenizer, not its weights; not the offline
default's folder, which paramine built itself), and checks the output
(``DatasetOutput``); what it learns is recorded in the manifest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paramine.encoders.models.module_classes import trusted_class_ref
from paramine.pipelines.formats import Shard, resolve_inputs
from paramine.pipelines.run.config import MineConfig
from paramine.pipelines.run.eval_exclusion import exclusion_keys
from paramine.pipelines.run.input_fingerprint import fingerprint
from paramine.pipelines.run.output import DatasetOutput
from paramine.schemas.errors import InputError, ModelError, ParamineError


@dataclass(frozen=True)
class CheckedRun:
    """What the checks found: the shards to read and the manifest's records of them."""

    shards: list[Shard]
    input_records: list[dict[str, Any]]
    model_record: dict[str, Any]
    output: DatasetOutput
    #: Normalized evaluation sentences no written pair may hold (run/eval_exclusion.py).
    excluded: frozenset[str] = frozenset()


def check_inputs(config: MineConfig) -> tuple[list[Shard], list[dict[str, Any]]]:
    """Resolve the inputs into shards and fingerprint every file.

    Raises:
        InputError: An input matches nothing, cannot be read, or cannot be paired.
    """
    try:
        shards = resolve_inputs(
            list(config.inputs),
            config.src_lang,
            config.tgt_lang,
            config.input_format,
            config.corpus,
        )
        records = [
            {
                "format": s.format,
                "corpus": s.corpus,
                "pivot_lang": s.pivot_lang,
                "lang": s.lang,
                "files": [fingerprint(f) for f in s.files],
            }
            for s in shards
        ]
    except ParamineError:
        raise
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from None
    return shards, records


def check_model(config: MineConfig) -> dict[str, Any]:
    """Resolve ``--model`` into a loadable folder (building the offline default if needed).

    Raises:
        ModelError: The value names nothing loadable here, or a folder whose
            files are damaged (``check_model_folder``).
    """
    from paramine.encoders.models.resolve import resolve_model

    try:
        model = resolve_model(config.model)
    except ParamineError:
        raise
    except (ValueError, OSError) as error:
        raise ModelError(str(error)) from None
    # A hub model not yet downloaded is read by the workers; the offline
    # default was built and marked complete by paramine (reading its 17 MB
    # tokenizer.json again would cost two seconds a run).
    if Path(model.path).is_dir() and not model.built_here:
        check_model_folder(model.path, config.model)
    return {
        "spec": config.model,
        "id": model.model_id,
        "revision": model.revision,
        "prefix": config.prefix if config.prefix is not None else model.prefix,
    }


#: Module types whose folder holds a Hugging Face model and its tokenizer.
_TRANSFORMER_TYPES = ("Transformer",)
_DAMAGED = (
    "the model folder is damaged: save or download the model again, or choose another --model"
)


def check_model_folder(path: str, spec: str) -> None:
    """Read a local sentence-transformers (or transformers) folder the way a worker will.

    Every JSON file of the folder and of its modules' folders must parse, and
    each Transformer module's config and tokenizer must load with
    transformers' Auto classes (seconds; the weights are not read). A folder
    of damaged files would otherwise pass the checks and fail inside a Beam
    worker, after the run had started.

    Args:
        path: The resolved local folder.
        spec: ``--model`` as given, for the message.

    Raises:
        ModelError: Naming the file that cannot be read, and what to do.
    """
    folder = Path(path)
    if not (folder / "modules.json").is_file():
        module_dirs, transformer_dirs = [folder], [folder]  # a plain transformers folder
    else:
        modules = _read_json(folder / "modules.json", spec)
        if not isinstance(modules, list) or not all(
            isinstance(m, dict) and isinstance(m.get("path"), str) for m in modules
        ):
            raise ModelError(
                f"--model {spec}: {folder / 'modules.json'} is not a sentence-transformers "
                f"module list (a JSON list of objects with a path); {_DAMAGED}"
            )
        for module in modules:
            try:
                trusted_class_ref(str(module.get("type", "")))
            except ValueError as error:
                raise ModelError(f"--model {spec}: {folder / 'modules.json'} {error}") from None
        module_dirs = [folder / m["path"] for m in modules]
        transformer_dirs = [
            folder / m["path"]
            for m in modules
            if str(m.get("type", "")).rsplit(".", 1)[-1] in _TRANSFORMER_TYPES
        ]
    for module_dir in dict.fromkeys([folder, *module_dirs]):
        if not module_dir.is_dir():
            raise ModelError(f"--model {spec}: module folder {module_dir} is missing; {_DAMAGED}")
        for name in sorted(module_dir.glob("*.json")):
            _read_json(name, spec)
    for transformer_dir in transformer_dirs:
        _load_config_and_tokenizer(transformer_dir, spec)


def _read_json(path: Path, spec: str) -> Any:
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as error:
        reason = f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset {error.start})"
    except json.JSONDecodeError as error:
        reason = f"not valid JSON ({error.msg} at line {error.lineno}, column {error.colno})"
    except OSError as error:
        reason = f"cannot be read ({error.strerror or type(error).__name__})"
    raise ModelError(f"--model {spec}: {path} is {reason}; {_DAMAGED}")


def _load_config_and_tokenizer(folder: Path, spec: str) -> None:
    """Load the config and tokenizer as a worker will: never with the model's own code.

    A folder whose settings ask for ``trust_remote_code`` is checked like any
    other: sentence-transformers drops that flag from a folder's settings,
    and paramine never passes it.
    """
    from transformers import AutoConfig, AutoTokenizer

    for what, loader in (("config", AutoConfig), ("tokenizer", AutoTokenizer)):
        try:
            loader.from_pretrained(str(folder), local_files_only=True)
        except Exception as error:  # the loaders raise OSError, ValueError, tokenizers' own
            if "trust_remote_code" in str(error):
                raise ModelError(
                    f"--model {spec}: the {what} in {folder} needs code that comes with the "
                    "model (trust_remote_code), which paramine never runs; choose a model "
                    "that transformers' own classes load"
                ) from None
            text = str(error).strip()
            reason = text.splitlines()[0] if text else type(error).__name__
            if isinstance(error, KeyError):  # its text is the bare key
                reason = f"no {reason} in its files"
            raise ModelError(
                f"--model {spec}: the {what} in {folder} does not load ({reason}); {_DAMAGED}"
            ) from error


def check_run(config: MineConfig) -> CheckedRun:
    """Every check of a run that can be made before the pipeline is built.

    Raises:
        ParamineError: The first check that fails, with what to do.
    """
    shards, input_records = check_inputs(config)
    excluded = exclusion_keys(config)
    model_record = check_model(config)
    assert config.output is not None  # run_config refuses a config without one
    # The output last: its check leaves nothing behind, and the dataset is
    # built beside it and swapped in only when complete.
    output = DatasetOutput.prepare(config.output, config.overwrite)
    return CheckedRun(shards, input_records, model_record, output, excluded)
