"""The prefilter's word count: NLTK's Treebank tokenizer against the one-pattern count.

``paramine.pipelines.core.text.word_count`` used to run NLTK's
``NLTKWordTokenizer`` (about 40 regex substitutions) on every sentence not in
its LRU cache. It now counts with one compiled pattern and runs NLTK only on
the texts the pattern cannot count exactly. Side by side, in one run:

- sentences: every distinct sentence in ``shared/corpora`` (Tatoeba test sets
  eng-pol, ces-eng and x-pol/*, LASER Tatoeba, the Polish evaluation suites,
  the OPUS XCES sample), plus the ``normalize``d form of each, which is what
  the prefilter counts. All distinct, so no cache helps (cold).
- us/sentence: CPU time of the old count (NLTK, uncached) and of the new one
  (pattern, NLTK fallback with its cache cleared first).
- agreement: sentences where the pattern's count equals NLTK's; those it
  hands to NLTK instead; and disagreements (must be 0, listed if not).
- prefilter per pair: the prefilter's per-record function (normalize both
  sides, then every check) over up to ``--pairs`` real aligned pairs (the
  Tatoeba and LASER bitexts, 88,694 in all), with the old count (NLTK behind
  the old 64k LRU cache) and with the new one, and how many decisions differ.

Measured on the 2-core VM (busy with other jobs): 249,416 sentences, old
121.8 us, new 5.1 us (23.7x); 34 handed to NLTK, 0 different; prefilter
211.4 -> 30.0 us per pair (7.0x), 0 decisions differ.

Usage::

    python benchmarks/bench_word_count.py
    python benchmarks/bench_word_count.py --limit 20000 --pairs 20000
"""

from __future__ import annotations

import argparse
import functools
import gc
import gzip
import os
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPORA = SHARED / "corpora"
TATOEBA = CORPORA / "tatoeba_test_v2021-08-07"
LASER = CORPORA / "laser_tatoeba_v1"
STEM = "tatoeba-test-v2021-08-07"
WORD_CHAR = re.compile(r"[^\W_]")


def _lines(path: Path) -> list[str]:
    # Lines end at "\n" only, as in the Moses readers: str.splitlines() would
    # also cut at U+2028, U+0085 and \x1c-\x1e, which some sentences hold.
    lines = path.read_bytes().decode("utf-8").split("\n")
    return lines[:-1] if lines and not lines[-1] else lines


