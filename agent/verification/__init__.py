"""Draft verification: amounts, percentages, brands, other vendors and action claims checked in code.

A pure library (no Django, no database, no network). The agent calls ``verify_draft`` on every draft
and stores what it returns; see docs/verification.md.
"""

from agent.verification.brands import NameIndex, NameMatch, cached_name_index
from agent.verification.claims import ActionClaim, ActionKind, find_action_claims
from agent.verification.engine import (
    DEFAULT_SETTINGS,
    JUDGEABLE_KINDS,
    OTHER_VENDOR_PLACEHOLDER,
    Judge,
    JudgeRuling,
    JudgeVerdict,
    VerificationResult,
    VerificationSettings,
    Violation,
    ViolationKind,
    rule_on_answer,
    verify_draft,
)
from agent.verification.numbers import Quantity, QuantityKind, parse_quantities
from agent.verification.other_vendors import OtherVendors
from agent.verification.sentences import Sentence, split_sentences

__all__ = [
    "DEFAULT_SETTINGS",
    "JUDGEABLE_KINDS",
    "OTHER_VENDOR_PLACEHOLDER",
    "ActionClaim",
    "ActionKind",
    "Judge",
    "JudgeRuling",
    "JudgeVerdict",
    "NameIndex",
    "NameMatch",
    "OtherVendors",
    "Quantity",
    "QuantityKind",
    "Sentence",
    "VerificationResult",
    "VerificationSettings",
    "Violation",
    "ViolationKind",
    "cached_name_index",
    "find_action_claims",
    "parse_quantities",
    "rule_on_answer",
    "split_sentences",
    "verify_draft",
]
