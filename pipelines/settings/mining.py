"""MiningSettings: what decides the pairs of a run, typed, parsed once and checked in one place.

The languages, how records are read and judged, the model and its cut, the
filters and the pairing: change one of these and the run writes other pairs.
Where and how a job runs (inputs, output, workers, devices, deployment) is
``RunSettings`` (``running.py``); the mining graph takes only these, and only
a launcher (``paramine mine``, ``paramine refresh``, the Dataflow template)
holds both. A refresh table records a fingerprint of these settings and
re-mines every shard when it changes.

Each field carries its flag, help text and parser as metadata
(``paramine.schemas.options``): the ``paramine mine`` parser is generated from
the fields, a job file (``--config``) and the Python API are held to the same
rules. This module imports neither Beam nor torch, so ``paramine mine --help``
answers at once.

Each stage's options dataclass is made here too, one property per stage
(``reader_options``, ``prefilter_options``, ``group_options``, ...): the graph
asks the settings, and the settings make each dataclass to check its values.

Why it is longer than 400 lines: it is the one place a user or a reviewer
reads every setting that decides a run's pairs, about 50 fields with their
help texts (three quarters of the file). The checks between fields are in
the stages' options and beside the parsers they concern; what stays here
asks them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from paramine.encoders.inference.backends import BACKENDS, QUANTIZATIONS, check_backend
from paramine.encoders.neighbours import require_faiss
from paramine.pipelines.core.groups import (
    ContestOptions,
    GroupOptions,
    MakePairsOptions,
    PostFilterOptions,
)
from paramine.pipelines.formats.base import (
    DEFAULT_MAX_REJECTS_PER_REASON,
    DEFAULT_SPLIT_BYTES,
    ReaderOptions,
)
from paramine.pipelines.formats.pivot_languages import check_sides, parse_pivot_langs
from paramine.pipelines.formats.scores import DEFAULT_MIN_ADEQUACY, DEFAULT_MIN_LANGUAGE_SCORE
from paramine.pipelines.settings.values import (
    BAD,
    FILTERS,
    IO,
    MODEL,
    parse_ratio_or_off,
    parse_threshold,
    parse_tsv_columns,
    parse_unit_interval,
)
from paramine.pipelines.stages.cut.rules.cuts import CalibrationOptions
from paramine.pipelines.stages.cut.rules.margin import MarginOptions
from paramine.pipelines.stages.filter.rules.detectors import DEFAULT_DETECTOR, DETECTORS
from paramine.pipelines.stages.filter.rules.heliport_id import require_heliport
from paramine.pipelines.stages.filter.rules.junk import (
    DEFAULT_PROFILE,
    PROFILES,
    RULES,
    Limits,
    parse_rules,
)
from paramine.pipelines.stages.filter.rules.pair_judge import PrefilterOptions
from paramine.pipelines.stages.filter.rules.scripts import declared_sides
from paramine.pipelines.thresholds.coherence import CoherenceOptions
from paramine.schemas.errors import UsageError
from paramine.schemas.options import (
    Settings,
    declared,
    one_of,
    option,
    optional,
    parse_non_negative,
    parse_positive,
    parse_share,
)

DEFAULT_MODEL = "e5-small"
INPUT_FORMATS = ("auto", "moses", "tsv", "tmx", "xces", "czeng")
SCORES = ("cosine", "margin")


@dataclass(frozen=True)
class MiningSettings(Settings):
    """What decides a run's pairs; checked when built, whatever built it.

    Construct it directly from Python (``MiningSettings(tgt_lang="cs")``),
    from a mapping (``from_mapping``: job files, refresh configs, the Flex
    Template) or from a command line (``settings.command_line``). An invalid
    value raises ``UsageError`` naming the flag and what it allows.
    """

    COMMAND: ClassVar[str] = "paramine mine"

    src_lang: str = option(
        "en",
        "language of the pivot (source) side, e.g. en; or auto (or a list, de,en,eo): each "
        "input's pivot language is the one it names (a Moses file's language suffix, a "
        "Tatoeba TSV's language columns), and candidates are grouped per pivot language "
        "(default: %(default)s)",
        group=IO,
        parse=parse_pivot_langs,
    )
    tgt_lang: str = option(
        "pl",
        "language of the candidates, whose paraphrases are mined (default: %(default)s)",
        group=IO,
    )
    input_format: str = option(
        "auto",
        "input format: auto (by file name and content), moses (also an OPUS moses .zip), "
        "tsv, tmx, xces (an OPUS cesAlign file), czeng (CzEng 2.0's six columns) "
        "(default: %(default)s)",
        group=IO,
        choices=INPUT_FORMATS,
        flag="--format",
    )
    tsv_columns: tuple[int, int] | None = option(
        None,
        "plain TSV: the 1-based pivot and candidate columns, e.g. 3,4 (default: 2 columns, "
        "or Tatoeba's 4 with languages)",
        group=IO,
        parse=parse_tsv_columns,
    )
    min_adequacy: float = option(
        DEFAULT_MIN_ADEQUACY,
        "CzEng: reject a pair whose adequacy score (column 2) is under this as low_adequacy; "
        "0 keeps all (docs/filters.md, 'Corpus scores') (default: %(default)s)",
        group=IO,
        parse=parse_unit_interval,
    )
    min_language_score: float = option(
        DEFAULT_MIN_LANGUAGE_SCORE,
        "CzEng: reject a pair whose Czech or English language score (columns 3, 4) is under "
        "this as low_language_score; 0 keeps all (default: %(default)s)",
        group=IO,
        parse=parse_unit_interval,
    )
    score_column: int | None = option(
        None,
        "plain TSV with --tsv-columns: the 1-based column of each line's score, which "
        "--min-score applies to (default: none)",
        group=IO,
        parse=optional(parse_positive),
    )
    score_property: str | None = option(
        None,
        "TMX: the <prop type=...> of each unit's score, which --min-score applies to "
        "(default: none)",
        group=IO,
    )
    min_score: float | None = option(
        None,
        "reject a record whose own score (--score-column, --score-property) is under this "
        "as low_score (default: none)",
        group=IO,
        parse=optional(float),
    )
    xces_links: str = declared(ReaderOptions, "xces_links", group=IO)
    invalid_utf8: str = declared(ReaderOptions, "invalid_utf8", group=BAD)
    max_line_chars: int = declared(ReaderOptions, "max_line_chars", group=BAD)
    on_length_mismatch: str = declared(ReaderOptions, "on_length_mismatch", group=BAD)
    on_malformed_xml: str = declared(ReaderOptions, "on_malformed_xml", group=BAD)
    max_rejects_per_reason: int = option(
        DEFAULT_MAX_REJECTS_PER_REASON,
        "rejects/ keeps the first this many rows (by line) of each reason in each shard; every "
        "reject is counted in the manifest all the same; 0 keeps them all (default: %(default)s)",
        group=BAD,
        parse=parse_non_negative,
    )
    model: str = option(
        DEFAULT_MODEL,
        "e5-small (offline default), a sentence-transformers folder, a folder URL, or a "
        "hub id (default: %(default)s)",
        group=MODEL,
    )
    prefix: str | None = option(
        None,
        "text put before every sentence (default: the model's own, 'query: ' for e5)",
        group=MODEL,
    )
    threshold: float | str = option(
        "auto",
        "keep pairs whose cosine reaches this; 'auto' calibrates the cut for the model on "
        "the data (default: %(default)s)",
        group=MODEL,
        parse=parse_threshold,
    )
    score: str | None = option(
        None,
        "what the cut applies to: cosine, or margin (the cosine over the mean cosine of both "
        "sentences' k nearest neighbours in the calibration sample; needs --threshold auto) "
        "(default: margin with --threshold auto, cosine with a fixed --threshold)",
        group=MODEL,
        choices=SCORES,
    )
    # Declared by the stages' options, each stated once there.
    margin_k: int = declared(MarginOptions, "k", group=MODEL)
    max_false_accept: float = declared(CalibrationOptions, "max_false_accept", group=MODEL)
    calibration_sample: int = declared(CalibrationOptions, "sample_size", group=MODEL)
    backend: str = option(
        "auto",
        "inference backend: torch, onnx (ONNX Runtime), openvino, or auto (on CPU the "
        "fastest measured whose vectors do not depend on the batch, today openvino; torch "
        "on GPU); exported models are cached, built offline (docs/models.md) "
        "(default: %(default)s)",
        group=MODEL,
        choices=BACKENDS,
    )
    quantize: str | None = option(
        None,
        "with --backend onnx or openvino: none, or int8 (dynamic int8 weights) "
        "(default: the backend's own, none)",
        group=MODEL,
        choices=QUANTIZATIONS,
        parse=optional(one_of(QUANTIZATIONS)),
    )
    min_words: int = declared(PrefilterOptions, "min_words", group=FILTERS)
    max_words: int = declared(PrefilterOptions, "max_words", group=FILTERS)
    max_length_ratio: float = declared(PrefilterOptions, "max_length_ratio", group=FILTERS)
    sentence_count_filter: bool = declared(PrefilterOptions, "sentence_count_filter", group=FILTERS)
    profile: str = option(
        DEFAULT_PROFILE,
        "the kind of corpus, which sets the defaults of the four options below: curated "
        "(Tatoeba, WMT, CzEng), subtitles (OpenSubtitles) or web (CCMatrix, ParaCrawl); "
        "docs/filters.md lists what each sets (default: %(default)s)",
        group=FILTERS,
        choices=tuple(PROFILES),
    )
    junk_rules: tuple[str, ...] | None = option(
        None,
        f"the heuristic rules applied, comma-separated ({', '.join(RULES)}), or none "
        "(default: the profile's)",
        group=FILTERS,
        parse=optional(parse_rules),
        metavar="RULES",
    )
    language_check: float | None = option(
        None,
        "drop a pair whose pivot or candidate is not in its declared language (py3langid): a "
        "line that is another language by strong evidence (p(L) < 0.03 x p(it)) always, one "
        "with p(L) < RATIO x p(another) where that language is present on its side; a line "
        "the detector cannot judge is kept and counted as language_unchecked; 'off' to skip "
        "(default: the profile's, 0.3)",
        group=FILTERS,
        parse=optional(parse_ratio_or_off),
        metavar="RATIO|off",
    )
    language_id: str = option(
        DEFAULT_DETECTOR,
        "the language check's detector: py3langid (139 languages), heliport (about 220; "
        "pip install 'paramine[heliport]', GPL-3.0), or py3langid+heliport (heliport only "
        "for the languages py3langid lacks) (docs/filters.md) (default: %(default)s)",
        group=FILTERS,
        choices=DETECTORS,
    )
    min_letter_share: float | None = option(
        None,
        "the letters rule: least share of letters among a line's non-space characters "
        "(default: the profile's, 0.5)",
        group=FILTERS,
        parse=optional(parse_share),
    )
    min_script_share: float | None = option(
        None,
        "the script rule: least share of a line's letters in its language's script "
        "(default: the profile's, 0.8)",
        group=FILTERS,
        parse=optional(parse_share),
    )
    pair_mode: str = declared(MakePairsOptions, "mode", group=FILTERS)
    max_group_size: int = declared(GroupOptions, "max_group_size", group=FILTERS)
    max_pairs_per_group: int = declared(MakePairsOptions, "max_pairs_per_group", group=FILTERS)
    rival_margin: float | None = declared(ContestOptions, "rival_margin", group=FILTERS)
    coherence_min_group: int | None = declared(CoherenceOptions, "min_group", group=FILTERS)
    group_support: float | None = declared(CoherenceOptions, "group_support", group=FILTERS)
    hard_negative_accept: float | None = declared(
        CoherenceOptions, "hard_negative_accept", group=FILTERS
    )
    near_equal: float = declared(PostFilterOptions, "near_equal", group=FILTERS)
    drop_inflection_pairs: bool = declared(PostFilterOptions, "drop_inflections", group=FILTERS)
    exclude_sentences: tuple[str, ...] = option(
        (),
        "drop every pair one of whose sentences, after normalization, is a line of this "
        "file (evaluation data kept out of training, e.g. laser_tatoeba_v1/"
        "tatoeba.pol-eng.pol); repeatable (default: none)",
        group=FILTERS,
        many=True,
        metavar="FILE",
    )
    exclude_suite: str | None = option(
        None,
        "the same for every sentence of an evaluation suite's files, all splits: a built-in "
        "name (pl: the eight Polish tasks of Dadas 2022) or a suite file (default: none)",
        group=FILTERS,
        metavar="NAME|FILE",
    )
    suite_data: str | None = option(
        None,
        "the folder --exclude-suite's files are under (default: $PARAMINE_SUITE_DATA, then "
        "the suite file's data_root)",
        group=FILTERS,
        metavar="DIR",
    )
    near_duplicates: float | None = declared(PostFilterOptions, "near_duplicates", group=FILTERS)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_combinations()

    def _check_combinations(self) -> None:
        check_sides(self.src_lang, self.tgt_lang, self.tsv_columns)
        # Each stage's options check their own values when made, naming the flags.
        _ = (
            self.reader_options(),
            self.prefilter_options,
            self.group_options,
            self.calibration_options,
            self.margin_options,
            self.make_pairs_options,
            self.post_filter_options,
            self.contest_options,
            self.coherence_options,
        )
        check_backend(self.backend, self.quantize)
        if self.language_id != "py3langid":
            require_heliport(f"--language-id {self.language_id}")
        if self.hard_negative_accept is not None:
            require_faiss("--hard-negative-accept")
        self.resolved_score()

    def resolved_score(self) -> str:
        """The score a run cuts on: ``--score``, or by default margin with ``--threshold auto``.

        Margin is the default where it can be: on Tatoeba ces-eng and eng-pol
        with 20% noise it kept more true pairs than the cosine at the same or
        higher precision (docs/thresholds.md). A fixed ``--threshold`` is a
        cosine; margins are calibrated only (their scale depends on the data).

        Raises:
            UsageError: margin with a fixed threshold.
        """
        if self.score is None:
            return "margin" if self.threshold == "auto" else "cosine"
        if self.score == "margin" and self.threshold != "auto":
            raise UsageError(
                f"--score margin needs --threshold auto (got --threshold {self.threshold}): a "
                "margin's scale depends on the data, so its cut is calibrated; use --score "
                "cosine for a fixed cosine cut"
            )
        return self.score

    @property
    def filters(self) -> dict[str, Any]:
        """The prefilter's rules as the run applies them: the manifest's ``filters``."""
        options = self.prefilter_options
        return {
            "profile": self.profile,
            "junk_rules": list(options.junk_rules),
            "language_check": options.language_ratio,
            "language_id": self.language_id,
            "min_letter_share": options.limits.min_letter_share,
            "min_script_share": options.limits.min_script_share,
        }

    def reader_options(self, split_bytes: int = DEFAULT_SPLIT_BYTES) -> ReaderOptions:
        """ReadBitext's options: the settings' fields of their names, and ``split_bytes``.

        ``split_bytes`` spreads the reading: a ``RunSettings`` value.
        """
        fields = (f.name for f in dataclasses.fields(ReaderOptions) if f.name != "split_bytes")
        return ReaderOptions(
            split_bytes=split_bytes, **{name: getattr(self, name) for name in fields}
        )

    @property
    def prefilter_options(self) -> PrefilterOptions:
        """The Prefilter's options: the profile's rules with the run's overrides."""
        profile = PROFILES[self.profile]
        ratio = profile.language_ratio if self.language_check is None else self.language_check
        return PrefilterOptions(
            min_words=self.min_words,
            max_words=self.max_words,
            max_length_ratio=self.max_length_ratio,
            sentence_count_filter=self.sentence_count_filter,
            junk_rules=profile.rules if self.junk_rules is None else self.junk_rules,
            limits=Limits(
                min_letter_share=self.min_letter_share or profile.limits.min_letter_share,
                min_script_share=self.min_script_share or profile.limits.min_script_share,
            ),
            language_ratio=ratio or None,
            language_id=self.language_id,
            declared_scripts=declared_sides(self.src_lang, self.tgt_lang),
        )

    @property
    def group_options(self) -> GroupOptions:
        """GroupByPivot's and RegroupByPivot's options: the cap on a group."""
        return GroupOptions(self.max_group_size)

    @property
    def calibration_options(self) -> CalibrationOptions:
        """CalibrationSample's and CalibrateThreshold's options."""
        return CalibrationOptions(self.max_false_accept, self.calibration_sample)

    @property
    def margin_options(self) -> MarginOptions:
        """MarginScore's options, and the calibration's margin."""
        return MarginOptions(self.margin_k)

    @property
    def contest_options(self) -> ContestOptions:
        """RivalPairs' and ContestCandidates' option: the rival margin, or no contest."""
        return ContestOptions(self.rival_margin)

    @property
    def coherence_options(self) -> CoherenceOptions:
        """The group checks' options: CoherenceFilter, HardNegativeCut, group support."""
        return CoherenceOptions(
            self.max_false_accept,
            self.coherence_min_group,
            self.group_support,
            self.hard_negative_accept,
        )

    @property
    def make_pairs_options(self) -> MakePairsOptions:
        """MakePairs' options: the pair mode and its cap."""
        return MakePairsOptions(self.pair_mode, self.max_pairs_per_group)

    @property
    def post_filter_options(self) -> PostFilterOptions:
        """PostFilter's options, which MakePairs' cover mode heeds too."""
        return PostFilterOptions(self.near_equal, self.drop_inflection_pairs, self.near_duplicates)

    @property
    def calibrated(self) -> bool:
        """Whether the cut is calibrated on the data (``--threshold auto``)."""
        return self.threshold == "auto"

    @property
    def margin(self) -> bool:
        """Whether the cut applies to the margin (only ever calibrated): decided here alone."""
        return self.calibrated and self.resolved_score() == "margin"

    @property
    def fixed_threshold(self) -> float | None:
        """The fixed cut, or ``None`` where it is calibrated."""
        return None if self.calibrated else float(self.threshold)
