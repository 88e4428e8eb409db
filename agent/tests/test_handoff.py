"""No handoff, in code: sentences that hand the vendor to a person are removed like questions back, recorded in
the round, and the question lands in staff's attention list — whatever the model writes."""

import json

import pytest

from agent.handoff import HANDOFF_REASON, handoff_in, remove_handoffs
from agent.llm.fake_server import FakeOpenAIServer, FakeResponse, chat_completion_body
from agent.llm.openai_compat import OpenAICompatibleProvider
from agent.models import AnswerRun
from agent.selectors import questions_annotated, questions_needing_attention
from agent.services import question_process
from agent.tests.faults import PAYMENT_TERMS
from delivery.models import SendJob

HANDOFFS = [
    "담당자에게 연결해 드리겠습니다.",
    "상담원이 안내해 드릴 예정입니다.",
    "직원에게 전달하겠습니다.",
    "확인 후 연락드리겠습니다.",
    "담당자에게연결해드리겠습니다",
    "자세한 내용은 담당 MD가 회신드릴 예정입니다.",
    "해당 건은 담당 부서로 이관하겠습니다.",
    "추후 안내드리겠습니다.",
    "확인해서 알려드리겠습니다.",
    "문의 내용을 담당자에게 전달해 드렸습니다.",
    "고객센터로 문의해 주세요.",
    "매니저가 곧 연락할 겁니다.",
]
NOT_HANDOFFS = [
    "담당자 연락처는 02-1234-5678입니다.",
    "결제는 월말 마감 후 익월 10일입니다.",
    "직원 할인은 적용되지 않습니다.",
    "발주서는 매주 월요일에 전달됩니다.",
    "반품은 입고 후 7일 안에 가능합니다.",
    "담당 MD는 김민수 과장입니다.",
    "반품은 담당자 확인 후 처리됩니다.",
    "신규 거래처는 담당 MD가 배정됩니다.",
]


@pytest.mark.parametrize("sentence", HANDOFFS)
def test_handoff_sentences_are_found(sentence):
    assert handoff_in(sentence) is not None


@pytest.mark.parametrize("sentence", NOT_HANDOFFS)
def test_answers_are_not_handoffs(sentence):
    assert handoff_in(sentence) is None


def test_a_documented_procedure_naming_a_person_stays():
    """Sending the vendor to a person is a handoff — unless the evidence names that person (the procedure)."""
    sentence = "반품 요청은 담당자에게 요청해 주세요."
    assert handoff_in(sentence) is not None
    evidence = ["[반품 관리] 반품 요청은 담당자에게 메일로 요청해 주세요."]
    assert remove_handoffs(sentence, evidence=evidence) == (sentence, [])


def test_remove_handoffs_keeps_the_answer():
    text = "결제는 익월 10일입니다. 담당자에게 연결해 드리겠습니다."
    assert remove_handoffs(text) == ("결제는 익월 10일입니다.", ["담당자에게 연결해 드리겠습니다."])


def handing_off_model(*, draft: str, rewrite: str):
    def respond(body: dict) -> FakeResponse:
        messages = body["messages"]
        if "verdict" in messages[0]["content"]:
            return FakeResponse(200, chat_completion_body(content='{"verdict": "unsupported"}'))
        if body.get("tools") and not any(m["role"] == "tool" for m in messages):
            call = {"id": "c1", "name": "search_records", "arguments": json.dumps({"query": "결제 조건"})}
            return FakeResponse(200, chat_completion_body(content="", tool_calls=[call]))
        last = next(m for m in reversed(messages) if m["role"] == "user")
        return FakeResponse(200, chat_completion_body(content=rewrite if "초안 검증" in last["content"] else draft))

    return respond


@pytest.mark.django_db
@pytest.mark.parametrize("stubborn", [False, True], ids=["rewrites", "stubborn"])
def test_a_handoff_never_reaches_the_vendor_and_staff_see_the_question(answerable_question, stubborn):
    """Over real HTTP: the model ends its answer with a handoff; it is sent back, and whatever the model does the
    delivered answer holds none, the round records the removal, and the question is on the attention list."""
    question = answerable_question
    draft = f"{PAYMENT_TERMS} 담당자에게 연결해 드리겠습니다."
    with FakeOpenAIServer(handing_off_model(draft=draft, rewrite=draft if stubborn else PAYMENT_TERMS)) as server:
        provider = OpenAICompatibleProvider(base_url=server.base_url, model="fake-model", api_key="", max_retries=0)
        run = question_process(question.pk, provider=provider)
        feedback = [
            m["content"] for r in server.requests for m in r["body"]["messages"] if "사람에게 넘기거나" in m["content"]
        ]

    assert run.outcome == AnswerRun.Outcome.ANSWERED
    assert SendJob.objects.get(question=question).items.get().text == PAYMENT_TERMS
    first = run.rounds.get(number=0)
    assert first.removed == [{"text": "담당자에게 연결해 드리겠습니다.", "reason": HANDOFF_REASON}]
    assert feedback, "the model is told why the sentence went"
    assert run.handoff_removed
    assert questions_needing_attention().filter(pk=question.pk).exists()
    assert questions_annotated().get(pk=question.pk).handoff_removed
