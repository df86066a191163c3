"""paramine's prefilter beside OpusFilter's filters on one Moses pair: time, memory, pairs kept.

Both tools read the same two files (a Moses pair: one sentence a line, a
file per language) and write the pairs they keep; each runs in a process of
its own (``measure.run_measured``).

**OpusFilter** (``opusfilter CONFIG``, one process, as a user runs it) with
the filters closest to paramine's prefilter defaults (the curated profile,
docs/filters.md), in three steps:

1. ``preprocess``: ``WhitespaceNormalizer`` (paramine normalizes NFKC and
   whitespace; OpusFilter has no Unicode normalizer);
2. ``remove_duplicates``: exact duplicate pairs (xxhash of both sides), as
   paramine's ``duplicate_pair``. Before the filters: every filter is a pure
   function of the pair, so the order keeps the same pairs, and 43% of the
   synthetic pairs are duplicates that need not be filtered;
3. ``filter``, cheap filters first as paramine orders its rules (OpusFilter
   stops at the first filter that rejects a pair):

   - empty, too_short, too_long (1-80 words): ``LengthFilter`` 1-80, unit
     word. OpusFilter counts every whitespace token; paramine
     (``stages.filter.rules.words.length``) the tokens that hold a letter or digit, and
     in scripts written without spaces (Han, kana, Thai...) a weight a
     character. The figures of benchmarks/results/peers.md were measured
     before that rule (issue 44), when paramine counted NLTK Treebank tokens.
   - length_ratio, (longer + 1) / (shorter + 1) > 2.5: ``LengthRatioFilter``
     2.5, unit word. OpusFilter drops longer / shorter >= 2.5, with no +1
     (1 word against 3 is 3.0 there, 2.0 in paramine).
   - untranslated, equal comparison keys: ``SimilarityFilter`` threshold 1.0,
     lowercased. OpusFilter: equal after lowercasing; paramine also ignores
     punctuation and spaces.
   - urls: ``RegExpFilter`` with paramine's own pattern (OpusFilter has no
     URL filter; its generic one runs paramine's pattern).
   - markup: ``HtmlTagFilter``. BeautifulSoup finds tags only, not entities
     (``&amp;``) or subtitle override blocks (``{\\an8}``).
   - few_letters, letters < 0.5 of the non-space characters:
     ``AlphabetRatioFilter`` 0.5, whitespace excluded. The same rule.
   - wrong_script, letters in the language's scripts < 0.8:
     ``CharacterScoreFilter`` 0.8 a side, with the language's ISO 15924
     script (``Latn``; OpusFilter's ``regex`` pattern takes the code). The
     same rule where a language has one primary script (paramine also
     passes CLDR's secondary ones, Deseret for English); OpusFilter takes
     one script a side, so a language of several (Japanese, Serbian) or
     none is not checked there (threshold 0).
   - wrong_language_*, py3langid, p(declared) >= 0.3 x p(top):
     ``LangidFilter`` (py3langid), restricted to paramine's labels.
     OpusFilter keeps a line only when the declared language is the top one:
     no ratio rule.

   No OpusFilter match: NFKC; the ratio language rule; the folds of
   Serbo-Croatian and Norwegian; ``--sentence-count-filter`` (off by
   default). OpusFilter filters with no paramine match: ``LongWordFilter``,
   ``AverageWordLengthFilter``, ``TerminalPunctuationFilter``,
   ``LongestCommonSubstringFilter``, near-copy ``SimilarityFilter``, language
   models, word alignment, sentence embeddings (LASER), classifiers, and
   duplicates ignoring case or non-letters. Its ``NonZeroNumeralsFilter`` and
   ``RepetitionFilter`` are close to paramine's ``numbers`` and ``repeats``
   rules, which only the subtitles and web profiles apply.

**paramine** in two forms:

- *job*: a Beam pipeline of paramine's own transforms, ``ReadBitext`` then
  ``Prefilter`` (normalize, the rules, the language check, the duplicate
  search), its kept pairs written as text, on the in-process FnApiRunner
  (``paramine mine``'s default runner) with ``paramine mine``'s collector
  settings: the whole job, as OpusFilter's run is one;
- *loop*: bench_floor's plain loop of the same code with no runner
  (``lib/pair_loop.py``: the TSV reader, the prefilter's DoFn in its
  batches, the duplicate search in a dict): the floor under the job, no
  output written.

A whole ``paramine mine`` also groups, encodes and pairs, which OpusFilter
does not; docs/results.md has its figures (bench_scale).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from paramine.pipelines.core.text import normalize
from paramine.pipelines.stages.filter.rules.junk import URL
from paramine.pipelines.stages.filter.rules.scripts import known_scripts

from benchmarks.quality.peers.env import PeersEnv
from benchmarks.quality.peers.measure import run_measured

HERE = Path(__file__).resolve().parent


# ----------------------------------------------------------------- inputs


def write_synthetic_moses(workdir: Path, n: int, seed: int) -> tuple[Path, dict]:
    """bench_scale's synthetic pairs (``synthetic.Bitext``) as a Moses pair; its prefix and shape.

    The same generator, size and seed as bench_scale's TSV, so the same pairs
    in the same order; written once per size and seed.
    """
    from benchmarks.lib.sizes import label
    from benchmarks.lib.synthetic import write_tsv

    prefix = workdir / f"subtitles-{label(n)}-seed{seed}"
    shape_path = prefix.with_suffix(".shape.json")
    if prefix.with_suffix(".en").exists() and shape_path.exists():
        return prefix, json.loads(shape_path.read_text())
    tsv = prefix.with_suffix(".tsv")
    shape = write_tsv(tsv, n, seed)
    with (
        tsv.open(encoding="utf-8") as lines,
        prefix.with_suffix(".en").open("w", encoding="utf-8") as en,
        prefix.with_suffix(".pl").open("w", encoding="utf-8") as pl,
    ):
        for line in lines:
            pivot, _, candidate = line.rstrip("\n").partition("\t")
            en.write(pivot + "\n")
            pl.write(candidate + "\n")
    tsv.unlink()
    shape_path.write_text(json.dumps(shape))
    return prefix, shape


def sample_moses(source: Path, suffixes: tuple[str, str], dest: Path, lines: int | None) -> Path:
    """The Moses pair ``source``; with ``lines``, its first lines copied to ``dest`` instead."""
    if lines is None:
        return source
    dest.parent.mkdir(parents=True, exist_ok=True)
    for suffix in suffixes:
        with (
            Path(f"{source}.{suffix}").open(encoding="utf-8") as whole,
            Path(f"{dest}.{suffix}").open("w", encoding="utf-8") as part,
        ):
            for i, line in enumerate(whole):
                if i == lines:
                    break
                part.write(line)
    return dest


# -------------------------------------------------------------- OpusFilter


def detector_labels(langs: tuple[str, str]) -> list[str]:
    """The labels paramine's language check restricts py3langid to for these languages."""
    from paramine.pipelines.stages.filter.rules.language_id import LanguageCheck

    check = LanguageCheck(langs)
    check._load()  # the labels are known once the detector is restricted
    return sorted(check._labels)


