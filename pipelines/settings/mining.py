"""MiningSettings: what decides the pairs of a run, typed, parsed once and checked in one place.

The languages, how records are read and judged, the model and its cut, the
filters and the pairing: change one of these and the run writes other pairs.
Where and how a job runs (inputs, output, workers, devices, deployment) is
``RunSettings`` (``running.py``); the mining graph takes only these, and only
a launcher (``paramine mine``, ``paramine refresh``, the Dataflow template)
holds both. A refresh table records a fingerprint of these settings and
re-mines every shard when it changes.

Each field is a stage's declaration (``schemas.options.declared``): the
stage's options class states the option once (its default, range, help,
parser and flag), and these settings place it in a ``--help`` section. Only
the launcher's own six (the sides, ``--format``, the evaluation sentences
kept out) are declared here. The ``paramine mine`` parser is generated from
the fields; a job file (``--config``) and the Python API are held to the
same rules. This module imports neither Beam nor torch, so ``paramine mine
--help`` answers at once.

Each stage's options are made here from the fields, one property per stage
(``reader_options``, ``profile_options``, ``prefilter_options``,
``cut_options``, ``encoder_options``, ...): the graph asks these, and making
them checks the values and the combinations within a stage.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from paramine.encoders.inference.options import EncoderOptions
from paramine.encoders.neighbours import require_faiss
from paramine.pipelines.core.groups import (
    ContestOptions,
    GroupOptions,
    MakePairsOptions,
    PostFilterOptions,
)
from paramine.pipelines.formats.base import DEFAULT_SPLIT_BYTES, ReaderOptions
from paramine.pipelines.formats.pivot_languages import check_sides, parse_pivot_langs
from paramine.pipelines.settings.values import BAD, FILTERS, IO, MODEL
from paramine.pipelines.stages.cut.rules.cut_options import CutOptions
from paramine.pipelines.stages.cut.rules.cuts import CalibrationOptions
from paramine.pipelines.stages.cut.rules.margin import MarginOptions
from paramine.pipelines.stages.filter.rules.pair_judge import PrefilterOptions
from paramine.pipelines.stages.filter.rules.profile_options import ProfileOptions
from paramine.pipelines.stages.filter.rules.scripts import declared_sides
from paramine.pipelines.thresholds.coherence import CoherenceOptions
from paramine.schemas.options import Settings, declared, option

INPUT_FORMATS = ("auto", "moses", "tsv", "tmx", "xces", "czeng")


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
    tsv_columns: tuple[int, int] | None = declared(ReaderOptions, "tsv_columns", group=IO)
    min_adequacy: float = declared(ReaderOptions, "min_adequacy", group=IO)
    min_language_score: float = declared(ReaderOptions, "min_language_score", group=IO)
    score_column: int | None = declared(ReaderOptions, "score_column", group=IO)
    score_property: str | None = declared(ReaderOptions, "score_property", group=IO)
    min_score: float | None = declared(ReaderOptions, "min_score", group=IO)
    xces_links: str = declared(ReaderOptions, "xces_links", group=IO)
    invalid_utf8: str = declared(ReaderOptions, "invalid_utf8", group=BAD)
    max_line_chars: int = declared(ReaderOptions, "max_line_chars", group=BAD)
    on_length_mismatch: str = declared(ReaderOptions, "on_length_mismatch", group=BAD)
    on_malformed_xml: str = declared(ReaderOptions, "on_malformed_xml", group=BAD)
    max_rejects_per_reason: int = declared(ReaderOptions, "max_rejects_per_reason", group=BAD)
    model: str = declared(EncoderOptions, "model", group=MODEL)
    prefix: str | None = declared(EncoderOptions, "prefix", group=MODEL)
    threshold: float | str = declared(CutOptions, "threshold", group=MODEL)
    score: str | None = declared(CutOptions, "score", group=MODEL)
    margin_k: int = declared(MarginOptions, "k", group=MODEL)
    max_false_accept: float = declared(CalibrationOptions, "max_false_accept", group=MODEL)
    calibration_sample: int = declared(CalibrationOptions, "sample_size", group=MODEL)
    backend: str = declared(EncoderOptions, "backend", group=MODEL)
    quantize: str | None = declared(EncoderOptions, "quantize", group=MODEL)
    min_words: int = declared(PrefilterOptions, "min_words", group=FILTERS)
    max_words: int = declared(PrefilterOptions, "max_words", group=FILTERS)
    max_length_ratio: float = declared(PrefilterOptions, "max_length_ratio", group=FILTERS)
    sentence_count_filter: bool = declared(PrefilterOptions, "sentence_count_filter", group=FILTERS)
    profile: str = declared(ProfileOptions, "profile", group=FILTERS)
    junk_rules: tuple[str, ...] | None = declared(ProfileOptions, "junk_rules", group=FILTERS)
    language_check: float | None = declared(ProfileOptions, "language_check", group=FILTERS)
    language_id: str = declared(ProfileOptions, "language_id", group=FILTERS)
    min_letter_share: float | None = declared(ProfileOptions, "min_letter_share", group=FILTERS)
    min_script_share: float | None = declared(ProfileOptions, "min_script_share", group=FILTERS)
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
            self.profile_options,
            self.prefilter_options,
            self.group_options,
            self.calibration_options,
            self.margin_options,
            self.make_pairs_options,
            self.post_filter_options,
            self.contest_options,
            self.coherence_options,
            self.cut_options,
            self.encoder_options,
        )
        if self.hard_negative_accept is not None:
            require_faiss("--hard-negative-accept")

    @property
    def filters(self) -> dict[str, Any]:
        """The prefilter's rules as the run applies them: the manifest's ``filters``."""
        return self.profile_options.record()

    @property
    def profile_options(self) -> ProfileOptions:
        """The corpus profile and its overrides, as the user chose them."""
        return ProfileOptions(
            self.profile,
            self.junk_rules,
            self.language_check,
            self.language_id,
            self.min_letter_share,
            self.min_script_share,
        )

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
        chosen = self.profile_options
        return PrefilterOptions(
            min_words=self.min_words,
            max_words=self.max_words,
            max_length_ratio=self.max_length_ratio,
            sentence_count_filter=self.sentence_count_filter,
            junk_rules=chosen.rules,
            limits=chosen.limits,
            language_ratio=chosen.language_ratio,
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
    def cut_options(self) -> CutOptions:
        """The cut's options: calibrated or fixed, on the cosine or the margin."""
        return CutOptions(self.threshold, self.score)

    @property
    def encoder_options(self) -> EncoderOptions:
        """The encoder's options: the model, its prefix, its backend."""
        return EncoderOptions(self.model, self.prefix, self.backend, self.quantize)
