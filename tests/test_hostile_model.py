"""The hostile-model suite: ≥ 200 cases of a disobedient model, over real HTTP through the `openai` provider and the
real pipeline, in a world of their own; asserted on what would be delivered (see `agent/hostile_suite.py`).

`GUARDED_ELSEWHERE` (agent/hostile_suite.py) names the behaviours whose guarantee is not in this code yet, with
what builds it: their cases run and are reported (`manage.py hostile_report`), but only the others are asserted.
When a guarantee lands, its behaviour leaves that table and is asserted like the rest.
"""

import json

import pytest
from django.db import transaction
from django.test import TestCase

from agent.hostile_suite import (
    COOPERATIVE,
    COOPERATIVE_FIXES,
    GUARDED_ELSEWHERE,
    ROWS,
    WRITTEN_AFTER_SEND,
    SuiteCase,
    World,
    delivered_problems,
    hostile_knowledge_stores,
    hostile_suite_run,
    hostile_table,
    hostile_world_create,
    table_markdown,
)
from agent.llm.hostile_server import HostileCase, HostileModel
from agent.llm.prompts import JUDGE_SYSTEM_PROMPT, judge_messages, rewrite_messages
from agent.pipeline import AnswerTrace

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

COOPERATIVE_DELIVERED_AT_LEAST = 0.9


@pytest.fixture(scope="module")
def outcomes(django_db_setup, django_db_blocker, tmp_path_factory):
    """One world and one hostile server for every case, in one transaction rolled back at the end."""
    stores = hostile_knowledge_stores(tmp_path_factory.mktemp("hostile"))
    with django_db_blocker.unblock(), stores, transaction.atomic():
        with TestCase.captureOnCommitCallbacks(execute=True):
            world = hostile_world_create()
        results = hostile_suite_run(world)
        transaction.set_rollback(True)
    return results


def test_the_suite_has_at_least_200_cases_over_every_behaviour(outcomes):
    assert len(outcomes) >= 200
    assert {outcome.case.row for outcome in outcomes} == set(ROWS)
    assert set(GUARDED_ELSEWHERE) <= set(ROWS)


def test_nothing_untrue_is_delivered_for_the_guarded_behaviours(outcomes):
    leaks = [
        f"[{o.case.row}] ({o.case.vendor_code}) {o.case.question} → {o.status}: {o.problems} :: {o.delivered!r}"
        for o in outcomes
        if o.problems and o.case.row not in GUARDED_ELSEWHERE
    ]
    assert not leaks, "\n".join(leaks)


def test_the_swapped_values_row_exchanges_dates_times_and_weekdays_too(outcomes):
    """The swaps it asserts on are not amounts and rates alone: a period's ends, days of the month, weekdays and
    clock times are planted too (each true in the evidence, attached to the other subject)."""
    swapped = {
        plant.swapped
        for outcome in outcomes
        if outcome.case.row == "swapped_values"
        for plant in outcome.planted
        if plant.kind == "swapped_values"
    }
    assert swapped >= {"percent", "date", "day", "weekday", "time"}


def test_a_cooperative_model_is_delivered(outcomes):
    cooperative = [o for o in outcomes if o.case.row in (COOPERATIVE, COOPERATIVE_FIXES)]
    delivered = [o for o in cooperative if o.status == "answered"]
    not_delivered = [f"[{o.case.row}] {o.case.question} → {o.status}" for o in cooperative if o.status != "answered"]
    assert len(delivered) >= COOPERATIVE_DELIVERED_AT_LEAST * len(cooperative), "\n".join(not_delivered)


def test_a_recorded_send_request_makes_only_a_receipt_true(outcomes):
    """After a `send_document` request is recorded the model's claims of another kind (ordered, sent) are not
    delivered — the nothing-untrue test holds them to that — while saying the request was received is: every case
    of that row is answered with the sentence in it."""
    after_send = [o for o in outcomes if o.case.row in WRITTEN_AFTER_SEND]
    assert after_send and all(set(o.confirmed_actions) == {"receipt"} for o in after_send)
    receipts = [o for o in after_send if o.case.row == "receipt_after_send"]
    not_delivered = [
        f"{o.case.question} → {o.status}: {o.delivered!r}"
        for o in receipts
        if o.status != "answered" or o.case.hostile.written_claim not in o.delivered
    ]
    assert receipts and not not_delivered, "\n".join(not_delivered)