def corpus_sentences() -> dict[str, list[str]]:
    """Sentences of every corpus in shared/corpora, by source, in file order."""
    if not CORPORA.is_dir():
        sys.exit(f"bench_word_count: missing {CORPORA}; the benchmark reads the corpora in shared/")
    found: dict[str, list[str]] = {}
    for path in sorted(TATOEBA.rglob(f"{STEM}.*")):
        if path.suffix != ".labels":
            found.setdefault(f"tatoeba {path.suffix[1:]}", []).extend(_lines(path))
    for path in sorted(LASER.glob("tatoeba.*-*.*")):
        found.setdefault(f"laser {path.suffix[1:]}", []).extend(_lines(path))
    for path in sorted((CORPORA / "polish_sentence_evaluation").rglob("*.txt")):
        if path.name in ("README.txt", "SOURCE.txt"):
            continue
        lines = _lines(path)
        if "\t" in lines[0]:  # SICK, CDS, PPC: a header names the sentence columns
            columns = [i for i, name in enumerate(lines[0].split("\t")) if name.startswith("sent")]
            rows = [line.split("\t") for line in lines[1:]]
            found.setdefault("pse pol", []).extend(
                r[i] for r in rows for i in columns if i < len(r)
            )
        else:  # 8TAGS, WCCRS: "<label> <sentence>"
            found.setdefault("pse pol", []).extend(line.partition(" ")[2] for line in lines)
    opus = CORPORA / "opus_rf_xces" / "t"
    for path in sorted((opus / "moses").glob("*")):
        found.setdefault(f"opus {path.suffix[1:]}", []).extend(_lines(path))
    for path in sorted((opus / "xml").glob("*/*.xml.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as file:
            xml = file.read()
        for sentence in re.findall(r"<s\b[^>]*>(.*?)</s>", xml, re.S):
            words = re.findall(r"<w\b[^>]*>([^<]*)</w>", sentence)
            found.setdefault(f"opus {path.parent.name}", []).append(" ".join(words))
    return {
        name: [s for s in (line.strip() for line in lines) if s] for name, lines in found.items()
    }


def bitext_pairs() -> Iterator[tuple[str, str, str, str]]:
    """(pivot, candidate, pivot language, candidate language) of every real bitext here."""
    for path in sorted(TATOEBA.rglob(f"{STEM}.*")):
        if path.suffix == ".labels":
            continue
        src, _, tgt = path.parent.name.partition("-")
        if path.suffix[1:] != src:
            continue
        other = path.with_suffix(f".{tgt}")
        if other.is_file():
            for a, b in zip(_lines(path), _lines(other), strict=True):
                yield a, b, src, tgt
    for path in sorted(LASER.glob("tatoeba.*-eng.eng")):
        lang = path.name.split(".")[1].split("-")[0]
        for a, b in zip(_lines(path), _lines(path.with_suffix(f".{lang}")), strict=True):
            yield a, b, "en", lang


def treebank_count(sentence: str) -> int:
    """word_count before the fast path, less its cache: NLTK's tokens with a letter or digit."""
    tokens = _tokenizer().tokenize(sentence)
    return sum(1 for token in tokens if WORD_CHAR.search(token))


@functools.cache
def _tokenizer() -> Any:
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def cpu_us_each(function: Callable[[str], Any], items: list[str]) -> tuple[float, list[Any]]:
    """CPU microseconds per item of ``function`` over ``items``, and its results."""
    gc.collect()  # the previous run's garbage is not this one's cost
    start = time.process_time()
    results = [function(item) for item in items]
    return (time.process_time() - start) / len(items) * 1e6, results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--limit", type=int, default=0, help="a seeded sample of this many sentences (0: all)"
    )
    parser.add_argument("--pairs", type=int, default=100_000, help="aligned pairs to prefilter")
    args = parser.parse_args(argv)

    from paramine.pipelines.core import text
    from paramine.pipelines.core.origins import Origins
    from paramine.pipelines.stages import prefilter
    from paramine.schemas.records import AlignedPair

    by_source = corpus_sentences()
    raw = {s for lines in by_source.values() for s in lines}
    sentences = sorted(raw | {text.normalize(s) for s in raw})
    if args.limit and args.limit < len(sentences):
        sentences = sorted(random.Random(0).sample(sentences, args.limit))
    print(f"sentences: {len(sentences):,} distinct ({len(raw):,} as read, plus normalized forms)")
    families: dict[str, list[str]] = {}
    for name, lines in by_source.items():
        corpus, _, lang = name.partition(" ")
        families.setdefault(corpus, []).append(f"{lang} {len(set(lines)):,}")
    for corpus, counts in families.items():
        print(f"  {corpus}: " + ", ".join(counts))

    treebank_count("warm up")  # import NLTK outside the timing
    text.word_count("warm up", "en")
    old_us, old_counts = cpu_us_each(treebank_count, sentences)
    text._treebank_word_count.cache_clear()
    new_us, new_counts = cpu_us_each(lambda s: text.word_count(s, "en"), sentences)
    fast_us, fast_counts = cpu_us_each(text._fast_word_count, sentences)
    assert new_counts == old_counts, "word_count differs from NLTK's count"

    fallback = fast_counts.count(None)
    wrong = [
        (sentence, fast, old)
        for sentence, fast, old in zip(sentences, fast_counts, old_counts, strict=True)
        if fast is not None and fast != old
    ]
    agree = len(sentences) - fallback - len(wrong)
    print("\nword count, CPU us/sentence (cold: every sentence distinct)")
    print(f"  old  NLTK Treebank tokenizer          {old_us:8.1f}")
    print(f"  new  pattern, NLTK where unsure        {new_us:8.1f}   ({old_us / new_us:.1f}x)")
    print(f"       pattern alone                     {fast_us:8.1f}")
    print("agreement with the Treebank count")
    print(f"  pattern's count equal                  {agree:,} ({agree / len(sentences):.4%})")
    print(
        f"  handed to NLTK (pattern unsure)        {fallback:,} ({fallback / len(sentences):.4%})"
    )
    print(f"  different                              {len(wrong):,}")
    for sentence, fast, old in wrong[:10]:
        print(f"    {sentence!r}: pattern {fast}, NLTK {old}")

    pairs = []
    for i, (a, b, src, tgt) in enumerate(bitext_pairs()):
        if i == args.pairs:
            break
        pairs.append(
            AlignedPair(a, b, text.canonical_lang(src), text.canonical_lang(tgt), "c", "s", i)
        )
    filter_fn = prefilter._FilterFn(prefilter.PrefilterOptions(), Origins())
    old_cached = functools.lru_cache(maxsize=65536)(lambda s, lang: treebank_count(s))

    def per_pair(count: Callable[[str, str], int]) -> tuple[float, list[str]]:
        """CPU us per pair of the prefilter's per-record function, and its decisions."""
        prefilter.word_count = count  # type: ignore[assignment]  # the name it calls
        text._treebank_word_count.cache_clear()
        filter_fn.setup()  # a fresh worker: its memo of verdicts would skip the count
        outputs: list[Any] = []
        gc.collect()
        start = time.process_time()
        for record in pairs:  # a batch of one: one output per pair
            outputs.extend(filter_fn.process([record]))
        seconds = time.process_time() - start
        # A drop is a TaggedOutput holding (reason, n); a kept pair is its (key, origin).
        decisions = [getattr(out, "value", ("kept",))[0] for out in outputs]
        return seconds / len(pairs) * 1e6, decisions

    filter_fn.setup()
    for record in pairs[:200]:  # warm up: comparison_key builds its table on first use
        list(filter_fn.process([record]))
    old_pair, old_decisions = per_pair(old_cached)
    new_pair, new_decisions = per_pair(text.word_count)
    changed = sum(a != b for a, b in zip(old_decisions, new_decisions, strict=True))
    print(f"\nprefilter per pair, CPU us ({len(pairs):,} Tatoeba and LASER pairs, default options)")
    print(f"  old  {old_pair:8.1f}")
    print(f"  new  {new_pair:8.1f}   ({old_pair / new_pair:.1f}x)")
    print(f"  decisions that differ: {changed}")


if __name__ == "__main__":
    main()
