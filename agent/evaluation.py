"""Offline evaluation of the answering pipeline over a labelled set (dry runs: nothing stored or sent).

Each case is `{"room": "(1001) 대한물산", "question": "...", "expect": {...}}`, optionally with `history` (earlier
messages, oldest first: strings — the vendor's — or `{"role", "text"}`), `date` (`YYYY-MM-DD`, the day it is
asked), `topic` (for the per-topic table) and `expect`:

- `expect_status` (or `status`): answered / held / no_evidence / blocked;
- `must_contain`: strings the answer must hold — the right fact; an inner list is a choice (any one of them);
- `must_not_contain`: strings the answer must not hold (the other subject's value, an ended promotion …);
- `evidence_contains`: strings the evidence given to the model must hold (defaults to `must_contain`);
- `internal`: treat the room as staff-only.

Every case with `must_contain` is answerable; one expecting `no_evidence` / `held` / `blocked` is not. Each is
judged **right** (answerable: answered with every must-contain and no must-not-contain; unanswerable: the
guidance answer, held or blocked), **refused** (answerable, but guidance, held or blocked) or **wrong**
(answered without the right fact, with a forbidden text, or answered when it should not have been). The
**evidence hit** of an answerable case says whether the right fact was in the evidence the model was given —
for a real model the measure of retrieval apart from the model.

What must be zero, checked by code on the delivered text (the text that would be sent), not taken from the
pipeline's own bookkeeping: delivered violations (amounts, percentages, brands the evidence does not hold),
untrue action claims, other vendors' names in a vendor room, sentences handing the vendor to a person, wrong
answers, and answers with a heading fragment or a repeated sentence.
"""

import datetime
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.utils import timezone

from agent.answer_sources import answer_body
from agent.handoff import remove_handoffs
from agent.knowledge.passages import heading_only, unit_key
from agent.pipeline import QuestionContext, answer_compose, verification_names
from agent.selectors import reviews_marked_wrong, room_history, staff_correction_text
from agent.verification import ReportBucket, kinds_in_bucket, parse_quantities, split_sentences, verify_draft
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
    topic: str = ""
    verdict: str = ""  # "right" | "refused" | "wrong" | "" (nothing to judge)
    defects: list[str] = field(default_factory=list)  # heading fragments and repeated sentences in the answer
    handoffs: list[str] = field(default_factory=list)  # sentences handing the vendor to a person


@dataclass
class EvaluationReport:
    cases: list[CaseResult]

    def _count_bucket(self, bucket: ReportBucket) -> int:
        kinds = set(kinds_in_bucket(bucket))
        return sum(1 for case in self.cases for v in case.delivered_violations if v["kind"] in kinds)

    def as_dict(self) -> dict:
        answered = [c for c in self.cases if c.status in ("answered", "no_evidence")]
        latencies = sorted(c.latency_ms for c in self.cases) or [0]
        hits = [c.evidence_hit for c in self.cases if c.evidence_hit is not None]
        judged = [c for c in self.cases if c.verdict]
        return {
            "cases": len(self.cases),
            "delivered_violations": self._count_bucket(ReportBucket.UNSUPPORTED_VALUE),
            "untrue_action_claims": self._count_bucket(ReportBucket.ACTION_CLAIM),
            "other_vendor_leaks": self._count_bucket(ReportBucket.OTHER_VENDOR),
            "wrong_answers": sum(c.verdict == "wrong" for c in judged),
            "answer_defects": sum(len(c.defects) for c in self.cases),
            "delivered_handoffs": sum(len(c.handoffs) for c in self.cases),
            "held_rate": _rate(sum(c.status == "held" for c in self.cases), len(self.cases)),
            "answered_rate": _rate(len(answered), len(self.cases)),
            "evidence_hit_rate": _rate(sum(hits), len(hits)) if hits else None,
            "expectations_failed": sum(len(c.failed_expectations) for c in self.cases),
            "answerable_right_rate": self._right_rate(answerable=True),
            "unanswerable_right_rate": self._right_rate(answerable=False),
            "topics": self.topics(),
            "latency_ms_p50": statistics.median(latencies),
            "latency_ms_p95": latencies[max(0, int(len(latencies) * 0.95) - 1)],
        }

    def _right_rate(self, *, answerable: bool) -> float | None:
        group = [c for c in self.cases if c.verdict and (c.evidence_hit is not None) == answerable]
        return _rate(sum(c.verdict == "right" for c in group), len(group)) if group else None

    def topics(self) -> dict[str, dict[str, int]]:
        """right / refused / wrong (and evidence hits of answerable cases) per topic."""
        table: dict[str, dict[str, int]] = {}
        for case in self.cases:
            if not case.verdict:
                continue
            row = table.setdefault(case.topic or "-", {"right": 0, "refused": 0, "wrong": 0, "evidence_hit": 0})
            row[case.verdict] += 1
            row["evidence_hit"] += bool(case.evidence_hit)
        return dict(sorted(table.items()))

    @property
    def ok(self) -> bool:
        summary = self.as_dict()
        return not (
            summary["delivered_violations"]
            or summary["untrue_action_claims"]
            or summary["other_vendor_leaks"]
            or summary["wrong_answers"]
            or summary["answer_defects"]
            or summary["delivered_handoffs"]
        )


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
        if not isinstance(case.get("history", []), list):
            raise EvaluationFileInvalid(f"line {number}: 'history' must be a list of earlier messages")
        if case.get("date") is not None:
            try:
                datetime.date.fromisoformat(str(case["date"]))
            except ValueError as exc:
                raise EvaluationFileInvalid(f"line {number}: 'date' must be YYYY-MM-DD") from exc
        cases.append((number, case))
    return cases


