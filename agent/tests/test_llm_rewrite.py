"""Follow-up questions rewritten into stand-alone search queries (seed 001 5.2)."""

import pytest

from agent.llm import LlmPermanentError, LlmTransientError
from agent.llm.local import LocalAnswerer, rewrite_follow_up
from agent.llm.prompts import NO_REWRITE, REWRITE_SYSTEM_PROMPT
from agent.llm.rewrite import RewriteResult, follow_up_candidate, query_rewrite
from agent.llm.scripted import ScriptedProvider


def _history(*texts):
    """Alternating vendor question / bot answer items, oldest first."""
    roles = ["user", "assistant"]
    return [
        {"role": roles[index % 2], "text": text, "sent_at": f"2026-09-10T10:0{index}:00+09:00"}
        for index, text in enumerate(texts)
    ]


@pytest.mark.parametrize(
    "question",
    [
        "그럼 얼마야?",
        "그거 재고 있나요? 다음 주 월요일까지 300개 정도 필요한데 가능한지 확인 부탁드립니다",
        "거기는 주말에도 배송 받으시나요 아니면 평일에만 받으시나요",
        "해당 제품의 반품 기준과 회수 일정을 자세하게 알고 싶습니다",
        "얼마야?",
        "어디서 사?",
        "가능해?",
        "정산 대금이 입금되는 날짜는 보통 매월 언제쯤인지 궁금합니다",
        "신규 거래처 등록할 때 필요한 서류와 절차를 알려주시겠어요",
    ],
)
def test_follow_up_candidates(question):
    """Deictic words, short questions (≤ 20 characters) and time/method/reason questions are candidates."""
    assert follow_up_candidate(question)


def test_a_long_question_without_markers_is_not_a_candidate_and_no_model_is_asked():
    """A long, self-contained question is searched as asked; the provider is not called."""
    provider = ScriptedProvider([])
    question = "대한물산 하이패스 단말기 납품 단가와 최소 주문 수량을 표로 정리해서 알려주세요"

    result = query_rewrite(question, _history("하이패스 단말기가 뭔가요?", "안내드립니다."), provider=provider)

    assert result == RewriteResult(question, False, "not_follow_up_candidate")
    assert provider.calls == []


def test_without_history_nothing_is_rewritten():
    """No earlier messages: the question is the query, and no model is asked."""
    provider = ScriptedProvider([])

    assert query_rewrite("그럼 얼마야?", [], provider=provider) == RewriteResult("그럼 얼마야?", False, "no_history")
    assert query_rewrite("그럼 얼마야?", _history("그럼 얼마야?"), provider=provider).reason == "no_history"
    assert provider.calls == []


@pytest.mark.parametrize(
    ("history", "question", "expected"),
    [
        (
            ("하이패스 단말기가 뭔가요?", "하이패스 단말기는 통행료 자동 결제 장치입니다."),
            "그럼 얼마야?",
            "하이패스 단말기 얼마야?",
        ),
        (("하이패스 단말기가 뭔가요?",), "그럼 어디서 사나요?", "하이패스 단말기 어디서 사나요?"),
        (("하이패스 단말기에 대해 알려줘",), "얼마야?", "하이패스 단말기 얼마야?"),
        # A noun phrase with a contrastive 은요 asks the earlier question about another subject.
        (
            ("김해 센터 반품 회수 요일이 바뀐다던데 저희도 해당돼요?",),
            "이천 센터 쪽은요?",
            "센터 반품 회수 요일 이천 센터 쪽은요?",
        ),
        # who asks is no topic; an earlier question about an aspect noun alone is about that noun
        (("저희 배송 주 몇회에요?",), "무슨 요일이요?", "배송 무슨 요일이요?"),
        (("저희 하이패스 단말기 얼마예요?",), "그럼 어디서 사나요?", "하이패스 단말기 어디서 사나요?"),
        # `그` before any noun, and `그때`, point back at the earlier topic
        (
            ("바른햇살 행사 할인율 몇 %예요?",),
            "그 할인 마지막 날이 언제예요?",
            "바른햇살 행사 할인 마지막 날이 언제예요?",
        ),
        (
            ("여름에 초록마당 두부 특가 했었죠?",),
            "그때 할인율이 몇 프로였죠?",
            "여름 초록마당 두부 할인율이 몇 프로였죠?",
        ),
    ],
)
def test_local_provider_rewrites_follow_ups(history, question, expected):
    """Seed 001 examples with the local provider: the earlier topic is put before the follow-up."""
    result = query_rewrite(question, _history(*history), provider=LocalAnswerer())

    assert result == RewriteResult(expected, True, "rewritten")


@pytest.mark.parametrize(
    ("history", "question"),
    [
        (("통행요금 조회해줘",), "안녕"),
        (("하이패스 설명",), "동김천 휴게소 메뉴 알려줘"),
        (("안녕하세요, 이번 주 발주 관련해서 문의드립니다.",), "결제 조건이 어떻게 되나요?"),
    ],
)
def test_local_provider_leaves_new_topics_alone(history, question):
    """Seed 001 examples: a greeting and a new topic are not rewritten."""
    result = query_rewrite(question, _history(*history), provider=LocalAnswerer())

    assert result == RewriteResult(question, False, "model_no_rewrite")


