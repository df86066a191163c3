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

import os
from dataclasses import dataclass, field

from paramine.encoders.models.folder_check import check_local_folder
from paramine.encoders.training.model_card import training_record
from paramine.pipelines.formats import Shard, resolve_inputs
from paramine.pipelines.run.eval_exclusion import exclusion_keys
from paramine.pipelines.run.input_fingerprint import fingerprint
from paramine.pipelines.run.output import DatasetOutput
from paramine.pipelines.settings.mining import MiningSettings
from paramine.pipelines.settings.running import RunSettings
from paramine.schemas.errors import InputError, ModelError, ParamineError, UsageError
from paramine.schemas.run_parts import FileRecord, InputRecord, ModelRecord


@dataclass(frozen=True)
class CheckedRun:
    """What the checks found: the shards to read and the manifest's records of them."""

    shards: list[Shard]
    input_records: list[InputRecord]
    model_record: ModelRecord
    output: DatasetOutput
    #: Normalized evaluation sentences no written pair may hold (run/eval_exclusion.py).
    excluded: frozenset[str] = frozenset()
    #: Per check, the declared languages it cannot judge (``unchecked_languages``).
    unchecked: dict[str, list[str]] = field(default_factory=dict)


def check_inputs(
    settings: MiningSettings, running: RunSettings
) -> tuple[list[Shard], list[InputRecord]]:
    """Resolve the inputs into shards and fingerprint every file.

    Raises:
        InputError: An input matches nothing, cannot be read, or cannot be paired.
    """
    try:
        shards = resolve_inputs(
            list(running.inputs),
            settings.src_lang,
            settings.tgt_lang,
            settings.input_format,
            running.corpus,
        )
        records = [
            InputRecord(
                format=s.format,
                corpus=s.corpus,
                pivot_lang=s.pivot_lang,
                lang=s.lang,
                files=tuple(FileRecord.read(fingerprint(f)) for f in s.files),
            )
            for s in shards
        ]
    except ParamineError:
        raise
    except (ValueError, OSError) as error:
        raise InputError(str(error)) from None
    return shards, records


def check_model(config: MiningSettings) -> ModelRecord:
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
    check_local_folder(model, config.model)
    return ModelRecord(
        spec=config.model,
        id=model.model_id,
        revision=model.revision,
        prefix=config.prefix if config.prefix is not None else model.prefix,
        # A model paramine trained: the dataset it learned from (the first pass
        # of a mine -> train -> mine loop) and how (docs/training.md).
        training=training_record(model.path) if os.path.isdir(model.path) else None,
    )


def unchecked_languages(settings: MiningSettings, shards: list[Shard]) -> dict[str, list[str]]:
    """Per check (``language``, ``script``, ``sentence_count``), the languages it cannot judge.

    The lines of those languages are kept and counted as unchecked; a run
    says so before it starts. Languages declared only by the records (a
    Tatoeba TSV with ``--src-lang auto``) are counted as they come.
    """
    from paramine.pipelines.stages.filter.rules.detectors import language_detector
    from paramine.pipelines.stages.filter.rules.pair_judge import unchecked_keys

    options = settings.prefilter_options
    detector = None
    if options.language_ratio is not None:
        detector = language_detector(options.language_id, options.language_ratio)
    declared = sorted({lang for s in shards for lang in (s.pivot_lang, s.lang)} - {"", "auto"})
    found: dict[str, list[str]] = {}
    for lang in declared:
        for key in unchecked_keys(options, detector, lang):
            check, _, code = key.partition("_unchecked.")
            if code not in found.setdefault(check, []):
                found[check].append(code)
    return found


def unchecked_warning(unchecked: dict[str, list[str]]) -> str | None:
    """The line a run prints before it starts about what its checks cannot judge.

    ``language``: no detector knows the language (``tok``), or the detector
    knows it only in another script than some it is written in (``tt-Latn``);
    ``script``: no table knows the language's scripts, so the run learns them
    from its own lines; ``sentence_count``: no punkt model.
    """
    if not unchecked:
        return None
    parts = []
    language = unchecked.get("language", [])
    whole = [code for code in language if "-" not in code]
    scripts = [code for code in language if "-" in code]
    if whole:
        parts.append(f"the language check cannot judge {', '.join(whole)} (no detector knows it)")
    if scripts:
        by_language: dict[str, list[str]] = {}
        for code in scripts:
            lang, _, script = code.partition("-")
            by_language.setdefault(lang, []).append(script)
        shown = ", ".join(
            f"{lang} lines in {' or '.join(found)}" for lang, found in by_language.items()
        )
        lead = "nor" if whole else "the language check cannot judge"
        parts.append(f"{lead} {shown} (the detector knows the language in another script)")
    if unchecked.get("script"):
        parts.append(
            f"no table knows the scripts of {', '.join(unchecked['script'])}: they are learned "
            "from the run's own lines"
        )
    for check, codes in unchecked.items():
        if check not in ("language", "script"):
            parts.append(f"the {check.replace('_', ' ')} check cannot judge {', '.join(codes)}")
    return (
        "paramine: warning: "
        + "; ".join(parts)
        + ". Lines a check cannot judge are kept, and counted as <check>_unchecked in the "
        "manifest and the report"
    )


def registry_warning(settings: MiningSettings) -> str | None:
    """The line a run prints when a language it declares is not in the installed registry."""
    from paramine.schemas.languages import registered

    typed = [settings.tgt_lang, *(p for p in settings.src_lang.split(",") if p != "auto")]
    missing = [code for code in typed if not registered(code)]
    if not missing:
        return None
    return (
        f"paramine: warning: {', '.join(missing)} is not in the installed language registry "
        "(langcodes): taken as an ISO 639-3 code as written; its files are found by that code "
        "alone, and what the checks know of it is said below or in the report"
    )


def warnings_before_reading(settings: MiningSettings, unchecked: dict[str, list[str]]) -> list[str]:
    """The lines ``paramine mine`` and ``paramine refresh`` print before they read a line.

    A declared code the installed registry lacks, and what the per-line
    checks cannot judge (``unchecked_languages``); none when all is known.
    """
    return [w for w in (registry_warning(settings), unchecked_warning(unchecked)) if w]


def check_run(settings: MiningSettings, running: RunSettings) -> CheckedRun:
    """Every check of a run that can be made before the pipeline is built.

    Raises:
        ParamineError: The first check that fails, with what to do.
    """
    shards, input_records = check_inputs(settings, running)
    if running.output is None:
        raise UsageError("--output is required")
    # The output before the model: its check takes milliseconds and leaves
    # nothing behind (the dataset is built beside it and swapped in only when
    # complete), while the model's may first materialize the default model
    # (18 s the first time): a wrong --output is said at once.
    output = DatasetOutput.prepare(running.output, running.overwrite)
    excluded = exclusion_keys(settings)
    model_record = check_model(settings)
    unchecked = unchecked_languages(settings, shards)
    return CheckedRun(shards, input_records, model_record, output, excluded, unchecked)
