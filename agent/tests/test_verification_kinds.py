"""The one table of violation kinds: complete, and read by every place that handles violations by kind."""

from agent.evaluation import CaseResult, EvaluationReport
from agent.llm.prompts import judge_messages
from agent.pipeline import _research_query
from agent.templatetags.agent_admin import violation_group, violation_group_styles, violation_kind_label
from agent.verification import (
    GROUP_COLOURS,
    JUDGEABLE_KINDS,
    KINDS,
    ReportBucket,
    Research,
    Violation,
    ViolationKind,
    kinds_in_bucket,
)
from agent.verification.kinds import ENGINE_KINDS


def test_every_kind_has_one_entry_with_a_known_group():
    assert set(KINDS) == {str(kind) for kind in ViolationKind}
    for info in KINDS.values():
        assert info.group in GROUP_COLOURS, info.kind
        assert info.label and info.judge_label
    assert "other" in GROUP_COLOURS  # what an unknown kind is shown as


def test_the_judge_never_rules_on_other_vendors_claims_or_asking_back():
    assert {"other_vendor", "action_claim", "asks_back"}.isdisjoint(JUDGEABLE_KINDS)
    assert {"amount", "percent", "percent_point", "brand_unsupported", "brand_misspelt"} <= JUDGEABLE_KINDS


def test_every_engine_kind_is_counted_by_the_evaluation():
    counted = set()
    for bucket in ReportBucket:
        if bucket != ReportBucket.NONE:
            counted |= set(kinds_in_bucket(bucket))
    assert set(ENGINE_KINDS) <= counted


def test_admin_labels_groups_and_styles_come_from_the_table():
    styles = str(violation_group_styles())
    for kind, info in KINDS.items():
        assert violation_kind_label(kind) == info.label
        assert violation_group(kind) == info.group
    for group in GROUP_COLOURS:
        assert f"mark.violation-{group} " in styles and f".kind-chip.violation-{group} " in styles
    assert violation_kind_label("unknown_kind") == "unknown_kind" and violation_group("unknown_kind") == "other"


def test_the_judge_prompt_names_the_kind_by_its_table_label():
    for kind in JUDGEABLE_KINDS:
        violation = {"kind": str(kind), "text": "x", "value": 1, "reason": "r"}
        assert f"종류: {KINDS[kind].judge_label}" in judge_messages(violation, ["근거"])[1]["content"]


def test_the_research_query_follows_the_table():
    for kind, info in KINDS.items():
        violation = Violation(kind=kind, value=None, text="깃발", span=(0, 2), reason="")
        added = _research_query("질문", [violation]) != "질문"
        assert added is (info.research == Research.FLAGGED_TEXT), kind


def test_the_evaluation_counts_by_bucket():
    case = CaseResult(line=1, question="q", status="answered", answer="a", latency_ms=1)
    case.delivered_violations = [{"kind": kind} for kind in KINDS]
    summary = EvaluationReport([case]).as_dict()
    assert summary["delivered_violations"] == len(kinds_in_bucket(ReportBucket.UNSUPPORTED_VALUE))
    assert summary["untrue_action_claims"] == 1
    assert summary["other_vendor_leaks"] == len(kinds_in_bucket(ReportBucket.OTHER_VENDOR)) == 2  # names, figures
