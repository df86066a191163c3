"""Model folder checks: read a folder the way a worker will load it, before anything runs.

A folder of damaged files, or one that names a module class or a setting
the installed sentence-transformers does not take, would otherwise pass
resolution and fail inside a Beam worker (a traceback of 184 lines) or in
the middle of an evaluation. ``check_model_folder`` reads every JSON file,
the module classes, each module's settings, then the config and tokenizer,
and the header of every safetensors file against the file's size (not the
weights themselves): seconds, once, on the launcher.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from paramine.encoders.models.module_classes import trusted_class_ref
from paramine.encoders.models.registry import ResolvedModel
from paramine.schemas.errors import ModelError

#: Module types whose folder holds a Hugging Face model and its tokenizer.
_TRANSFORMER_TYPES = ("Transformer",)
_DAMAGED = (
    "the model folder is damaged: save or download the model again, or choose another --model"
)


def check_local_folder(model: ResolvedModel, spec: str, flag: str = "--model") -> None:
    """``check_model_folder`` for a resolved model whose folder is here and not built by paramine.

    A hub model not yet downloaded is read where it is loaded; the offline
    default was built and marked complete by paramine (reading its 17 MB
    tokenizer.json again would cost two seconds a run).
    """
    if Path(model.path).is_dir() and not model.built_here:
        check_model_folder(model.path, spec, flag)


def check_model_folder(path: str, spec: str, flag: str = "--model") -> None:
    """Read a local sentence-transformers (or transformers) folder the way a worker will.

    Every JSON file of the folder and of its modules' folders must parse, and
    each Transformer module's config and tokenizer must load with
    transformers' Auto classes (seconds; the weights are not read). A folder
    of damaged files would otherwise pass the checks and fail inside a Beam
    worker, after the run had started.

    Args:
        path: The resolved local folder.
        spec: The model as the user named it, for the message.
        flag: The option (or argument) that named it.

    Raises:
        ModelError: Naming the file that cannot be read, and what to do.
    """
    folder = Path(path)
    if not (folder / "modules.json").is_file():
        module_dirs, transformer_dirs = [folder], [folder]  # a plain transformers folder
    else:
        modules = _read_json(folder / "modules.json", spec, flag)
        if not isinstance(modules, list) or not all(
            isinstance(m, dict) and isinstance(m.get("path"), str) for m in modules
        ):
            raise ModelError(
                f"{flag} {spec}: {folder / 'modules.json'} is not a sentence-transformers "
                f"module list (a JSON list of objects with a path); {_DAMAGED}"
            )
        for module in modules:
            try:
                trusted_class_ref(str(module.get("type", "")))
            except ValueError as error:
                raise ModelError(f"{flag} {spec}: {folder / 'modules.json'} {error}") from None
        module_dirs = [folder / m["path"] for m in modules]
        transformer_dirs = [
            folder / m["path"]
            for m in modules
            if str(m.get("type", "")).rsplit(".", 1)[-1] in _TRANSFORMER_TYPES
        ]
    for module_dir in dict.fromkeys([folder, *module_dirs]):
        if not module_dir.is_dir():
            raise ModelError(f"{flag} {spec}: module folder {module_dir} is missing; {_DAMAGED}")
        for name in sorted(module_dir.glob("*.json")):
            _read_json(name, spec, flag)
    # The weights' sizes before the checks that import the modules' classes
    # (sentence-transformers, transformers: 8 CPU-s of imports): a copy cut
    # short, the likeliest damage, is said at once.
    for module_dir in dict.fromkeys([folder, *module_dirs]):
        for weights in sorted(module_dir.glob("*.safetensors")):
            _check_safetensors(weights, spec, flag)
    if (folder / "modules.json").is_file():  # every settings file parses: now their keys
        check_module_settings(str(folder), spec, flag)
    for transformer_dir in transformer_dirs:
        _load_config_and_tokenizer(transformer_dir, spec, flag)


def _check_safetensors(path: Path, spec: str, flag: str) -> None:
    """A safetensors file whole: its header parses and the file holds every tensor it lists.

    The format is an 8-byte little-endian header length, a JSON header that
    gives each tensor's byte range, then the data: a file cut short (a copy
    or download stopped half way) is shorter than its last range's end.
    Reads the header only, not the weights.
    """
    import struct

    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(8)
            length = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
            header = json.loads(f.read(length)) if 0 < length <= size - 8 else None
    except (OSError, ValueError) as error:
        reason = f"its header does not read ({error})"
    else:
        if not isinstance(header, dict):
            reason = f"its header is cut short or not a safetensors header ({size:,} bytes)"
        else:
            ends = [
                int(t["data_offsets"][1])
                for name, t in header.items()
                if name != "__metadata__" and isinstance(t, dict) and "data_offsets" in t
            ]
            needed = 8 + length + max(ends, default=0)
            if size >= needed:
                return
            reason = f"{size:,} bytes where its header lists tensors up to byte {needed:,}"
    raise ModelError(f"{flag} {spec}: {path} is cut short or damaged ({reason}); {_DAMAGED}")


def _read_json(path: Path, spec: str, flag: str) -> Any:
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as error:
        reason = f"not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset {error.start})"
    except json.JSONDecodeError as error:
        reason = f"not valid JSON ({error.msg} at line {error.lineno}, column {error.colno})"
    except OSError as error:
        reason = f"cannot be read ({error.strerror or type(error).__name__})"
    raise ModelError(f"{flag} {spec}: {path} is {reason}; {_DAMAGED}")


def _load_config_and_tokenizer(folder: Path, spec: str, flag: str) -> None:
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
                    f"{flag} {spec}: the {what} in {folder} needs code that comes with the "
                    "model (trust_remote_code), which paramine never runs; choose a model "
                    "that transformers' own classes load"
                ) from None
            text = str(error).strip()
            reason = text.splitlines()[0] if text else type(error).__name__
            if isinstance(error, KeyError):  # its text is the bare key
                reason = f"no {reason} in its files"
            raise ModelError(
                f"{flag} {spec}: the {what} in {folder} does not load ({reason}); {_DAMAGED}"
            ) from error


#: Names of a module's settings that older sentence-transformers releases wrote,
#: and what its loader reads them as (``Transformer._load_init_kwargs``).
_RENAMED_SETTINGS = {
    "model_args": "model_kwargs",
    "tokenizer_args": "processor_kwargs",
    "config_args": "config_kwargs",
}


def _module_class(class_ref: str) -> Any:
    import importlib

    module_name, _, name = class_ref.rpartition(".")
    return getattr(importlib.import_module(module_name), name)


def check_module_settings(path: str, spec: str, flag: str = "--model") -> None:
    """Every module's settings file holds only settings its class takes.

    A module is built from its folder's settings (``sentence_bert_config.json``
    for a Transformer, ``config.json`` for the others) passed to its class as
    keyword arguments: a key the class does not take (``trust_remote_code``
    in a Transformer's, from another library's save) fails the load with a
    ``TypeError``. The settings are read with the class's own ``load_config``
    and held against its signature; nothing is built.

    Raises:
        ModelError: Naming the module's settings file, the keys, and what to do.
    """
    folder = Path(path)
    modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    for module in modules:
        cls = _module_class(trusted_class_ref(str(module.get("type", ""))))
        load_config = getattr(cls, "load_config", None)
        if load_config is None:  # a module that reads its folder its own way
            continue
        module_dir = str(folder / module["path"])
        settings = {_RENAMED_SETTINGS.get(k, k): v for k, v in load_config(module_dir).items()}
        taken = inspect.signature(cls.__init__).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in taken.values()):
            continue
        unknown = sorted(set(settings) - set(taken) - {"self"})
        if unknown:
            holder = next(
                (
                    name
                    for name in sorted(Path(module_dir).glob("*.json"))
                    if unknown[0] in _read_json(name, spec, flag)
                ),
                Path(module_dir),
            )
            raise ModelError(
                f"{flag} {spec}: {holder}, the settings of its {cls.__name__} module, holds "
                f"{', '.join(unknown)}, which the installed "
                f"sentence-transformers' {cls.__name__} does not take; remove "
                f"{'them' if len(unknown) > 1 else 'it'} from the module's settings file, or "
                "save the model again with this sentence-transformers"
            )