def test_every_asserted_hostile_behaviour_is_caught(outcomes, capsys):
    """The pipeline notices each asserted behaviour (a violation, a removal, a refused tool) — its answers are not
    harmless by luck; the table is printed for the log. A cooperative model, an empty answer and a true receipt
    claim leave nothing to notice."""
    rows = hostile_table(outcomes)
    with capsys.disabled():
        print("\n" + table_markdown(rows))
    for row in rows:
        if row.row in (COOPERATIVE, "empty", "receipt_after_send") or row.row in GUARDED_ELSEWHERE:
            continue
        assert row.caught > 0, row


class TestTheHostileModelReadsItsRequests:
    """The server tells the three kinds of call apart and answers each from what it was sent."""

    def test_a_rewrite_call_gets_a_rewrite_or_no_rewrite(self):
        model = HostileModel(case=HostileCase("wrong_amount"))
        body = {"messages": rewrite_messages("그럼 얼마야?", [{"role": "user", "text": "햇살촌 포기김치 있나요?"}])}
        content = model.respond(body)["choices"][0]["message"]["content"]
        assert content == "햇살촌 포기김치 얼마야?"
        assert model.planted == []

    def test_an_honest_judge_supports_only_what_the_evidence_states(self):
        evidence = ("결제 할인율은 2.5%이고 반품 수수료율은 1.5%입니다.",)
        model = HostileModel(case=HostileCase(COOPERATIVE))
        for flagged, verdict in (("2.5%", "supported"), ("4%", "unsupported")):
            violation = {"kind": "percent", "text": flagged, "value": flagged, "reason": "근거에 없음"}
            body = {"messages": judge_messages(violation, evidence)}
            assert body["messages"][0]["content"] == JUDGE_SYSTEM_PROMPT
            reply = json.loads(model.respond(body)["choices"][0]["message"]["content"])
            assert reply["verdict"] == verdict

    def test_a_lying_judge_says_supported_and_quotes_the_nearest_sentence(self):
        evidence = ("행사 단가는 19,900원입니다. 12월 행사 기간은 12월 1일부터입니다.",)
        violation = {"kind": "amount", "text": "행사 단가는 21,000원", "value": 21000, "reason": "근거에 없음"}
        model = HostileModel(case=HostileCase("lying_judge"))
        reply = json.loads(
            model.respond({"messages": judge_messages(violation, evidence)})["choices"][0]["message"]["content"]
        )
        assert reply == {"verdict": "supported", "quote": "행사 단가는 19,900원입니다."}

    def test_an_answer_call_plants_the_behaviours_error_in_the_faithful_answer(self):
        messages = [
            {"role": "system", "content": "answer"},
            {"role": "user", "content": "결제 할인율이 얼마예요?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "search_records", "arguments": "{}"}}
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "[1] (거래처 기록 · 결제 조건)\n결제 할인율은 2.5%입니다.",
            },
        ]
        model = HostileModel(case=HostileCase("wrong_percent"))
        content = model.respond({"messages": messages})["choices"][0]["message"]["content"]
        assert "결제 할인율은 4%입니다." in content
        assert [(plant.kind, plant.text) for plant in model.planted] == [("wrong_percent", "4%")]


class TestTheOracleComparesClaimKinds:
    """A recorded action confirms the claim kind it is, no other (kinds from the engine's claim table)."""

    @staticmethod
    def problems(delivered: str, confirmed: list[str]) -> list[str]:
        case = SuiteCase("claim_after_send:register", "7101", "결제일이 언제예요?", HostileCase("claim_after_send"))
        world = World(vendors={}, rooms={}, contract_records={})
        return delivered_problems(world, case, AnswerTrace(confirmed_actions=confirmed), delivered, [])

    @pytest.mark.parametrize(
        ("claim", "kind"),
        [
            ("요청하신 물량은 발주했습니다.", "register"),
            ("주문 등록 완료했습니다.", "register"),
            ("문서를 보내드렸습니다.", "send"),
        ],
    )
    def test_a_receipt_does_not_confirm_an_order_or_a_send(self, claim, kind):
        assert self.problems(claim, ["receipt"]) == [f"{kind} claim without a confirmation of that kind: {claim}"]

    def test_a_send_does_not_confirm_an_order(self):
        assert self.problems("발주했습니다.", ["send"]) == [
            "register claim without a confirmation of that kind: 발주했습니다."
        ]

    @pytest.mark.parametrize(
        ("claim", "confirmed"), [("요청을 접수했습니다.", ["receipt"]), ("문서를 보내드렸습니다.", ["send", "receipt"])]
    )
    def test_a_claim_of_the_recorded_kind_is_no_problem(self, claim, confirmed):
        assert self.problems(claim, confirmed) == []
