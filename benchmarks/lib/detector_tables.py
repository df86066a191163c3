"""py3langid's own model, read: the scripts it knows each language in, its neighbours, its macros.

The prefilter's language check needs three facts about the detector for
every language it can name, read here from the model file itself and from
the language registry, not from a hand-kept list:

- **scripts**: the writing systems the model was trained on for a language.
  A naive-Bayes model over byte n-grams gives every feature a probability per
  language; the features' text (recovered by walking the model's automaton
  from its start, breadth first: a state's shortest path is its n-gram) falls
  in Unicode scripts, and a language's probability mass per script says what
  it was trained on. Tatar: Cyrillic 92%, Latin 7%; Uzbek: Latin 97%;
  Serbian: Cyrillic 94%. A script holding at least ``SCRIPT_SHARE`` of a
  language's mass is one the detector knows it in; the largest share of any
  other script is 12% (Latin in Chinese: names and pinyin), so 15% separates
  them. A line of Latin Tatar is not Tatar to this model (it names 103 of
  Tatoeba's 180 Latin Tatar lines Crimean Tatar), so the prefilter does not
  ask it about such lines.
- **neighbours**: the languages whose feature distributions are nearest to a
  language's (Jensen-Shannon divergence between the two columns of the
  model), folded as the check folds them (hr/sr/bs, no/nb/nn, ms/id), the
  ``NEIGHBOURS`` nearest. They come out as a linguist would list them (pl: sk,
  cs, hr, sl, sr; tt: ba, ky, kk, ru, uz; sl: hr, sk, cs, eo, pl; es: gl, an,
  ext, pt, ca), for all 142 labels alike.

- **macrolanguages**: a line declared a macrolanguage is in it when it is in
  one of its members: the IANA registry that langcodes' data ships names
  them (Cantonese and Wu are Chinese, Egyptian Arabic is Arabic, Latgalian
  is Latvian). Tatoeba's Chinese set holds Cantonese and Wu lines that
  py3langid names yue and wuu (148 of 3,000 by strong evidence), rightly.

``--write FILE`` writes the three as ``paramine/pipelines/stages/filter/rules/detector_tables.py``;
``tests/pipelines/stages/filter/rules/test_detector_tables.py`` recomputes a sample of them
from the installed model, so a new py3langid that changes them fails a test
rather than a run. Without ``--write`` it prints the tables (and, with
``--check``, how many entries differ from the module's).

Usage::

    python -m benchmarks.lib.detector_tables            # print
    python -m benchmarks.lib.detector_tables --write \
        pipelines/stages/filter/rules/detector_tables.py
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

#: A script holding at least this share of a language's feature mass is one
#: the model knows the language in.
SCRIPT_SHARE = 0.15
#: Folded neighbours kept per language.
NEIGHBOURS = 5


def identifier() -> Any:
    """py3langid's identifier over all its labels (read once, 0.5 s)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def feature_texts(ident: Any) -> dict[int, str]:
    """The text of each feature row of the model: its state's shortest path, decoded.

    The automaton's ``tk_nextmove`` holds 256 moves per state; a breadth-first
    walk from state 0 reaches each state first along its trie path (its
    n-gram), since the failure moves lead to shallower states. Partial UTF-8
    sequences at either end of an n-gram are dropped in decoding.
    """
    import numpy as np

    moves = np.frombuffer(
        ident.tk_nextmove, dtype=np.dtype(f"u{ident.tk_nextmove.itemsize}")
    ).astype(np.int64)
    rowbase = np.asarray(ident._rowbase, dtype=np.int64)
    output = np.asarray(ident.tk_output, dtype=np.int64)
    states = len(output)
    depth = np.full(states, -1)
    parent = np.full(states, -1)
    byte = np.full(states, -1)
    depth[0] = 0
    frontier = np.array([0])
    while len(frontier):
        targets = moves[rowbase[frontier][:, None] + np.arange(256)[None, :]].ravel()
        sources = np.repeat(frontier, 256)
        values = np.tile(np.arange(256), len(frontier))
        new = depth[targets] < 0
        targets, sources, values = targets[new], sources[new], values[new]
        reached, first = np.unique(targets, return_index=True)
        depth[reached] = depth[sources[first]] + 1
        parent[reached] = sources[first]
        byte[reached] = values[first]
        frontier = reached
    texts = {}
    for state in np.flatnonzero(output >= 0).tolist():
        path, current = [], state
        while current > 0:
            path.append(int(byte[current]))
            current = int(parent[current])
        texts[int(output[state])] = bytes(reversed(path)).decode("utf-8", errors="ignore")
    return texts


