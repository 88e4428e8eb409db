"""Offline evaluation of the answering pipeline over a labelled set (dry runs: nothing stored or sent).

Each case is `{"room": "(1001) 대한물산", "question": "...", "expect": {...}}` with optional expectations:
`status` (answered / held / no_evidence / blocked), `answer_contains` (strings), `evidence_contains` (strings
one of the evidence items must hold), `internal` (treat the room as staff-only).

What must be zero, checked by code on the delivered text (the text that would be sent), not taken from the
pipeline's own bookkeeping: delivered violations (amounts, percentages, brands the evidence does not hold),
untrue action claims, and other vendors' names in a vendor room.
"""

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from agent.pipeline import QuestionContext, answer_compose, verification_names
from agent.verification import verify_draft
from conversations.models import Room
from vendors.selectors import room_name_resolve, vendor_get_by_code


class EvaluationFileInvalid(ValueError):
    pass


@dataclass
class CaseResult:
    line: int
    question: str
    status: str
    answer: str
    latency_ms: int
    delivered_violations: list[dict] = field(default_factory=list)
    failed_expectations: list[str] = field(default_factory=list)
    evidence_hit: bool | None = None


@dataclass
class EvaluationReport:
    cases: list[CaseResult]

    def _count(self, kind: str) -> int:
        return sum(1 for case in self.cases for v in case.delivered_violations if v["kind"] == kind)

    def as_dict(self) -> dict:
        answered = [c for c in self.cases if c.status in ("answered", "no_evidence")]
        latencies = sorted(c.latency_ms for c in self.cases) or [0]
        hits = [c.evidence_hit for c in self.cases if c.evidence_hit is not None]
        value_kinds = ("amount", "percent", "percent_point", "brand_unsupported", "brand_misspelt")
        return {
            "cases": len(self.cases),
            "delivered_violations": sum(self._count(kind) for kind in value_kinds),
            "untrue_action_claims": self._count("action_claim"),
            "other_vendor_leaks": self._count("other_vendor"),
            "held_rate": _rate(sum(c.status == "held" for c in self.cases), len(self.cases)),
            "answered_rate": _rate(len(answered), len(self.cases)),
            "evidence_hit_rate": _rate(sum(hits), len(hits)) if hits else None,
            "expectations_failed": sum(len(c.failed_expectations) for c in self.cases),
            "latency_ms_p50": statistics.median(latencies),
            "latency_ms_p95": latencies[max(0, int(len(latencies) * 0.95) - 1)],
        }

    @property
    def ok(self) -> bool:
        summary = self.as_dict()
        return not (summary["delivered_violations"] or summary["untrue_action_claims"] or summary["other_vendor_leaks"])


def evaluation_cases_read(path: Path) -> list[tuple[int, dict]]:
    cases = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except ValueError as exc:
            raise EvaluationFileInvalid(f"line {number}: not JSON ({exc})") from exc
        if not isinstance(case, dict) or not isinstance(case.get("room"), str) or not case.get("question"):
            raise EvaluationFileInvalid(f"line {number}: needs a 'room' name and a 'question'")
        if not isinstance(case.get("expect", {}), dict):
            raise EvaluationFileInvalid(f"line {number}: 'expect' must be an object")
        cases.append((number, case))
    return cases


def evaluate(cases: list[tuple[int, dict]], *, provider) -> EvaluationReport:
    return EvaluationReport([_evaluate_case(number, case, provider) for number, case in cases])


def _evaluate_case(number: int, case: dict, provider) -> CaseResult:
    expect = case.get("expect", {})
    resolution = room_name_resolve(case["room"])
    if resolution.status != Room.ResolutionStatus.MATCHED:
        result = CaseResult(number, case["question"], "blocked", "", 0)
        _check_expectations(result, expect, evidence_texts=[])
        return result
    vendor = vendor_get_by_code(resolution.vendor_code)
    internal = bool(expect.get("internal"))
    context = QuestionContext(
        question_id=None,
        question_text=case["question"],
        vendor=vendor,
        room=None,
        room_kind=Room.Kind.INTERNAL if internal else Room.Kind.EXTERNAL,
    )
    started = time.perf_counter()
    trace = answer_compose(context, provider=provider)
    latency = int((time.perf_counter() - started) * 1000)
    evidence_texts = [item.text for _, item in trace.evidence]
    result = CaseResult(number, case["question"], trace.outcome, trace.final_text, latency)
    if trace.final_text and trace.outcome == "answered":
        names = verification_names(vendor, internal=internal)
        check = verify_draft(
            trace.final_text,
            evidence=evidence_texts,
            known_brands=names.brands,
            counterpart_names=names.counterpart,
            other_vendor_names=names.other_vendors,
            confirmed_actions=trace.confirmed_actions,
        )
        result.delivered_violations = [v.as_dict() for v in check.violations]
    _check_expectations(result, expect, evidence_texts=evidence_texts)
    return result


def _check_expectations(result: CaseResult, expect: dict, *, evidence_texts: list[str]) -> None:
    if "status" in expect and expect["status"] != result.status:
        result.failed_expectations.append(f"status {result.status} != {expect['status']}")
    for text in expect.get("answer_contains", []):
        if text not in result.answer:
            result.failed_expectations.append(f"answer lacks {text!r}")
    wanted = expect.get("evidence_contains", [])
    if wanted:
        result.evidence_hit = all(any(text in evidence for evidence in evidence_texts) for text in wanted)


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0
