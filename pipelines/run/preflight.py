"""Checks a mining run before anything is built, launched or written.

A job that will fail should fail in the first second, with one line that
says why, not after an hour on a cluster or with half a dataset written.
``check_run`` resolves the inputs into shards and fingerprints them, resolves
the model, and checks the output (``DatasetOutput``); what it learns is
recorded in the manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paramine.pipelines.formats import Shard, resolve_inputs
from paramine.pipelines.run.config import MineConfig
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
            {"format": s.format, "corpus": s.corpus, "files": [fingerprint(f) for f in s.files]}
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
        ModelError: The value names nothing loadable here.
    """
    from paramine.encoders.models import resolve_model

    try:
        model = resolve_model(config.model)
    except ParamineError:
        raise
    except (ValueError, OSError) as error:
        raise ModelError(str(error)) from None
    return {
        "spec": config.model,
        "id": model.model_id,
        "revision": model.revision,
        "prefix": config.prefix if config.prefix is not None else model.prefix,
    }


def check_run(config: MineConfig) -> CheckedRun:
    """Every check of a run that can be made before the pipeline is built.

    Raises:
        ParamineError: The first check that fails, with what to do.
    """
    shards, input_records = check_inputs(config)
    model_record = check_model(config)
    assert config.output is not None  # run_config refuses a config without one
    # The output last: its check leaves nothing behind, and the dataset is
    # built beside it and swapped in only when complete.
    output = DatasetOutput.prepare(config.output, config.overwrite)
    return CheckedRun(shards, input_records, model_record, output)
