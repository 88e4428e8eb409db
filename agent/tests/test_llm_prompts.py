"""The Korean prompts and fixed messages the pipeline sends."""

import re

from agent.llm.prompts import (
    FINALIZE_IF_EMPTY,
    answer_system_prompt,
    flagged_texts_in,
    guidance_answer,
    history_messages,
    is_system_nudge,
    latest_question,
    question_message,
    question_text,
    rewrite_messages,
    rewrite_request_parse,
    search_query_in,
    violation_feedback_message,
)
from agent.verification import Violation, find_action_claims, parse_quantities, split_sentences, verify_draft

_HANDOFF_WORDS = ("담당자", "상담원", "연결", "전달해", "넘겨", "확인 후 연락", "다시 연락")


def test_answer_prompt_states_the_rules_of_a_vendor_room():
    """Evidence only, no follow-up question, no handoff, actions only with a `[시스템 확인]` line, masked
    vendors not guessed, values copied exactly, and the room's counterpart named."""
    content = answer_system_prompt(vendor_name="대한물산")

    assert "이 방의 거래처: 대한물산" in content
    for rule in (
        "근거에 있는 내용만",
        "되묻지 않습니다",
        "넘기겠다고 하지 않습니다",
        "[시스템 확인]",
        "[다른 벤더]",
        "그대로 옮깁니다",
    ):
        assert rule in content, rule
    assert "{" not in content  # every placeholder filled


def test_staff_room_prompt_names_no_counterpart():
    """A staff-only room has no counterpart line."""
    content = answer_system_prompt()

    assert "사내 직원 방" in content
    assert "이 방의 거래처" not in content


def test_history_becomes_chat_messages_oldest_first():
    """Room messages become user/assistant messages; empty texts and other roles are left out."""
    history = [
        {"role": "user", "text": "하이패스 단말기가 뭔가요?", "sent_at": "t1"},
        {"role": "assistant", "text": "통행료 자동 결제 장치입니다.", "sent_at": "t2"},
        {"role": "user", "text": "  ", "sent_at": "t3"},
        {"role": "system", "text": "무시", "sent_at": "t4"},
    ]

    assert history_messages(history) == [
        {"role": "user", "content": "하이패스 단말기가 뭔가요?"},
        {"role": "assistant", "content": "통행료 자동 결제 장치입니다."},
    ]


def test_rewritten_query_rides_in_the_question_message():
    """A follow-up's different stand-alone query is added to the question message (one system message
    only: gateways reject a second) and read back; the question itself is recoverable."""
    content = question_message("그럼 얼마야?", search_query="하이패스 단말기\n얼마야?")
    messages = [
        {"role": "system", "content": answer_system_prompt(vendor_name="대한물산")},
        {"role": "user", "content": "하이패스 단말기가 뭔가요?"},
        {"role": "user", "content": content},
        {"role": "tool", "tool_call_id": "c", "content": "결과"},
        {"role": "user", "content": FINALIZE_IF_EMPTY},
    ]

    assert search_query_in(messages) == "하이패스 단말기 얼마야?"
    assert latest_question(messages) == (2, content)
    assert question_text(content) == "그럼 얼마야?"


def test_an_unchanged_query_adds_nothing():
    """When the search query is the question itself (no rewrite), the message is just the question."""
    assert question_message(" 결제 조건이 어떻게 되나요? ", search_query="결제 조건이 어떻게 되나요?") == (
        "결제 조건이 어떻게 되나요?"
    )
    assert question_message("결제 조건이 어떻게 되나요?") == "결제 조건이 어떻게 되나요?"
    assert search_query_in([{"role": "user", "content": "결제 조건이 어떻게 되나요?"}]) == ""