def detector_scripts(ident: Any, texts: dict[int, str]) -> dict[str, tuple[str, ...]]:
    """Per label, the scripts holding at least ``SCRIPT_SHARE`` of its feature mass."""
    import numpy as np
    from paramine.pipelines.stages.filter.rules.scripts import line_scripts

    rows, scripts = [], []
    for row, text in texts.items():
        found = line_scripts(text)
        if len(found) == 1:  # a feature of one script; digits and punctuation have none
            rows.append(row)
            scripts.append(next(iter(found)))
    mass = np.exp(np.asarray(ident.nb_ptc, dtype=np.float64)[rows])  # (features, labels)
    names = np.array(scripts)
    found_by_label: dict[str, set[str]] = {}
    for column, label in enumerate(ident.nb_classes):
        total = mass[:, column].sum()
        kept = {
            script
            for script in set(scripts)
            if mass[names == script, column].sum() >= SCRIPT_SHARE * total
        }
        found_by_label.setdefault(label, set()).update(kept)
    return {label: tuple(sorted(found)) for label, found in sorted(found_by_label.items())}


def divergences(ident: Any, labels: Sequence[str] | None = None) -> dict[str, dict[str, float]]:
    """Jensen-Shannon divergence (nats) between each of ``labels`` (default all) and every label."""
    import numpy as np

    log_p = np.asarray(ident.nb_ptc, dtype=np.float64)
    p = np.exp(log_p)
    p /= p.sum(axis=0, keepdims=True)
    log_p = np.log(p)
    entropy = -(p * log_p).sum(axis=0)
    names = list(ident.nb_classes)
    out: dict[str, dict[str, float]] = {}
    for label in labels or names:
        a = names.index(label)
        mixture = 0.5 * (p[:, a : a + 1] + p)
        mixed = -(mixture * np.log(mixture)).sum(axis=0)
        js = mixed - 0.5 * (entropy[a] + entropy)
        out[label] = {name: float(js[b]) for b, name in enumerate(names) if b != a}
    return out


def neighbours(ident: Any, labels: Sequence[str] | None = None) -> dict[str, tuple[str, ...]]:
    """Per label, its ``NEIGHBOURS`` nearest other labels, folded (the fold's first name)."""
    from paramine.pipelines.stages.filter.rules.language_id import detector_label

    out = {}
    for label, distance in divergences(ident, labels).items():
        own = detector_label(label)
        found: list[str] = []
        for other in sorted(distance, key=lambda name: (distance[name], name)):
            folded = detector_label(other)
            if folded != own and folded not in found:
                found.append(folded)
            if len(found) == NEIGHBOURS:
                break
        out[label] = tuple(found)
    return out


def macrolanguages(ident: Any) -> dict[str, tuple[str, ...]]:
    """Per macrolanguage (paramine's code), the detector labels that are its members.

    From the ``Macrolanguage:`` fields of the IANA language subtag registry
    in the ``language_data`` package; the folds the check already makes
    (hr/sr/bs, no/nn, ms/id) are left to it.
    """
    import re
    from importlib.resources import files

    from paramine.pipelines.core.text import canonical_lang
    from paramine.pipelines.stages.filter.rules.language_id import FOLDS, detector_label

    text = (files("language_data") / "data" / "language-subtag-registry.txt").read_text("utf-8")
    folded = {label for group in FOLDS for label in group}
    members: dict[str, set[str]] = {}
    labels = set(ident.nb_classes)
    for record in text.split("%%"):
        subtag = re.search(r"^Subtag: (\S+)$", record, re.M)
        kind = re.search(r"^Type: (\S+)$", record, re.M)
        macro = re.search(r"^Macrolanguage: (\S+)$", record, re.M)
        if not (subtag and kind and macro) or kind.group(1) != "language":
            continue
        label = subtag.group(1)
        if label in labels and label not in folded:
            members.setdefault(detector_label(canonical_lang(macro.group(1))), set()).add(label)
    return {macro: tuple(sorted(found)) for macro, found in sorted(members.items())}