def evaluate(cases: list[tuple[int, dict]], *, provider) -> EvaluationReport:
    return EvaluationReport([_evaluate_case(number, case, provider) for number, case in cases])


def _history(case: dict) -> list[dict]:
    items = []
    for entry in case.get("history", []):
        if isinstance(entry, str):
            entry = {"role": "user", "text": entry}
        items.append({"role": entry.get("role", "user"), "text": str(entry.get("text", "")), "sent_at": None})
    return items


def _evaluate_case(number: int, case: dict, provider) -> CaseResult:
    expect = case.get("expect", {})
    topic = str(case.get("topic", ""))
    resolution = room_name_resolve(case["room"])
    if resolution.status != Room.ResolutionStatus.MATCHED:
        result = CaseResult(number, case["question"], "blocked", "", 0, topic=topic)
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
        history=_history(case),
        asked_on=datetime.date.fromisoformat(case["date"]) if case.get("date") else None,
    )
    started = time.perf_counter()
    trace = answer_compose(context, provider=provider)
    latency = int((time.perf_counter() - started) * 1000)
    evidence_texts = [item.text for _, item in trace.evidence]
    result = CaseResult(number, case["question"], trace.outcome, trace.final_text, latency, topic=topic)
    if trace.final_text and trace.outcome == "answered":
        names = verification_names(vendor, internal=internal)
        # The references block is code's own addition (the FAQ entries' source URLs), not a draft to check.
        check = verify_draft(
            answer_body(trace.final_text),
            evidence=evidence_texts,
            record_evidence=[item.text for _, item in trace.evidence if item.source_kind == "record"],
            known_brands=names.brands,
            counterpart_names=names.counterpart,
            other_vendor_names=names.other_vendors,
            confirmed_actions=trace.confirmed_actions,
            question=case["question"],
            counterpart_brands=names.counterpart_brands,
        )
        result.delivered_violations = [v.as_dict() for v in check.violations]
        result.defects = answer_defects(trace.final_text)
        result.handoffs = remove_handoffs(answer_body(trace.final_text), evidence=evidence_texts)[1]
    _check_expectations(result, expect, evidence_texts=evidence_texts)
    return result


_REFUSED = ("no_evidence", "held", "blocked")


def _holds(text: str, wanted) -> bool:
    """A string is in the text; a list is a choice: any one of its strings is."""
    return any(option in text for option in wanted) if isinstance(wanted, list) else wanted in text