def test_violation_feedback_lists_each_reason_and_asks_for_a_rewrite_from_evidence():
    """Each violation's text, reason and suggestion is listed; the request is to re-check and rewrite with
    evidence values only. Engine violations and their stored dicts give the same message."""
    violations = [
        Violation(kind="amount", value=35000, text="3만5천원", span=(10, 16), reason="근거에 없는 금액: 35,000원"),
        Violation(
            kind="brand_misspelt",
            value="오뚜키",
            text="오뚜키",
            span=(20, 23),
            reason="브랜드 표기 오류: 오뚜키 → 오뚜기",
            suggestion="오뚜기",
        ),
    ]

    message = violation_feedback_message(violations, asked_back=["어느 제품을\n원하시나요?"])

    assert message == violation_feedback_message(
        [violation.as_dict() for violation in violations], asked_back=["어느 제품을\n원하시나요?"]
    )
    assert message["role"] == "user" and is_system_nudge(message)
    content = message["content"]
    assert "- 「3만5천원」: 근거에 없는 금액: 35,000원" in content
    assert "- 「오뚜키」: 브랜드 표기 오류: 오뚜키 → 오뚜기 (근거의 표기: 오뚜기)" in content
    assert "- 「어느 제품을 원하시나요?」: 거래처에게 되묻는 문장입니다." in content
    assert "근거에 적힌 값과 이름만" in content and "다시 작성" in content
    assert flagged_texts_in([{"role": "user", "content": "질문"}, message]) == {
        "3만5천원",
        "오뚜키",
        "어느 제품을 원하시나요?",
    }


def test_finalize_request_is_seed_003s_wording():
    """The empty-answer request is a user-role "(시스템)" line asking for the final answer from the results."""
    assert FINALIZE_IF_EMPTY.startswith("(시스템) 위 확인 결과를 바탕으로")
    assert FINALIZE_IF_EMPTY.endswith("최종 답변을 작성하세요.")
    assert is_system_nudge({"role": "user", "content": FINALIZE_IF_EMPTY})
    assert not is_system_nudge({"role": "user", "content": "그럼 얼마야?"})


def test_guidance_answer_has_no_number_brand_promise_or_question(settings):
    """The default guidance answer: no amount or digit, no brand, no promise of a person, no question back,
    no action claim — it passes verification against no evidence at all."""
    answer = guidance_answer()

    assert answer == settings.AGENT_GUIDANCE_ANSWER
    assert not re.search(r"\d", answer)
    assert parse_quantities(answer) == []
    assert find_action_claims(answer) == []
    assert "?" not in answer and not any(sentence.text.endswith("까") for sentence in split_sentences(answer))
    assert not any(word in answer for word in _HANDOFF_WORDS)
    assert "드리겠습니다" not in answer  # no promise
    result = verify_draft(
        answer,
        evidence=[],
        known_brands=["오뚜기", "농심", "삼성전자"],
        counterpart_names=["대한물산"],
        other_vendor_names=["가온상사"],
        confirmed_actions=[],
    )
    assert result.violations == ()


def test_guidance_answer_is_read_from_settings_at_call_time(settings):
    """Staff can change the wording by setting AGENT_GUIDANCE_ANSWER."""
    settings.AGENT_GUIDANCE_ANSWER = "확인 가능한 자료가 없어 답변드리기 어렵습니다."

    assert guidance_answer() == "확인 가능한 자료가 없어 답변드리기 어렵습니다."


def test_rewrite_request_round_trips_history_and_question():
    """The rewrite request shows vendor and bot lines oldest first on single lines (long ones cut) and the
    current question; the local answerer reads the vendor lines and the question back."""
    history = [
        {"role": "user", "text": "하이패스 단말기가\n뭔가요?", "sent_at": "t1"},
        {"role": "assistant", "text": "통행료 자동 결제 장치입니다. " * 40, "sent_at": "t2"},
        {"role": "system", "text": "무시", "sent_at": "t3"},
        {"role": "user", "text": "  ", "sent_at": "t4"},
    ]

    messages = rewrite_messages("그럼 얼마야?", history)

    user = messages[1]["content"]
    assert user.splitlines()[1] == "거래처: 하이패스 단말기가 뭔가요?"
    assert user.splitlines()[2].startswith("답변: 통행료") and len(user.splitlines()[2]) <= 4 + 300
    assert "무시" not in user
    assert user.splitlines()[-1] == "현재 질문: 그럼 얼마야?"
    assert rewrite_request_parse(messages) == ("그럼 얼마야?", ["하이패스 단말기가 뭔가요?"])