def folded_tables(
    scripts: dict[str, tuple[str, ...]], near: dict[str, tuple[str, ...]]
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """Both tables keyed by folded label: a fold knows the scripts of all its members."""
    from paramine.pipelines.stages.filter.rules.language_id import detector_label

    by_fold: dict[str, set[str]] = {}
    for label, found in scripts.items():
        by_fold.setdefault(detector_label(label), set()).update(found)
    # A fold's neighbours are its first member's (hr for hr/sr/bs, no, ms).
    folded_near = {
        detector_label(label): found
        for label, found in near.items()
        if detector_label(label) == label or detector_label(label) not in near
    }
    return (
        {label: tuple(sorted(found)) for label, found in sorted(by_fold.items())},
        dict(sorted(folded_near.items())),
    )


HEADER = '''"""Read off py3langid's model: the scripts it knows each language in, its neighbours.

Generated from py3langid {version} by ``python -m benchmarks.lib.detector_tables
--write {path}``; do not edit by hand.
``test_detector_tables.py`` (tests/, the mirrored folder) recomputes them
from the installed model. How they are made, and why:
``benchmarks/lib/detector_tables.py`` and docs/filters.md ("Close languages").
"""

from __future__ import annotations

#: Per language (folded label), the scripts holding at least {share:.0%} of its
#: feature mass in the model: the scripts the detector knows it in.
DETECTOR_SCRIPTS: dict[str, tuple[str, ...]] = {{
{scripts}
}}

#: Per language (folded label), the {k} languages nearest to it in the model
#: (Jensen-Shannon divergence of their n-gram distributions), nearest first.
NEIGHBOURS: dict[str, tuple[str, ...]] = {{
{near}
}}

#: Per macrolanguage, the detector's labels of its members (the IANA registry):
#: a line declared the macrolanguage is in it when it is in one of them.
MACROLANGUAGES: dict[str, tuple[str, ...]] = {{
{macro}
}}
'''


def module_text(
    scripts: dict[str, tuple[str, ...]],
    near: dict[str, tuple[str, ...]],
    macro: dict[str, tuple[str, ...]],
    path: str,
) -> str:
    """The generated module's source."""
    from importlib.metadata import version

    def rows(table: dict[str, tuple[str, ...]]) -> str:
        return "\n".join(f"    {label!r}: {values!r}," for label, values in table.items())

    return HEADER.format(
        path=path,
        version=version("py3langid"),
        share=SCRIPT_SHARE,
        k=NEIGHBOURS,
        scripts=rows(scripts),
        near=rows(near),
        macro=rows(macro),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Compute both tables; print them, or write the module."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", type=Path, default=None, help="write the module here")
    parser.add_argument(
        "--check", action="store_true", help="say how many entries differ from the module's"
    )
    args = parser.parse_args(argv)
    ident = identifier()
    scripts, near = folded_tables(detector_scripts(ident, feature_texts(ident)), neighbours(ident))
    macro = macrolanguages(ident)
    if args.write:
        args.write.write_text(module_text(scripts, near, macro, str(args.write)), encoding="utf-8")
        print(f"wrote {args.write}: {len(scripts)} languages")
        return 0
    for label in scripts:
        print(
            f"{label:5s} scripts {'+'.join(scripts[label]):12s} neighbours {', '.join(near[label])}"
        )
    if args.check:
        from paramine.pipelines.stages.filter.rules.detector_tables import (
            DETECTOR_SCRIPTS,
            MACROLANGUAGES,
            NEIGHBOURS,
        )

        differ = [k for k in scripts if DETECTOR_SCRIPTS.get(k) != scripts[k]]
        differ += [k for k in near if NEIGHBOURS.get(k) != near[k]]
        differ += [k for k in macro if MACROLANGUAGES.get(k) != macro[k]]
        print(f"entries that differ from the module's: {len(differ)} {differ[:10]}")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
