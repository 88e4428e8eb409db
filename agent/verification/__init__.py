"""Draft verification: amounts, percentages, dates, times, quantities, contacts, swapped values, brands, other
vendors and action claims checked in code.

A pure library (no Django, no database, no network). The agent calls ``verify_draft`` on every draft
and stores what it returns; see docs/verification.md.
"""

from agent.verification.brands import NameIndex, NameMatch, cached_name_index
from agent.verification.claims import ActionClaim, ActionKind, find_action_claims
from agent.verification.engine import (
    DEFAULT_SETTINGS,
    OTHER_VENDOR_PLACEHOLDER,
    Judge,
    JudgeRuling,
    JudgeVerdict,
    VerificationResult,
    VerificationSettings,
    Violation,
    rule_on_answer,
    verify_draft,
)
from agent.verification.kinds import (
    GROUP_COLOURS,
    JUDGEABLE_KINDS,
    KINDS,
    KindInfo,
    ReportBucket,
    Research,
    ViolationKind,
    kind_group,
    kind_info,
    kind_label,
    kinds_in_bucket,
)
from agent.verification.numbers import Quantity, QuantityKind, parse_quantities
from agent.verification.other_vendors import OtherVendors
from agent.verification.sentences import Sentence, split_sentences
from agent.verification.values import Value, parse_values

__all__ = [
    "DEFAULT_SETTINGS",
    "GROUP_COLOURS",
    "JUDGEABLE_KINDS",
    "KINDS",
    "OTHER_VENDOR_PLACEHOLDER",
    "ActionClaim",
    "ActionKind",
    "Judge",
    "JudgeRuling",
    "JudgeVerdict",
    "KindInfo",
    "NameIndex",
    "NameMatch",
    "OtherVendors",
    "Quantity",
    "QuantityKind",
    "ReportBucket",
    "Research",
    "Sentence",
    "Value",
    "VerificationResult",
    "VerificationSettings",
    "Violation",
    "ViolationKind",
    "cached_name_index",
    "find_action_claims",
    "kind_group",
    "kind_info",
    "kind_label",
    "kinds_in_bucket",
    "parse_quantities",
    "parse_values",
    "rule_on_answer",
    "split_sentences",
    "verify_draft",
]