def _one_script(lang: str) -> str | None:
    """The language's one primary ISO 15924 script, where CLDR lists only one (English: Latn).

    CLDR's secondary scripts (Deseret for English) pass paramine's rule too;
    OpusFilter's filter takes one script a side, so they are left out there.
    """
    known = known_scripts(lang)
    return next(iter(known.primary)) if known is not None and len(known.primary) == 1 else None


def peer_langid_labels(env: PeersEnv) -> frozenset[str]:
    """The labels the peers' own py3langid knows (0.3.0: 97 languages; paramine's 0.4.0: 140).

    OpusFilter's ``LangidFilter`` refuses a label its py3langid lacks
    ("Unknown language code bcl"), so its configuration names only these.
    """
    import subprocess

    script = (
        "from py3langid.langid import MODEL_FILE, LanguageIdentifier\n"
        "print(' '.join(LanguageIdentifier.from_pickled_model(MODEL_FILE).nb_classes))"
    )
    done = subprocess.run(
        [str(env.python), "-c", script], capture_output=True, text=True, check=True
    )
    return frozenset(done.stdout.split())


def opusfilter_config(
    prefix: Path,
    suffixes: tuple[str, str],
    langs: tuple[str, str],
    outdir: Path,
    known: frozenset[str] | None = None,
) -> dict[str, Any]:
    """OpusFilter's configuration closest to paramine's prefilter defaults (the module's table).

    ``known``: the labels OpusFilter's py3langid knows (``peer_langid_labels``);
    its language filter is restricted to paramine's labels among them.
    """
    from paramine.pipelines.settings.mining import MiningSettings

    options = MiningSettings(src_lang=langs[0], tgt_lang=langs[1]).prefilter_options
    filters: list[dict[str, Any]] = [
        {"LengthFilter": {"min_length": options.min_words, "max_length": options.max_words,
                          "unit": "word"}},
        {"LengthRatioFilter": {"threshold": options.max_length_ratio, "unit": "word"}},
        {"SimilarityFilter": {"threshold": 1.0, "lowercase": True}},
    ]  # fmt: skip
    rules = set(options.junk_rules)
    if "urls" in rules:
        # The regex module's search, as OpusFilter calls it; (?i) for re.IGNORECASE.
        filters.append({"RegExpFilter": {"regexps": "(?i)" + URL.pattern}})
    if "markup" in rules:
        filters.append({"HtmlTagFilter": {}})
    if "letters" in rules:
        share = options.limits.min_letter_share
        filters.append({"AlphabetRatioFilter": {"threshold": share, "exclude_whitespace": True}})
    # One script a side is all OpusFilter's filter takes: a language of
    # several scripts, or of none known, passes there (threshold 0).
    scripts = [_one_script(lang) for lang in langs]
    if "script" in rules and any(scripts):
        share = options.limits.min_script_share
        filters.append(
            {
                "CharacterScoreFilter": {
                    "scripts": [s or "Latn" for s in scripts],
                    "thresholds": [share if s else 0.0 for s in scripts],
                }
            }
        )
    if options.language_ratio is not None:
        labels = [label for label in detector_labels(langs) if known is None or label in known]
        filters.append({"LangidFilter": {"languages": list(langs), "langid_languages": labels}})
    sources = [str(Path(f"{prefix}.{s}")) for s in suffixes]
    return {
        "common": {"output_directory": str(outdir)},
        "steps": [
            {
                "type": "preprocess",
                "parameters": {
                    "inputs": sources,
                    "outputs": ["norm.src", "norm.tgt"],
                    "preprocessors": [{"WhitespaceNormalizer": {}}],
                },
            },
            {
                "type": "remove_duplicates",
                "parameters": {"inputs": ["norm.src", "norm.tgt"], "outputs": ["dedup.src",
                                                                             "dedup.tgt"]},
            },
            {
                "type": "filter",
                "parameters": {
                    "inputs": ["dedup.src", "dedup.tgt"],
                    "outputs": ["kept.src", "kept.tgt"],
                    "filters": filters,
                },
            },
        ],
    }  # fmt: skip


