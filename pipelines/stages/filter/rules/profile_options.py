"""ProfileOptions: the Prefilter's rules as a user chooses them, a corpus profile and its overrides.

``--profile`` sets four defaults at once (the rules, the language check's
ratio, the letters' and the script's shares: ``junk.PROFILES``); each of
them can be given on its own. These are the filter stage's declarations of
those six flags (``MiningSettings`` declares its fields from them); what
the Prefilter applies is resolved here (``rules``, ``limits``,
``language_ratio``) and handed to ``PrefilterOptions``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paramine.pipelines.stages.filter.rules.detectors import DEFAULT_DETECTOR, DETECTORS
from paramine.pipelines.stages.filter.rules.heliport_id import require_heliport
from paramine.pipelines.stages.filter.rules.junk import (
    DEFAULT_PROFILE,
    PROFILES,
    RULES,
    Limits,
    parse_rules,
)
from paramine.schemas.options import option, parse_fields, parse_share


def parse_ratio_or_off(value: Any) -> float:
    """A ratio in (0, 1], or 'off' (0.0: no check; 0 reads as off again)."""
    if str(value).strip().lower() == "off":
        return 0.0
    number = float(value)
    if number == 0.0:
        return 0.0
    if not 0.0 < number <= 1.0:
        raise ValueError(f"{number} is not a ratio in (0, 1], or 'off'")
    return number


@dataclass(frozen=True)
class ProfileOptions:
    """A corpus profile and the user's overrides of its four defaults.

    Attributes:
        profile: ``curated``, ``subtitles`` or ``web`` (``junk.PROFILES``).
        junk_rules: The heuristic rules; ``None``: the profile's.
        language_check: The language check's ratio, 0.0 for off; ``None``: the profile's.
        language_id: The language check's detector.
        min_letter_share: The letters rule's least share; ``None``: the profile's.
        min_script_share: The script rule's least share; ``None``: the profile's.
    """

    profile: str = option(
        DEFAULT_PROFILE,
        "the kind of corpus, which sets the defaults of the four options below: curated "
        "(Tatoeba, WMT, CzEng), subtitles (OpenSubtitles) or web (CCMatrix, ParaCrawl); "
        "docs/filters.md lists what each sets (default: %(default)s)",
        group=None,
        choices=tuple(PROFILES),
    )
    junk_rules: tuple[str, ...] | None = option(
        None,
        f"the heuristic rules applied, comma-separated ({', '.join(RULES)}), or none "
        "(default: the profile's)",
        group=None,
        parse=parse_rules,
        metavar="RULES",
    )
    language_check: float | None = option(
        None,
        "drop a pair whose pivot or candidate is not in its declared language (py3langid): a "
        "line that is another language by strong evidence (p(L) < 0.03 x p(it)) always, one "
        "with p(L) < RATIO x p(another) where that language is present on its side; a line "
        "the detector cannot judge is kept and counted as language_unchecked; 'off' to skip "
        "(default: the profile's, 0.3)",
        group=None,
        parse=parse_ratio_or_off,
        metavar="RATIO|off",
    )
    language_id: str = option(
        DEFAULT_DETECTOR,
        "the language check's detector: py3langid (139 languages), heliport (about 220; "
        "pip install 'paramine[heliport]', GPL-3.0), or py3langid+heliport (heliport only "
        "for the languages py3langid lacks) (docs/filters.md) (default: %(default)s)",
        group=None,
        choices=DETECTORS,
    )
    min_letter_share: float | None = option(
        None,
        "the letters rule: least share of letters among a line's non-space characters "
        "(default: the profile's, 0.5)",
        group=None,
        parse=parse_share,
    )
    min_script_share: float | None = option(
        None,
        "the script rule: least share of a line's letters in its language's script "
        "(default: the profile's, 0.8)",
        group=None,
        parse=parse_share,
    )

    def __post_init__(self) -> None:
        """Parse the declared options; heliport must be installed where it is asked for.

        Raises:
            UsageError: A bad value, or a detector that is not installed, naming the flag.
        """
        parse_fields(self)
        if self.language_id != "py3langid":
            require_heliport(f"--language-id {self.language_id}")

    @property
    def rules(self) -> tuple[str, ...]:
        """The heuristic rules the run applies."""
        profile = PROFILES[self.profile]
        return profile.rules if self.junk_rules is None else self.junk_rules

    @property
    def limits(self) -> Limits:
        """The rules' thresholds: the profile's, where not given."""
        limits = PROFILES[self.profile].limits
        return Limits(
            min_letter_share=self.min_letter_share or limits.min_letter_share,
            min_script_share=self.min_script_share or limits.min_script_share,
        )

    @property
    def language_ratio(self) -> float | None:
        """The language check's ratio; ``None``: no check."""
        profile = PROFILES[self.profile]
        ratio = profile.language_ratio if self.language_check is None else self.language_check
        return ratio or None

    def record(self) -> dict[str, Any]:
        """The rules as the run applies them: the manifest's ``filters``."""
        limits = self.limits
        return {
            "profile": self.profile,
            "junk_rules": list(self.rules),
            "language_check": self.language_ratio,
            "language_id": self.language_id,
            "min_letter_share": limits.min_letter_share,
            "min_script_share": limits.min_script_share,
        }