def _check_expectations(result: CaseResult, expect: dict, *, evidence_texts: list[str]) -> None:
    status = expect.get("expect_status", expect.get("status"))
    if status and status != result.status:
        result.failed_expectations.append(f"status {result.status} != {status}")
    for text in expect.get("answer_contains", []):
        if text not in result.answer:
            result.failed_expectations.append(f"answer lacks {text!r}")
    must = expect.get("must_contain", [])
    must_not = expect.get("must_not_contain", [])
    answer = answer_body(result.answer) if result.status == "answered" else ""
    missing = [wanted for wanted in must if not _holds(answer, wanted)]
    forbidden = [text for text in must_not if text in answer]
    if must:
        if result.status in _REFUSED:
            result.verdict = "refused"
        elif missing or forbidden:
            result.verdict = "wrong"
        else:
            result.verdict = "right"
    elif status in _REFUSED:
        result.verdict = "right" if result.status in _REFUSED else "wrong"
    elif must_not:
        result.verdict = "wrong" if forbidden else "right"
    if result.verdict == "wrong":
        result.failed_expectations += [f"answer lacks {wanted!r}" for wanted in missing]
        result.failed_expectations += [f"answer holds {text!r}" for text in forbidden]
    wanted = expect.get("evidence_contains", must)
    if wanted:
        result.evidence_hit = all(any(_holds(evidence, text) for evidence in evidence_texts) for text in wanted)


def answer_defects(answer: str) -> list[str]:
    """What no answer may hold: a heading (or heading path) line, or the same sentence twice."""
    defects, seen = [], set()
    for sentence in split_sentences(answer_body(answer)):
        if heading_only(sentence.text):
            defects.append(f"heading: {sentence.text}")
        key = unit_key(sentence.text)
        if key in seen:
            defects.append(f"repeated: {sentence.text}")
        seen.add(key)
    return defects


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 3) if whole else 0.0


# --- wrong answers become cases ---------------------------------------------------------------------------

REVIEW_TOPIC = "staff review"


def review_cases(review_ids: list[int] | None = None) -> list[dict]:
    """Every answer staff marked wrong as an evaluation case: the room, the question (with the history it was
    asked after and its date), and what the answer must and must not say.

    With what staff wrote it should have said (on the mark, or a correction they sent): its amounts and
    percentages must be in the answer and the answer must be `answered`; the wrong answer's figures that the
    correction does not hold must not be. Without one: the wrong answer's figures (or, holding none, its first
    sentence) must not come back. The reason, the wrong answer and the correction travel with the case
    (`review`) for whoever curates the set.
    """
    cases = []
    for review in reviews_marked_wrong(review_ids):
        question = review.question
        wrong = answer_body(review.text or "")
        # What staff wrote it should have said: on the wrong mark, else the correction they sent afterwards.
        correction = review.correction.strip() or staff_correction_text(question).strip()
        expect: dict = {}
        wanted = _figures(correction)
        if correction:
            expect["expect_status"] = "answered"
        if wanted:
            expect["must_contain"] = list(dict.fromkeys(raw for raw, _ in wanted))
        kept = {key for _, key in wanted}
        forbidden = [raw for raw, key in _figures(wrong) if key not in kept]
        if not forbidden and wrong and not correction:
            sentences = split_sentences(wrong)
            forbidden = [sentences[0].text] if sentences else []
        if forbidden:
            expect["must_not_contain"] = list(dict.fromkeys(forbidden))
        if question.room.kind == Room.Kind.INTERNAL:
            expect["internal"] = True
        history = room_history(room=question.room, before=question.message)
        cases.append(
            {
                "room": question.room.name,
                "question": question.text,
                "date": timezone.localtime(question.message.sent_at).date().isoformat(),
                "topic": REVIEW_TOPIC,
                **({"history": [{"role": h["role"], "text": h["text"]} for h in history]} if history else {}),
                "expect": expect,
                "review": {
                    "question_id": question.pk,
                    "reason": review.reason,
                    "wrong_answer": review.text,
                    "should_say": correction,
                    "marked_by": review.actor.get_username() if review.actor else "",
                    "marked_at": review.created_at.isoformat(),
                },
            }
        )
    return cases


def review_cases_jsonl(review_ids: list[int] | None = None) -> str:
    return "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in review_cases(review_ids))


def _figures(text: str) -> list[tuple[str, tuple]]:
    """The amounts and percentages of `text`: (as written, normalised key)."""
    return [(quantity.raw, (str(quantity.kind), quantity.value)) for quantity in parse_quantities(text)]