def count_lines(path: Path) -> int:
    """Lines of a text file."""
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def run_opusfilter(
    env: PeersEnv, prefix: Path, suffixes: tuple[str, str], langs: tuple[str, str], workdir: Path,
    timeout: float, profile: bool = True,
) -> dict[str, Any]:  # fmt: skip
    """``opusfilter CONFIG`` on the pair, measured; then, with ``profile``, each filter timed."""
    import shutil

    outdir = workdir / "opusfilter"
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    config = opusfilter_config(prefix, suffixes, langs, outdir, peer_langid_labels(env))
    # JSON is YAML: OpusFilter's loader reads it, and paramine's venv needs no YAML writer.
    config_path = workdir / "opusfilter.json"
    config_path.write_text(json.dumps(config, indent=1))
    measured = run_measured(
        [str(env.bin("opusfilter")), str(config_path)], workdir / "opusfilter.log", timeout
    )
    result: dict[str, Any] = {"run": measured.as_dict(), "config": str(config_path)}
    if measured.returncode != 0:
        result["error"] = f"opusfilter exited {measured.returncode}; see {measured.log}"
        return result
    result["pairs_in"] = count_lines(Path(f"{prefix}.{suffixes[0]}"))
    result["after_dedup"] = count_lines(outdir / "dedup.src")
    result["kept"] = count_lines(outdir / "kept.src")
    if profile:
        profiled = run_measured(
            [str(env.python), str(HERE / "opusfilter_child.py"), str(config_path),
             str(workdir / "opusfilter-profile.json"), str(workdir / "opusfilter-dropped.tsv")],
            workdir / "opusfilter-profile.log", timeout,
        )  # fmt: skip
        if profiled.returncode == 0:
            result["profile"] = json.loads((workdir / "opusfilter-profile.json").read_text())
            result["profile"]["run"] = profiled.as_dict()
    return result