def test_llm_rewrite_uses_the_seed_prompt_and_strips_thinking():
    """With an LLM: the rewrite prompt holds the rules, the history (oldest first) and the question; the
    answer's `<think>` block is removed and the sentence becomes the query."""
    provider = ScriptedProvider(
        purpose_steps={
            "rewrite": [{"content": "<think>지시어 그럼</think>\n하이패스 단말기는 어디서 구매할 수 있나요?"}]
        }
    )
    history = _history("하이패스 단말기가 뭔가요?", "하이패스 단말기는 통행료 자동 결제 장치입니다.")

    result = query_rewrite("그럼 어디서 사나요?", history, provider=provider)

    assert result == RewriteResult("하이패스 단말기는 어디서 구매할 수 있나요?", True, "rewritten")
    (call,) = provider.calls
    assert call.purpose == "rewrite"
    assert call.messages[0] == {"role": "system", "content": REWRITE_SYSTEM_PROMPT}
    user = call.messages[1]["content"]
    assert (
        user.index("하이패스 단말기가 뭔가요?")
        < user.index("통행료 자동 결제 장치")
        < user.index("그럼 어디서 사나요?")
    )
    for rule in (NO_REWRITE, "지시어", "의도를 유지", "한 문장"):
        assert rule in REWRITE_SYSTEM_PROMPT


def test_llm_no_rewrite_keeps_the_question():
    """`__NO_REWRITE__` (even around a think block) means a new topic: the original question is searched."""
    provider = ScriptedProvider(purpose_steps={"rewrite": [{"content": "<think>새 주제</think>__NO_REWRITE__"}]})

    result = query_rewrite("안녕", _history("통행요금 조회해줘"), provider=provider)

    assert result == RewriteResult("안녕", False, "model_no_rewrite")


@pytest.mark.parametrize("failure", [LlmTransientError("timeout"), LlmPermanentError("HTTP 400")])
def test_provider_failure_keeps_the_original_question(failure):
    """A failed rewrite call is not a failed question: the original question is searched."""
    provider = ScriptedProvider(purpose_steps={"rewrite": [failure]})

    result = query_rewrite("그럼 얼마야?", _history("하이패스 단말기가 뭔가요?"), provider=provider)

    assert result == RewriteResult("그럼 얼마야?", False, "provider_failed")


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("하이패스 단말기 가격은 얼마인가요?\n하이패스 단말기 구매처는 어디인가요?", "invalid_output"),
        ("", "invalid_output"),
        ("<think>생각만 하고 끝</think>", "invalid_output"),
        ("하이패스 " * 60, "invalid_output"),
        ("그럼  얼마야?", "unchanged"),
    ],
)
def test_unusable_output_keeps_the_original_question(output, reason):
    """More than one sentence line, nothing, a run-on far longer than the question, or the question itself:
    the original question is searched."""
    provider = ScriptedProvider(purpose_steps={"rewrite": [{"content": output}]})

    result = query_rewrite("그럼 얼마야?", _history("하이패스 단말기가 뭔가요?"), provider=provider)

    assert result == RewriteResult("그럼 얼마야?", False, reason)


def test_labels_and_quotes_around_the_rewrite_are_removed():
    """A model that writes `재작성된 질문: "…"` still gives a clean query."""
    provider = ScriptedProvider(
        purpose_steps={"rewrite": [{"content": '재작성된 질문: "하이패스 단말기 가격은 얼마인가요?"'}]}
    )

    result = query_rewrite("얼마야?", _history("하이패스 단말기에 대해 알려줘"), provider=provider)

    assert result.query == "하이패스 단말기 가격은 얼마인가요?"
    assert result.rewritten


def test_the_question_at_the_end_of_the_history_is_not_its_own_context():
    """The pipeline may pass the room history including the tagged question itself; it is dropped from the
    history shown to the model."""
    provider = ScriptedProvider(purpose_steps={"rewrite": [{"content": NO_REWRITE}]})
    history = _history("하이패스 단말기가 뭔가요?", "안내드립니다.", "그럼 얼마야?")

    query_rewrite("그럼 얼마야?", history, provider=provider)

    assert provider.calls[0].messages[1]["content"].count("그럼 얼마야?") == 1


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("며칠 전까지 요청하면 돼요?", "납품 단가 올리 며칠 전까지 요청하면 돼요?"),
        ("신청은 언제까지 해요?", "납품 단가 올리 신청은 언제까지 해요?"),
        # A topic of its own beside the request: not a follow-up.
        ("반품 회수 요청은 며칠 걸려요?", ""),
    ],
)
def test_a_follow_up_that_only_asks_to_do_something_takes_the_earlier_topic(question, expected):
    """Asking to request or register something, or counting days, names no topic: what is requested comes from
    the earlier question."""
    assert rewrite_follow_up(question, ["납품 단가 올리고 싶은데 어떻게 해야 돼요?"]) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("11월 거는 언제 들어와요?", "10월 매입 정산액 11월 거는 언제 들어와요?"),
        # A topic of its own beside the period: not a follow-up.
        ("11월 광고비는 언제 들어와요?", ""),
    ],
)
def test_a_period_with_a_dependent_noun_asks_the_earlier_topic_again(question, expected):
    """`11월 거는`: another month of what the earlier question was about, not a topic of its own."""
    assert rewrite_follow_up(question, ["10월 매입 정산액 얼마예요?"]) == expected