def opusfilter_kept(outdir: Path) -> set[tuple[str, str]]:
    """OpusFilter's kept pairs, normalized as paramine normalizes, to compare with paramine's."""
    with (
        (outdir / "kept.src").open(encoding="utf-8") as src,
        (outdir / "kept.tgt").open(encoding="utf-8") as tgt,
    ):
        return {
            (normalize(a.rstrip("\n")), normalize(b.rstrip("\n")))
            for a, b in zip(src, tgt, strict=True)
        }


def opusfilter_drops(workdir: Path) -> dict[tuple[str, str], str]:
    """(pivot, candidate) -> the OpusFilter filter that rejected it, from the profile's TSV."""
    path = workdir / "opusfilter-dropped.tsv"
    drops: dict[tuple[str, str], str] = {}
    if path.exists():
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                name, a, b = line.rstrip("\n").split("\t", 2)
                drops[(normalize(a), normalize(b))] = name
    return drops


# ------------------------------------------------------------------ paramine


def paramine_job_child(args: dict[str, Any]) -> int:
    """The prefilter as a Beam job: read the Moses pair, prefilter, write the kept pairs.

    Runs in the child process that ``run_paramine_job`` measures; writes
    ``kept.tsv`` (normalized pivot and candidate of each kept pair) and
    ``counts.json`` (pairs read, kept, dropped by reason) into ``args["out"]``.
    """
    import apache_beam as beam
    from paramine.pipelines.formats import resolve_inputs
    from paramine.pipelines.run import beam_memos
    from paramine.pipelines.run.launch import bulk_run
    from paramine.pipelines.settings.mining import MiningSettings
    from paramine.pipelines.stages.filter.prefilter import Prefilter
    from paramine.pipelines.stages.read.read_bitext import ReadBitext

    out = Path(args["out"])
    out.mkdir(parents=True, exist_ok=True)
    config = MiningSettings(src_lang=args["langs"][0], tgt_lang=args["langs"][1])
    shards = resolve_inputs([args["prefix"]], config.src_lang, config.tgt_lang)
    beam_memos.install()  # as every paramine run does (run/launch.py)
    pipeline = beam.Pipeline(runner="FnApiRunner")
    read = pipeline | "ReadBitext" >> ReadBitext(shards, config.reader_options())
    kept = read.kept | "Prefilter" >> Prefilter(config.prefilter_options, shards, records=False)
    _ = (
        kept.entries
        | "AsLines" >> beam.MapTuple(lambda key, _origin: f"{key[0]}\t{key[1]}")
        | "WriteKept" >> beam.io.WriteToText(str(out / "kept"), ".tsv", shard_name_template="")
    )
    # Only the drops are counted in the job (a few rows a batch): the pairs read
    # and kept are the lines of the input and of kept.tsv, counted afterwards.
    _ = (
        (read.dropped, kept.dropped)
        | "AllDropped" >> beam.Flatten()
        | "Sum" >> beam.CombinePerKey(sum)
        | "AsDict" >> beam.combiners.ToDict()
        | "Json" >> beam.Map(json.dumps)
        | "WriteCounts" >> beam.io.WriteToText(str(out / "counts"), ".json", shard_name_template="")
    )
    with bulk_run():
        pipeline.run().wait_until_finish()
    return 0


def paramine_loop_child(args: dict[str, Any]) -> int:
    """bench_floor's loop over the pair: reader, the prefilter's DoFn, the duplicate search.

    Writes ``loop.json``: CPU seconds of each step (garbage collector off
    during each, as bench_floor times them) and the pairs kept.
    """
    from paramine.pipelines.core.origins import Origins
    from paramine.pipelines.formats import resolve_inputs
    from paramine.pipelines.settings.mining import MiningSettings

    from benchmarks.lib.pair_loop import (
        entries_of,
        first_of_duplicates,
        prefilter,
        read_pairs,
        timed,
    )

    config = MiningSettings(src_lang=args["langs"][0], tgt_lang=args["langs"][1])
    shards = resolve_inputs([args["prefix"]], config.src_lang, config.tgt_lang)
    origins = Origins((s.url for s in shards), (s.corpus for s in shards))
    pairs, read_s = timed(lambda: read_pairs(shards))
    outputs, filter_s = timed(lambda: prefilter(pairs, config.prefilter_options, origins))
    kept, dedup_s = timed(lambda: first_of_duplicates(entries_of(outputs)))
    result = {
        "pairs": len(pairs),
        "kept": len(kept),
        "read_cpu_s": read_s,
        "prefilter_cpu_s": filter_s,
        "dedup_cpu_s": dedup_s,
    }
    Path(args["out"], "loop.json").write_text(json.dumps(result))
    return 0


def _child(kind: str, args: dict[str, Any], workdir: Path, timeout: float) -> dict[str, Any]:
    """Run ``bench_peers.py --child KIND`` in paramine's interpreter, measured."""
    args_path = workdir / f"{kind}-args.json"
    args_path.write_text(json.dumps(args))
    command = [sys.executable, "-m", "benchmarks.quality.peers.bench_peers", "--child", kind]
    command.append(str(args_path))
    return run_measured(command, workdir / f"{kind}.log", timeout).as_dict()


def run_paramine(
    prefix: Path, suffixes: tuple[str, str], langs: tuple[str, str], workdir: Path,
    timeout: float, loop: bool = True,
) -> dict[str, Any]:  # fmt: skip
    """paramine's prefilter as a job and (with ``loop``) as a loop, each in a process of its own."""
    job_out = workdir / "paramine-job"
    loop_out = workdir / "paramine-loop"
    loop_out.mkdir(parents=True, exist_ok=True)
    job = {"run": _child("prefilter-job", {"prefix": str(prefix), "langs": langs,
                                           "out": str(job_out)}, workdir, timeout)}  # fmt: skip
    if job["run"]["returncode"] == 0:
        counts = json.loads((job_out / "counts.json").read_text())
        job["pairs_in"] = count_lines(Path(f"{prefix}.{suffixes[0]}"))
        job["kept"] = count_lines(job_out / "kept.tsv")
        job["dropped"] = dict(sorted(counts.items(), key=lambda kv: -kv[1]))
    else:
        job["error"] = f"the prefilter job exited {job['run']['returncode']}; see its log"
    if not loop:
        return {"job": job}
    loop_args = {"prefix": str(prefix), "langs": langs, "out": str(loop_out)}
    looped = {"run": _child("prefilter-loop", loop_args, workdir, timeout)}
    if looped["run"]["returncode"] == 0:
        looped.update(json.loads((loop_out / "loop.json").read_text()))
    return {"job": job, "loop": looped}


def paramine_kept(workdir: Path) -> set[tuple[str, str]]:
    """The job's kept pairs (normalized pivot, candidate)."""
    with (workdir / "paramine-job" / "kept.tsv").open(encoding="utf-8") as lines:
        return {tuple(line.rstrip("\n").split("\t", 1)) for line in lines}  # type: ignore[misc]


def paramine_reasons(
    pairs: set[tuple[str, str]], langs: tuple[str, str]
) -> Counter[str]:  # fmt: skip
    """Why paramine's prefilter drops each of ``pairs`` (normalized), by reason.

    The prefilter's own judge, its side decisions made from the tables alone
    (these pairs are a sample: the job's own decisions are in its manifest).
    """
    from paramine.pipelines.settings.mining import MiningSettings

    from benchmarks.quality.line_scores import RunPrefilter

    judged = RunPrefilter(settings=MiningSettings(src_lang=langs[0], tgt_lang=langs[1]))
    lines = [(pivot, candidate, langs[0], langs[1]) for pivot, candidate in pairs]
    reasons: Counter[str] = Counter()
    for reason in judged.reasons(lines):
        reasons[reason or "kept (a duplicate under NFKC)"] += 1
    return reasons


def compare_kept(
    workdir: Path, langs: tuple[str, str], examples: int = 3
) -> dict[str, Any]:  # fmt: skip
    """Pairs each tool keeps, both keep, and why the other dropped those only one keeps."""
    ours = paramine_kept(workdir)
    theirs = opusfilter_kept(workdir / "opusfilter")
    both = ours & theirs
    only_theirs = theirs - ours
    only_ours = ours - theirs
    drops = opusfilter_drops(workdir)
    their_reasons = Counter(drops.get(pair, "not filtered (dedup or normalization)")
                            for pair in only_ours)  # fmt: skip
    return {
        "paramine_distinct": len(ours),
        "opusfilter_distinct": len(theirs),
        "both": len(both),
        "only_paramine": len(only_ours),
        "only_opusfilter": len(only_theirs),
        # Why the other tool dropped what one kept.
        "only_paramine_dropped_by_opusfilter": dict(their_reasons.most_common()),
        "only_opusfilter_dropped_by_paramine": dict(
            paramine_reasons(only_theirs, langs).most_common()
        ),
        "examples_only_paramine": sorted(only_ours)[:examples],
        "examples_only_opusfilter": sorted(only_theirs)[:examples],
    }
