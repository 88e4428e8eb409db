"""The local deterministic answerer: it searches first, then repeats only relevant evidence sentences."""

import json

import pytest

from agent.evaluation import answer_defects
from agent.llm import LlmReply, ToolSpec, korean_text, tool_result_message
from agent.llm.focus import joined_value_aspects, question_focus
from agent.llm.local import LocalAnswerer, answer_sentences, evidence_statements, rewrite_follow_up
from agent.llm.prompts import (
    FINALIZE_IF_EMPTY,
    answer_system_prompt,
    question_message,
    rewrite_messages,
    violation_feedback_message,
)
from agent.verification import verify_draft

QUERY_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
TOOLS = [
    ToolSpec("search_records", "이 거래처의 계약·주문·정산 자료를 검색합니다.", QUERY_SCHEMA),
    ToolSpec("search_faq", "FAQ를 검색합니다.", QUERY_SCHEMA),
    ToolSpec("recommend_products", "상품을 추천합니다.", {"type": "object", "properties": {}}),
    ToolSpec("send_document", "자료를 방에 보냅니다.", {"type": "object", "properties": {}}),
]
# Tool results as the retrieval tools write them (numbered items with source and title, masked names).
FAQ_RESULT = (
    "[1] (FAQ · 하이패스 단말기는 어디서 사나요?)\n"
    "질문: 하이패스 단말기는 어디서 사나요?\n"
    "답변: 하이패스 단말기는 전국 고속도로 영업소와 온라인 쇼핑몰에서 구매할 수 있습니다. "
    "하이패스 단말기 가격은 3만원대부터입니다.\n"
    "출처: https://example.com/faq/1\n\n"
    "[2] (FAQ · 경차 통행료 감면은 얼마인가요?)\n"
    "질문: 경차 통행료 감면은 얼마인가요?\n"
    "답변: 경차는 통행료의 50%가 감면됩니다."
)
RECORDS_RESULT = (
    "[1] (거래처 기록 · 2026 하이패스 단말기 납품 계약)\n"
    "[계약] 2026 하이패스 단말기 납품 계약\n"
    "납품 단가: 30,000원 · 결제 조건: 월말 정산\n"
    "적용 기간: 2026-01-01 ~ 2026-12-31\n\n"
    "[2] (거래처 기록 · 경쟁사 단가 비교)\n"
    "[다른 벤더]의 하이패스 단말기 납품 단가는 28,000원입니다.\n"
    "하이패스 단말기 배송은 주문 후 3일 이내 출고됩니다.\n"
    "https://example.com/records/42\n\n"
    "(참고: 다른 벤더 이름 1곳을 [다른 벤더]로 가렸습니다. 추측하지 마세요.)"
)
SYSTEM = {"role": "system", "content": answer_system_prompt(vendor_name="대한물산")}


def _run(question, results, *, tools=TOOLS, history=()):
    """Ask, answer the local answerer's tool calls with `results` (by tool name), and return the final reply,
    the conversation and the first reply."""
    answerer = LocalAnswerer()
    messages = [SYSTEM, *history, {"role": "user", "content": question}]
    first = answerer.chat(messages, tools=tools)
    messages.append(first.as_message())
    for call in first.tool_calls:
        messages.append(tool_result_message(call.id, results.get(call.name, "")))
    return answerer.chat(messages, tools=tools), messages, first


def _hub(*passages):
    """A hub search result of one item per (document title, section, sentence), as the hub tool writes it."""
    return "\n\n".join(
        f"[{number}] (지식 허브 · {title})\n[{title} > {section}] {text}"
        for number, (title, section, text) in enumerate(passages, start=1)
    )


def _answer(question, results):
    """The body sentences of the final answer to `question`, the tools answered with `results`."""
    return _body(_run(question, results)[0].content)


def _body(answer):
    """The answer's lines: evidence sentences only, no frame around them."""
    return answer.splitlines()


def test_first_turn_calls_every_offered_search_tool_with_the_question():
    """With tools offered and no results yet, it asks for every `search_*` tool with the question as the
    query, and for nothing else (no recommendations, never an action)."""
    answerer = LocalAnswerer()
    messages = [SYSTEM, {"role": "user", "content": "결제 조건이 어떻게 되나요?"}]

    reply = answerer.chat(messages, tools=TOOLS)

    assert reply.content == ""
    assert [call.name for call in reply.tool_calls] == ["search_records", "search_faq"]
    assert all(call.arguments == {"query": "결제 조건이 어떻게 되나요?"} for call in reply.tool_calls)
    assert len({call.id for call in reply.tool_calls}) == 2
    assert (reply.provider, reply.model) == ("local", "local-extractive")


def test_rewritten_follow_up_query_in_the_question_message_is_searched_and_answered():
    """When the question message carries the rewritten follow-up query, that query is searched, and the
    answer is chosen for it (the bare "그럼 얼마야?" names no topic)."""
    history = [
        {"role": "user", "content": "하이패스 단말기가 뭔가요?"},
        {"role": "assistant", "content": "하이패스 단말기는 통행료 자동 결제 장치입니다."},
    ]
    content = question_message("그럼 얼마야?", search_query="하이패스 단말기 얼마야?")

    reply, _, first = _run(content, {"search_faq": FAQ_RESULT}, history=history)

    assert {call.arguments["query"] for call in first.tool_calls} == {"하이패스 단말기 얼마야?"}
    assert "하이패스 단말기 가격은 3만원대부터입니다." in _body(reply.content)


def test_the_answer_is_the_sentence_holding_the_asked_value_for_the_subject():
    """A price question is answered with the statement holding the price of the asked product, word for word and
    fact first; sentences that only share the topic (delivery, where to buy), question lines, sources, URLs and
    other vendors' sentences are left out. The vendor's own record names the product as fully as the FAQ sentence
    (in its heading) and states its price: for a value, the vendor's own record wins over shared knowledge."""
    reply, _, _ = _run(
        "하이패스 단말기 가격이 얼마인가요?", {"search_faq": FAQ_RESULT, "search_records": RECORDS_RESULT}
    )

    assert _body(reply.content) == ["납품 단가: 30,000원"]
    assert "[다른 벤더]" not in reply.content
    assert "28,000원" not in reply.content
    assert "질문:" not in reply.content and "출처" not in reply.content and "http" not in reply.content
    assert reply.tool_calls == []


def test_the_price_sentence_wins_when_only_one_sentence_is_allowed(settings):
    """LOCAL_ANSWER_MAX_SENTENCES caps the sentences; a sentence that answers the asked aspect (얼마 → an
    amount) ranks above one that only shares the topic."""
    settings.LOCAL_ANSWER_MAX_SENTENCES = 1

    reply, _, _ = _run("하이패스 단말기 가격이 얼마인가요?", {"search_faq": FAQ_RESULT})

    assert _body(reply.content) == ["하이패스 단말기 가격은 3만원대부터입니다."]


def test_passages_about_another_topic_are_not_used_for_a_shared_aspect_word():
    """A question naming a topic takes sentences only from passages that mention it: another product's
    "단가 12,500원" is no answer to the 하이패스 단말기 price, and the other way round."""
    products = "[1] (거래처 기록 · 진라면 세트)\n오뚜기 진라면 세트 (SKU-00001) 단가 12,500원"
    results = {"search_records": RECORDS_RESULT + "\n\n" + products}

    reply, _, _ = _run("하이패스 단말기 납품 단가가 얼마인가요?", results)
    assert "진라면" not in reply.content
    assert "납품 단가: 30,000원" in _body(reply.content)

    reply, _, _ = _run("진라면 세트 단가 알려주세요", results)
    assert _body(reply.content) == ["오뚜기 진라면 세트 (SKU-00001) 단가 12,500원"]


def test_answer_lines_keep_the_answer_of_a_labelled_line_and_record_facts():
    """`답변: …` keeps its answer; `라벨: 값` facts of a record are kept as written."""
    reply, _, _ = _run("경차 통행료 감면은 얼마인가요?", {"search_faq": FAQ_RESULT})
    assert _body(reply.content) == ["경차는 통행료의 50%가 감면됩니다."]

    reply, _, _ = _run("결제 조건이 어떻게 되나요?", {"search_records": RECORDS_RESULT})
    assert _body(reply.content) == ["결제 조건: 월말 정산"]

    reply, _, _ = _run("납품 계약 적용 기간이 언제까지인가요?", {"search_records": RECORDS_RESULT})
    assert _body(reply.content) == ["적용 기간: 2026-01-01 ~ 2026-12-31"]


def test_nothing_relevant_gives_an_empty_answer():
    """Evidence about something else → "" (the pipeline then sends the guidance answer)."""
    reply, _, _ = _run(
        "반품 택배 회수 기사는 언제 오나요?", {"search_faq": FAQ_RESULT, "search_records": RECORDS_RESULT}
    )

    assert reply.content == ""
    assert reply.tool_calls == []


def test_empty_tool_results_give_an_empty_answer_and_no_second_search():
    """Searches that found nothing are still this turn's results: it does not search again, it answers ""."""
    reply, _, first = _run("하이패스 단말기 가격이 얼마인가요?", {})

    assert len(first.tool_calls) == 2
    assert reply == LlmReply(content="", provider="local", model="local-extractive", latency_ms=reply.latency_ms)


def test_every_answer_sentence_is_copied_from_the_evidence_and_passes_verification():
    """It never writes a value of its own: each body line occurs in a tool result, and the whole answer passes
    the verification engine against that evidence (no amount, brand or claim it could have invented)."""
    evidence = [FAQ_RESULT, RECORDS_RESULT]
    for question in [
        "하이패스 단말기 가격이 얼마인가요?",
        "납품 단가가 얼마인가요?",
        "경차 통행료 감면은 얼마인가요?",
        "하이패스 단말기 배송은 언제 되나요?",
    ]:
        reply, _, _ = _run(question, {"search_faq": FAQ_RESULT, "search_records": RECORDS_RESULT})
        body = _body(reply.content)
        assert body, question
        assert all(any(line in result for result in evidence) for line in body), question
        result = verify_draft(
            reply.content,
            evidence=evidence,
            known_brands=["하이패스"],
            counterpart_names=["대한물산"],
            other_vendor_names=["가온상사"],
            confirmed_actions=[],
        )
        assert result.violations == (), (question, result.violations)


def test_there_is_no_frame_around_the_fact():
    """No boilerplate before or after the answer: its first line is the evidence sentence itself."""
    reply, _, _ = _run("경차 통행료 감면은 얼마인가요?", {"search_faq": FAQ_RESULT})

    assert reply.content == "경차는 통행료의 50%가 감면됩니다."


def test_a_limit_is_not_the_value_and_the_vendors_record_wins_over_shared_knowledge():
    """A discount question is answered by the vendor's promotion, not by the shared policy's maximum; the record's
    own sentence is preferred to its "label: value" pair."""
    records = (
        "[1] (거래처 기록 · 11~12월 프로모션)\n[프로모션] 11~12월 프로모션\n행사 기간 중 전 품목 15% 할인합니다.\n"
        "할인율: 15% · 최소 주문: 20박스"
    )
    hub = (
        "[1] (지식 허브 · 프로모션 운영 기준)\n"
        "[프로모션 운영 기준 > 할인율 한도] 행사 할인율은 정상가 대비 최대 50%까지입니다."
    )

    reply, _, _ = _run("할인율이 얼마예요?", {"search_records": records, "search_faq": hub})

    assert _body(reply.content) == ["행사 기간 중 전 품목 15% 할인합니다."]
    reply, _, _ = _run("행사 할인율은 최대 몇 %까지 되나요?", {"search_faq": hub})
    assert _body(reply.content) == ["행사 할인율은 정상가 대비 최대 50%까지입니다."]


def test_a_section_path_gives_context_but_is_never_an_answer():
    """Hub lines `[path] sentence`: the path names the subject (정산) for a sentence that does not; a heading line
    alone is never a statement."""
    hub = (
        "[1] (지식 허브 · 정산 일정)\n정산 일정 > 정산 주기\n"
        "[정산 일정 > 정산 주기] 대금은 다음 달 15일에 지급합니다.\n"
        "[정산 일정 > 세금계산서] 세금계산서는 다음 달 5일까지 발행합니다."
    )

    reply, _, _ = _run("정산일이 언제예요?", {"search_faq": hub})

    assert _body(reply.content) == ["대금은 다음 달 15일에 지급합니다."]


def test_the_same_aspect_for_another_subject_or_place_is_no_answer():
    """Another centre's hours do not answer a question about this one: no answer, so the guidance answer."""
    hub = "[1] (지식 허브 · 입고 기준)\n[입고 기준 > 센터별] 이천 물류센터: 평일 오전 7시부터 오후 4시까지 입고합니다."

    reply, _, _ = _run("평택 물류센터 입고 시간 알려주세요", {"search_faq": hub})

    assert reply.content == ""


def test_same_input_gives_the_same_output():
    """Deterministic: the same conversation gives the same reply, tool-call ids included."""
    first, _, first_calls = _run(
        "하이패스 단말기 가격이 얼마인가요?", {"search_faq": FAQ_RESULT, "search_records": RECORDS_RESULT}
    )
    second, _, second_calls = _run(
        "하이패스 단말기 가격이 얼마인가요?", {"search_faq": FAQ_RESULT, "search_records": RECORDS_RESULT}
    )

    assert first.content == second.content
    assert first_calls.tool_calls == second_calls.tool_calls


def test_violation_feedback_searches_again_and_drops_the_flagged_sentences():
    """After a violation feedback message it searches again (the re-search round), then leaves out every
    sentence holding a flagged text."""
    answerer = LocalAnswerer()
    reply, messages, _ = _run("하이패스 단말기 가격이 얼마인가요?", {"search_faq": FAQ_RESULT})
    assert "3만원대" in reply.content
    messages.append(reply.as_message())
    messages.append(
        violation_feedback_message([{"text": "3만원대", "reason": "근거에 없는 금액: 30,000원", "suggestion": None}])
    )

    research = answerer.chat(messages, tools=TOOLS)
    assert [call.name for call in research.tool_calls] == ["search_records", "search_faq"]
    assert len({call.id for call in research.tool_calls} | {"local_call_1", "local_call_2"}) == 4
    messages.append(research.as_message())
    for call in research.tool_calls:
        messages.append(tool_result_message(call.id, FAQ_RESULT if call.name == "search_faq" else ""))

    rewritten = answerer.chat(messages, tools=TOOLS)

    # Without the flagged sentence nothing left states the price: no answer (never the where-to-buy sentence).
    assert rewritten.content == ""


def test_finalize_nudge_answers_from_the_results_without_searching_again():
    """Seed 003's finalize request continues the turn: it composes from the results it has."""
    reply, messages, _ = _run("하이패스 단말기 가격이 얼마인가요?", {"search_faq": FAQ_RESULT})
    messages.append({"role": "assistant", "content": ""})
    messages.append({"role": "user", "content": FINALIZE_IF_EMPTY})

    again = LocalAnswerer().chat(messages, tools=TOOLS)

    assert again.tool_calls == []
    assert again.content == reply.content


def test_without_tools_it_answers_from_results_already_in_the_conversation():
    """No tools offered (a final-answer call): no tool calls; the answer comes from earlier tool results, or
    is empty when there are none."""
    _, messages, _ = _run("하이패스 단말기 가격이 얼마인가요?", {"search_faq": FAQ_RESULT})

    assert "3만원대" in LocalAnswerer().chat(messages).content
    assert LocalAnswerer().chat(messages[:2]).content == ""


def test_tool_boilerplate_is_never_an_answer():
    """`검색 결과가 없습니다.`, refusals and errors from the tools are not evidence sentences."""
    results = {
        "search_faq": "검색 결과가 없습니다.",
        "search_records": "[도구 거부] 이 방에서는 사용할 수 없는 도구입니다. 검색 결과 없음",
    }

    reply, _, _ = _run("검색 결과가 없는 이유가 뭔가요?", results)

    assert reply.content == ""


def test_json_tool_results_contribute_their_text_fields():
    """A tool that returns JSON: text fields are evidence; references, URLs and scores are not."""
    result = json.dumps(
        {
            "items": [
                {
                    "reference": "faq:17",
                    "url": "https://example.com/faq/17",
                    "score": 0.91,
                    "text": "질문: 정산 주기는?\n답변: 정산은 매월 말일에 진행됩니다.",
                }
            ]
        },
        ensure_ascii=False,
    )

    reply, _, _ = _run("정산 주기가 어떻게 되나요?", {"search_faq": result})

    assert _body(reply.content) == ["정산은 매월 말일에 진행됩니다."]


def test_a_sentence_sharing_one_word_with_a_long_question_is_no_answer():
    """The subject must be named: one shared word (공사) of a question about a lane construction schedule is not
    enough."""
    sentences = answer_sentences(
        "하이패스 단말기 전용 차로 설치 공사 일정 알려주세요",
        ["경차는 통행료의 50%가 감면됩니다.\n공사 현장 안전 수칙을 지켜 주세요."],
    )
    assert sentences == []


def test_judge_purpose_never_clears_a_violation():
    """The local answerer cannot rule on what code could not decide: always "unsupported"."""
    reply = LocalAnswerer().chat([{"role": "user", "content": "판정"}], purpose="judge")

    assert json.loads(reply.content) == {"verdict": "unsupported", "quote": ""}


@pytest.mark.parametrize(
    ("history", "question", "expected"),
    [
        (["하이패스 단말기가 뭔가요?"], "그럼 얼마야?", "하이패스 단말기 얼마야?"),
        (["하이패스 단말기가 뭔가요?"], "그럼 어디서 사나요?", "하이패스 단말기 어디서 사나요?"),
        (["하이패스 단말기에 대해 알려줘"], "얼마야?", "하이패스 단말기 얼마야?"),
        (["하이패스 단말기에 대해 알려줘"], "신청 방법은?", "하이패스 단말기 신청 방법은?"),
        (["A상품 납품가 알려주세요"], "그 제품은 언제 와?", "A상품 언제 와?"),
        (["통행요금 조회해줘"], "안녕", "__NO_REWRITE__"),
        (["하이패스 설명"], "동김천 휴게소 메뉴 알려줘", "__NO_REWRITE__"),
        (["하이패스 단말기가 뭔가요?"], "하이패스 단말기 얼마야?", "__NO_REWRITE__"),
        (["네 감사합니다"], "그럼 얼마야?", "__NO_REWRITE__"),
    ],
)
def test_rewrite_purpose_applies_the_deterministic_rule(history, question, expected):
    """purpose="rewrite": the key noun phrase of the latest earlier question is put before the follow-up;
    greetings, new topics, already stand-alone questions and histories without a topic are not rewritten."""
    messages = rewrite_messages(question, [{"role": "user", "text": text} for text in history])

    reply = LocalAnswerer().chat(messages, purpose="rewrite")

    assert reply.content == expected


def test_rewrite_uses_the_most_recent_earlier_question_with_a_topic():
    """The latest earlier vendor message with a topic decides; acknowledgements and bot answers do not."""
    history = [
        {"role": "user", "text": "정산 주기가 어떻게 되나요?"},
        {"role": "assistant", "text": "하이패스 단말기 정산은 매월 말일입니다."},
        {"role": "user", "text": "하이패스 단말기가 뭔가요?"},
        {"role": "assistant", "text": "안내드립니다."},
        {"role": "user", "text": "네 감사합니다"},
    ]

    reply = LocalAnswerer().chat(rewrite_messages("그럼 얼마야?", history), purpose="rewrite")

    assert reply.content == "하이패스 단말기 얼마야?"


def test_a_verb_form_in_the_question_is_not_required_but_a_noun_is():
    """`받고` is read as a verb by the morphological analyser: a sentence about 발주 확정 within 24 hours answers
    without it; a sentence without 확정 (a noun of the question) still does not."""
    result = (
        "[1] (FAQ · 발주 확정은 어떻게 하나요?)\n질문: 발주 확정은 어떻게 하나요?\n"
        "답변: 발주 수신 후 24시간 이내 확정해 주셔야 합니다.\n\n"
        "[2] (FAQ · 발주 취소는 언제 되나요?)\n질문: 발주 취소는 언제 되나요?\n답변: 발주 후 12시간 이내 취소됩니다."
    )
    sentences = answer_sentences("발주 확정은 발주 받고 몇 시간 안에 해야 해요?", [result])

    assert sentences == ["발주 수신 후 24시간 이내 확정해 주셔야 합니다."]
    assert answer_sentences("발주 확정은 발주 받고 몇 시간 안에 해야 해요?", [result.split("\n\n")[1]]) == []


def test_a_size_question_is_answered_by_dimensions_not_by_another_value():
    result = (
        "[1] (FAQ · 팔레트 적재 기준이 있나요?)\n질문: 팔레트 적재 기준이 있나요?\n"
        "답변: 팔레트 적재 수량은 20박스까지입니다. 표준 팔레트(1100×1100)를 사용해야 합니다."
    )
    assert answer_sentences("팔레트 규격이 어떻게 되나요?", [result]) == ["표준 팔레트(1100×1100)를 사용해야 합니다."]


def test_an_faq_entry_asking_for_the_same_kind_of_thing_answers_a_place_question():
    """`어디에 세우면` asks for a place: the entry asking `어디에 하나요` answers, not the booking procedure that
    happens to name a 센터."""
    result = (
        "[1] (FAQ · 납품 예약은 어떻게 하나요?)\n질문: 납품 예약은 어떻게 하나요?\n"
        "답변: 파트너센터 [입고 예약] 메뉴에서 납품일과 차량 번호를 등록하시면 됩니다.\n\n"
        "[2] (FAQ · 납품 차량 주차는 어디에 하나요?)\n질문: 납품 차량 주차는 어디에 하나요?\n"
        "답변: 센터 정문 진입 후 오른쪽 대기 주차장에 주차해 주세요."
    )
    assert answer_sentences("납품 차량은 어디에 세우면 돼요?", [result]) == [
        "센터 정문 진입 후 오른쪽 대기 주차장에 주차해 주세요."
    ]


def test_a_weekday_question_is_answered_by_the_days_of_the_week():
    result = (
        "[1] (거래처 기록 · 주문·배송 마감 안내)\n[공지] 주문·배송 마감 안내\n"
        "평일 오후 3시 주문분까지 당일 출고합니다.\n배송은 주 3회 (월·수·금) 진행합니다."
    )
    assert answer_sentences("배송 요일이 언제예요?", [result]) == ["배송은 주 3회 (월·수·금) 진행합니다."]


def test_how_often_is_answered_by_a_frequency_and_a_weight_by_a_quantity_not_a_price():
    """`얼마나 자주` asks how often (`반기마다`); `무게는 얼마까지` asks a weight (`1톤`), not money. The adverb `자주`
    and the numeral `하나에` are no subject words a statement must repeat."""
    survey = (
        "[1] (FAQ · 재고 실사는 언제 하나요?)\n질문: 재고 실사는 언제 하나요?\n답변: 재고 실사는 반기마다 진행됩니다."
    )
    pallet = (
        "[1] (FAQ · 팔레트 적재 기준이 있나요?)\n질문: 팔레트 적재 기준이 있나요?\n"
        "답변: 팔레트 1개당 중량은 1톤 이하로 적재해 주세요. 팔레트 임대료는 장당 5,000원입니다."
    )
    assert answer_sentences("재고 실사는 얼마나 자주 해요?", [survey]) == ["재고 실사는 반기마다 진행됩니다."]
    assert answer_sentences("팔레트 하나에 무게는 얼마까지 실을 수 있어요?", [pallet]) == [
        "팔레트 1개당 중량은 1톤 이하로 적재해 주세요."
    ]


PRICE_LIST_RESULT = (
    "[1] (거래처 기록 · 2026 납품 단가표)\n"
    "주요 품목 납품 단가: 해담제과 버터 과자 24입 12,600원, 해닮제과 유과 세트 18,000원, "
    "해닮제과 전통 약과 1kg 12,800원.\n"
    "해닮제과 전통 약과 1kg 배송은 주 2회입니다."
)


def test_a_list_sentence_is_cut_to_the_item_the_question_names():
    """Each item of the price list has its own price: the answer is the asked item only, so
    the look-alike brand's price (해담 is not 해닮) and the same brand's other product do not stand beside it."""
    reply, _, _ = _run("해닮제과 전통 약과 1kg 공급가 얼마로 돼 있어요?", {"search_records": PRICE_LIST_RESULT})

    assert _body(reply.content) == ["해닮제과 전통 약과 1kg 12,800원."]


def test_a_list_item_in_the_middle_keeps_the_sentence_end():
    reply, _, _ = _run("해닮제과 유과 세트 단가가 얼마예요?", {"search_records": PRICE_LIST_RESULT})

    assert _body(reply.content) == ["해닮제과 유과 세트 18,000원."]


def test_a_list_sentence_stays_whole_when_no_single_item_is_named_best():
    """`해닮제과` names two items equally: no item wins, so the whole list is the answer."""
    reply, _, _ = _run("해닮제과 단가 얼마예요?", {"search_records": PRICE_LIST_RESULT})

    assert _body(reply.content)[0] == (
        "주요 품목 납품 단가: 해담제과 버터 과자 24입 12,600원, 해닮제과 유과 세트 18,000원, "
        "해닮제과 전통 약과 1kg 12,800원."
    )


def test_a_sentence_with_one_value_is_not_cut():
    """Commas that part words, not items with their own values, leave the sentence as it is."""
    result = (
        "[1] (FAQ · 반품 기한은?)\n질문: 반품 기한은?\n"
        "답변: 반품은 수령 후, 포장을 뜯지 않은 상품만, 7일 이내 접수합니다."
    )

    reply, _, _ = _run("반품 기한은 며칠이에요?", {"search_faq": result})

    assert _body(reply.content) == ["반품은 수령 후, 포장을 뜯지 않은 상품만, 7일 이내 접수합니다."]


def test_a_list_whose_first_item_names_what_every_item_is_about_stays_whole():
    """`팔레트` is named by the first item only, and it is what both limits are about: cutting to it would drop
    the weight asked for."""
    result = (
        "[1] (FAQ · 팔레트 적재 기준)\n질문: 팔레트 적재 기준\n"
        "답변: 팔레트 1개당 높이는 1.5m 이하, 중량은 1톤 이하로 적재해 주세요."
    )

    reply, _, _ = _run("팔레트 하나에 무게는 얼마까지 실을 수 있어요?", {"search_faq": result})

    assert _body(reply.content)[0] == "팔레트 1개당 높이는 1.5m 이하, 중량은 1톤 이하로 적재해 주세요."


ORDER_RESULT = (
    "[1] (거래처 기록 · 주문 SO-2611-1028)\n"
    "[주문] 주문 SO-2611-1028\n"
    "산들찬 된장 3kg (SD-101) 60박스 주문 접수. 납기 2026-12-03, 배송지 본사 물류센터. 주문 금액 774,000원.\n"
    "적용 기간: 2026-11-01 ~\n\n"
    "[2] (거래처 기록 · 2026년 거래 조건)\n"
    "[계약 조건] 2026년 거래 조건\n"
    "결제 조건은 월말 마감 익월 10일 현금 결제입니다."
)


def test_a_record_line_answers_for_the_subject_another_line_of_the_same_record_names():
    """A record is about one thing: its `납기` sentence answers for the 된장 order its first sentence names."""
    reply, _, _ = _run("된장 60박스 주문한 거 납기 언제예요?", {"search_records": ORDER_RESULT})

    assert _body(reply.content)[0] == "납기 2026-12-03, 배송지 본사 물류센터."


def test_a_record_line_naming_none_of_the_subject_itself_does_not_answer_for_it():
    """The order record's `적용 기간` line names neither 된장 nor 도착: the rest of the record does not make it an
    answer about the delivery."""
    reply, _, _ = _run("된장 도착이 얼마나 늦어져요?", {"search_records": ORDER_RESULT})

    assert "적용 기간" not in reply.content


def _faq(question, answer, number=1):
    """An FAQ item as the FAQ search writes it."""
    return f"[{number}] (FAQ · {question})\n질문: {question}\n답변: {answer}"


LEAFLET_FAQ = _faq("전단 광고비는 얼마인가요?", "전단 게재 시 면당 광고비가 발생하며, 1/4면 기준 30만 원입니다.")


@pytest.mark.parametrize(
    ("question", "result", "expected"),
    [
        # a sum written with 억 is an amount
        (
            "생산물 배상책임보험 보상한도 얼마 이상 돼야 해요?",
            _faq(
                "보험 가입이 필수인가요?",
                "식품 협력사는 생산물 배상책임보험 가입이 필수이며 보상 한도는 1억 원 이상이어야 합니다. "
                "보험 증권 사본을 매년 갱신해 제출해 주세요.",
            ),
            "식품 협력사는 생산물 배상책임보험 가입이 필수이며 보상 한도는 1억 원 이상이어야 합니다.",
        ),
        # "기간이 얼마" asks a length of time, not a price
        (
            "API 키 유효기간이 얼마예요?",
            _faq("API 키가 만료됐어요.", "API 키의 유효 기간은 1년입니다. 재발급하면 기존 키는 7일 후 폐기됩니다."),
            "API 키의 유효 기간은 1년입니다.",
        ),
        # "해도 돼요?" asks whether it is allowed, although 단가 is an amount word
        (
            "본사에서 단가 내려달라고 하면 저희가 거절해도 돼요?",
            _faq(
                "단가 인하 요청은 어떻게 하나요?",
                "당사가 단가 인하를 요청할 때도 같은 절차를 따르며, 협력사는 인하 요청을 거절할 수 있습니다.",
            ),
            "당사가 단가 인하를 요청할 때도 같은 절차를 따르며, 협력사는 인하 요청을 거절할 수 있습니다.",
        ),
        # "언제부터" is answered by a start relative to an event
        (
            "행사 중인 상품은 새 단가가 언제부터 적용돼요?",
            _faq("새 단가 적용 시점", "행사 기간 중인 상품은 행사 종료 후부터 새 단가를 적용합니다."),
            "행사 기간 중인 상품은 행사 종료 후부터 새 단가를 적용합니다.",
        ),
        # 할인폭 asks the rate of the 할인
        (
            "물티슈 특가 할인폭이 얼마였더라?",
            "[1] (거래처 기록 · 여름 은빛제지 특가)\n[프로모션] 여름 은빛제지 특가\n"
            "7~8월 한정 물티슈 100매×10 18% 특가 행사 (종료).\n할인율: 18% · 최소 주문: 10박스",
            "7~8월 한정 물티슈 100매×10 18% 특가 행사 (종료).",
        ),
        # a yes/no question naming an aspect only by a noun is answered by a yes or no as well as by the value
        (
            "카드 제휴로 깎아주는 건 저희도 비용 나눠 내요?",
            _faq(
                "카드사 제휴 할인도 분담하나요?", "카드사 제휴 할인은 당사와 카드사가 부담하며 협력사 분담은 없습니다."
            ),
            "카드사 제휴 할인은 당사와 카드사가 부담하며 협력사 분담은 없습니다.",
        ),
        # `차는` is the noun 차 with 는 (the analyser reads it): it ranks, but a statement need not repeat one syllable
        (
            "회수 차는 언제 와요?",
            _faq(
                "반품 일정이 어떻게 되나요?",
                "반품 예정 목록은 매주 화요일 파트너센터에 등록됩니다. 회수 차량은 목요일에 출발합니다.",
            ),
            "회수 차량은 목요일에 출발합니다.",
        ),
        # the period a frequency is counted in is not the subject
        (
            "일주일에 배송 몇 번 와요?",
            _faq("배송 일정", "배송은 주 2회 (화·금) 진행합니다."),
            "배송은 주 2회 (화·금) 진행합니다.",
        ),
        # where something is entered is a place: the form it goes in
        (
            "그럼 택배 송장 번호는 어디에 입력해요?",
            _faq("택배로 납품해도 되나요?", "택배 송장 번호를 입고 예약에 함께 입력해 주세요."),
            "택배 송장 번호를 입고 예약에 함께 입력해 주세요.",
        ),
        # how money is paid is answered by the means
        (
            "현금 말고 다른 지급 방법도 있나요?",
            _faq("현금 결제 외 다른 지급 방법이 있나요?", "대금은 계좌 이체로만 지급합니다."),
            "대금은 계좌 이체로만 지급합니다.",
        ),
        # a duration with 가량 answers "얼마나"
        (
            "합배송하면 도착이 얼마나 늦어져요?",
            _faq("합배송 안내", "합배송 시 도착 시간이 30분가량 늦어질 수 있습니다."),
            "합배송 시 도착 시간이 30분가량 늦어질 수 있습니다.",
        ),
    ],
)
def test_how_vendors_ask_is_read_for_the_aspect_and_subject(question, result, expected):
    reply, _, _ = _run(question, {"search_faq": result})

    assert _body(reply.content)[0] == expected


def test_a_records_other_line_carries_the_quantity_asked_and_total_is_an_amount_word():
    """`총액` asks the order's amount; `40박스` stands in the order's other line, so its `주문 금액` line answers, not
    the contract's unit price of the same product."""
    result = (
        "[1] (거래처 기록 · 주문 SO-2611-1018)\n[주문] 주문 SO-2611-1018\n"
        "초록마당 콩나물 4kg (CM-101) 40박스 주문 접수. 주문 금액 248,000원.\n\n"
        "[2] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "최소 주문 금액은 500,000원입니다. "
        "주요 품목 납품 단가: 초록마당 유기농 두부 1kg 4,300원, 초록마당 콩나물 4kg 6,200원."
    )

    reply, _, _ = _run("이번에 들어간 콩나물 40박스 주문 총액이 얼마죠?", {"search_records": result})

    assert _body(reply.content)[0] == "주문 금액 248,000원."


def test_a_question_about_the_vendors_own_terms_is_answered_by_their_record():
    """`저희는`: the vendor asks about their own terms; their contract answers although the shared FAQ about payment
    means asks in closer words."""
    results = {
        "search_records": (
            "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
            "결제 조건은 월말 마감 익월 15일 전자어음 결제입니다."
        ),
        "search_faq": _faq("현금 결제 외 다른 지급 방법이 있나요?", "대금은 계좌 이체로만 지급합니다."),
    }

    reply, _, _ = _run("저희는 대금을 어떤 방식으로 받나요?", results)
    shared, _, _ = _run("대금은 어떤 방식으로 받나요?", results)

    assert _body(reply.content)[0] == "결제 조건은 월말 마감 익월 15일 전자어음 결제입니다."
    assert _body(shared.content)[0] == "대금은 계좌 이체로만 지급합니다."


def test_a_masked_vendor_asked_about_together_with_the_room_is_no_subject_word():
    """`[다른 벤더]이랑 같이 입고`: the other vendor is whom the question mentions, so the room's own notice answers;
    asked about on its own (`[다른 벤더] 입고 시간`), the mask stays a word no statement holds and nothing answers."""
    result = "[1] (거래처 기록 · 공동 입고 안내)\n[공지] 공동 입고 안내\n입고 시간은 오전 9시~11시로 변경됩니다."

    together, _, _ = _run(
        "12월부터 [다른 벤더]이랑 같이 입고한다던데 입고 시간 몇 시로 바뀌어요?", {"search_records": result}
    )
    alone, _, _ = _run("[다른 벤더] 입고 시간 몇 시예요?", {"search_records": result})
    # `같이` far from the mask joins nothing to it: the question is still about the other vendor
    also, _, _ = _run("[다른 벤더] 입고 시간도 같이 알려주세요", {"search_records": result})

    # the other vendor's 물량 joined with the room's own is whom it mentions too; 차이 is what is asked of 도착
    arrival = answer_sentences(
        "[다른 벤더] 물량이랑 같이 오면 도착 시간 차이 좀 나요?",
        ["[1] (거래처 기록 · 합배송 안내)\n[공지] 합배송 안내\n합배송 시 도착 시간이 30분가량 늦어질 수 있습니다."],
    )

    assert _body(together.content) == ["입고 시간은 오전 9시~11시로 변경됩니다."]
    assert arrival == ["합배송 시 도착 시간이 30분가량 늦어질 수 있습니다."]
    assert alone.content == ""
    assert also.content == ""


def test_the_rooms_own_record_that_mentions_a_masked_vendor_still_answers():
    """`기존 [다른 벤더] 경유 납품분은 … 직납으로 전환합니다` is the room's own record: the other vendor is only a party
    to it, so it answers, without the mask standing before a noun (the final check reads a mask with a value after it
    as another vendor's value); a mask joined to its noun (`[다른 벤더] 물량과`) stays. A clause about the masked
    vendor (`[다른 벤더]의 수수료는 …`) does not answer, nor does shared knowledge naming a masked vendor."""
    record = (
        "[1] (거래처 기록 · 납품 경로 변경)\n[공지] 납품 경로 변경\n"
        "기존 [다른 벤더] 경유 납품분은 12월 1일부터 직납으로 전환합니다. 단가는 변동 없습니다.\n"
        "[다른 벤더]의 경유 수수료는 3%입니다.\n"
        "12월부터 [다른 벤더] 물량과 같은 차량으로 공동 입고합니다.\n\n"
        "(참고: 다른 벤더 이름 1곳을 [다른 벤더]로 가렸습니다. 추측하지 마세요.)"
    )
    hub = _hub(("배송 방식", "경유", "[다른 벤더] 경유 납품분은 12월 1일부터 직납으로 전환합니다."))

    assert answer_sentences(
        "이번달부터 [다른 벤더] 안 거치고 납품 방식이 바뀐다던데 어떻게 바뀌는 거예요?", [record]
    ) == ["기존 경유 납품분은 12월 1일부터 직납으로 전환합니다."]
    assert answer_sentences("경유 수수료 몇 %예요?", [record]) == []
    assert answer_sentences("[다른 벤더] 물량이랑 공동 입고는 언제부터예요?", [record]) == [
        "12월부터 [다른 벤더] 물량과 같은 차량으로 공동 입고합니다."
    ]
    assert answer_sentences("[다른 벤더] 경유 납품분은 어떻게 바뀌어요?", [hub]) == []


def test_a_day_asked_for_and_a_word_pointing_back_name_no_subject():
    """`끝나는 날은요?` asks a date (the one-syllable 날 keeps its particle as a word); `거기서` points back into the
    conversation: neither is a word a statement must name."""
    promotion = (
        "[1] (거래처 기록 · 11~12월 은빛제지 프로모션)\n[프로모션] 11~12월 은빛제지 프로모션\n"
        "행사 기간 중 은빛제지 전 품목 10% 할인합니다.\n행사 기간: 2026-11-01 ~ 2026-12-15"
    )
    contract = (
        "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "최소 주문 금액은 500,000원이며 배송은 주 3회 (월·수·금) 진행합니다."
    )

    assert answer_sentences(
        "은빛제지 행사 끝나는 날은요?", [promotion], follow_up="끝나는 날은요?", earlier="은빛제지 행사 몇 %예요?"
    ) == ["행사 기간: 2026-11-01 ~ 2026-12-15"]
    assert answer_sentences("거기서 최소 주문 금액 기준만 알려주세요", [contract]) == [
        "최소 주문 금액은 500,000원이며 배송은 주 3회 (월·수·금) 진행합니다."
    ]


def test_a_follow_up_naming_its_own_item_gets_that_item_of_a_list():
    """`물티슈는요?` after a question about 종이컵: its rewritten query names both items, but the vendor's own words
    name the one asked for, so the list is cut to it."""
    result = (
        "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "주요 품목 납품 단가: 은빛제지 종이컵 6.5온스 1000개 17,500원, 은빛제지 물티슈 100매×10 11,400원."
    )

    answer = answer_sentences(
        "종이컵 6.5온스 1000개 물티슈는요?",
        [result],
        follow_up="물티슈는요?",
        earlier="종이컵 6.5온스 1000개 납품가 얼마예요?",
    )

    assert answer == ["은빛제지 물티슈 100매×10 11,400원."]


def test_what_happens_if_is_answered_by_the_statement_of_the_same_condition():
    """`기한 넘기면요?` and `금액이 정산서랑 다르면요?` ask what follows a condition: the statement stating the same
    condition ("기한이 지나면", "금액이 다르면") answers, not one that only names every word of the topic."""
    returns = (
        "[1] (지식 허브 · 반품·교환 기준)\n"
        "[반품·교환 기준 > 반품 일정] 반품 예정 목록 등록일(화요일)과 승인 기한(3영업일)은 바뀌지 않습니다.\n"
        "[반품·교환 기준 > 반품 일정] 목록 등록 후 3영업일 안에 승인해야 하며, 기한이 지나면 자동 승인됩니다."
    )
    invoices = (
        "[1] (거래처 기록 · 11월 정산 예정)\n[정산] 11월 정산 예정\n"
        "11월 매입분은 11월 30일 마감 후 정산서를 발행하며 지급 예정일은 2026-12-10입니다.\n\n"
        "[2] (FAQ · 세금계산서 금액이 정산서와 다르면 어떻게 되나요?)\n"
        "질문: 세금계산서 금액이 정산서와 다르면 어떻게 되나요?\n"
        "답변: 금액이 다르면 세금계산서가 반려되고 대금 지급이 보류됩니다."
    )

    overdue = answer_sentences(
        "반품 예정 목록 올라오면 승인 기한 넘기면요?",
        [returns],
        follow_up="기한 넘기면요?",
        earlier="반품 예정 목록 올라오면 승인 언제까지 해야 돼요?",
    )
    mismatch = answer_sentences("금액이 정산서랑 다르면요?", [invoices])

    assert overdue == ["목록 등록 후 3영업일 안에 승인해야 하며, 기한이 지나면 자동 승인됩니다."]
    assert mismatch == ["금액이 다르면 세금계산서가 반려되고 대금 지급이 보류됩니다."]


def test_a_why_question_is_answered_by_a_cause_not_by_a_date_of_the_subject():
    """`왜 늦게 들어왔었죠?` asks for a cause: the settlement record's payment date names the 대금 but gives none."""
    result = (
        "[1] (거래처 기록 · 7월 정산)\n[정산] 7월 정산\n지급일 2026-08-10.\n\n"
        "[2] (지식 허브 · 대금 지급 보류와 상계)\n"
        "[대금 지급 보류와 상계 > 보류] 7월에는 지급 계좌 변경 승인이 늦어 대금 지급이 3영업일 보류되었습니다."
    )

    answer = answer_sentences("7월에 저희 대금 왜 늦게 들어왔었죠?", [result])

    assert answer == ["7월에는 지급 계좌 변경 승인이 늦어 대금 지급이 3영업일 보류되었습니다."]


def test_a_size_the_question_names_picks_the_statement_naming_it():
    """`전단 1/2면` asks about the half page: the FAQ's quarter-page price names the 광고비 too but is about another
    size, and of the passage listing both only the half page's item is the answer; the vendor's `뭐뭐` and `마크` are
    a question word and a word for the evidence's 표시."""
    result = LEAFLET_FAQ + (
        "\n\n[2] (지식 허브 · 프로모션 운영 기준)\n"
        "[프로모션 운영 기준 > 전단 광고비] 전단 1/4면 광고비는 30만 원, 1/2면은 55만 원입니다.\n"
        "[브랜드별 주요 상품 정보 > 고운들] 고운들 절임배추는 10kg, 20kg 두 가지 규격입니다.\n"
        "[포장 기준 > 분리배출] 표시가 없는 포장재는 신상품 승인이 나지 않습니다."
    )

    assert answer_sentences("전단 1/2면 잡으면 광고비 얼마예요?", [result]) == ["1/2면은 55만 원입니다."]
    assert answer_sentences("고운들 절임배추 규격 뭐뭐 있어요?", [result]) == [
        "고운들 절임배추는 10kg, 20kg 두 가지 규격입니다."
    ]
    assert answer_sentences("포장재에 분리배출 마크 빠지면 어떻게 돼요?", [result]) == [
        "표시가 없는 포장재는 신상품 승인이 나지 않습니다."
    ]


def test_a_sentence_that_goes_on_from_the_one_before_comes_with_it():
    """`다만 … 토요일 발주가 추가될 수 있으며` qualifies the sentence before it: the answer gives both, in order."""
    result = _faq(
        "주말에도 발주가 나오나요?",
        "정기 발주는 평일에만 생성됩니다. 다만 명절 성수기에는 토요일 발주가 추가될 수 있습니다.",
    )

    assert answer_sentences("토욜 날도 발주서 들어와요?", [result]) == [
        "정기 발주는 평일에만 생성됩니다.",
        "다만 명절 성수기에는 토요일 발주가 추가될 수 있습니다.",
    ]


def test_a_verb_the_evidence_also_writes_as_a_verb_is_not_required():
    """`보내도` is a verb: an evidence sentence that writes `보내 주세요` does not make it a subject word, so the
    sentence stating the box limit answers; a vendor's `사람` and `사진` are the evidence's 수신자 and 이미지."""
    result = "\n\n".join(
        [
            _faq(
                "택배로 납품해도 되나요?",
                "소량 상품(박스 10개 이하)은 택배 납품이 가능합니다. 송장 번호는 메일로 보내 주세요.",
            ),
            _faq(
                "발주 알림을 받을 담당자를 추가하고 싶어요.",
                "[설정] > [알림 수신자]에서 최대 5명까지 추가할 수 있습니다.",
                2,
            ),
            _faq(
                "상품 이미지 규격이 있나요?", "대표 이미지는 흰 배경의 1000×1000 픽셀 이상 JPG 파일로 등록해 주세요.", 3
            ),
        ]
    )

    assert answer_sentences("박스 몇 개까지는 택배로 보내도 괜찮아요?", [result]) == [
        "소량 상품(박스 10개 이하)은 택배 납품이 가능합니다."
    ]
    assert answer_sentences("발주 알림 받는 사람 몇 명까지 넣을 수 있어요?", [result]) == [
        "[설정] > [알림 수신자]에서 최대 5명까지 추가할 수 있습니다."
    ]
    assert answer_sentences("상품 대표 사진 사이즈 몇으로 올려야 돼요?", [result]) == [
        "대표 이미지는 흰 배경의 1000×1000 픽셀 이상 JPG 파일로 등록해 주세요."
    ]


def test_a_long_question_may_miss_one_subject_word_although_another_is_a_verb_form():
    """Four subject words written (`차에 발주 여러 싣고 예약`): the statement naming all but `차에` answers, also
    when `여러` and `싣고` are read as no nouns."""
    result = (
        "[1] (지식 허브 · 물류센터 입고 기준)\n"
        "[물류센터 입고 기준 > 입고 예약] 한 차량에 여러 발주를 싣는 경우 발주서 번호를 모두 입력해야 합니다."
    )

    assert answer_sentences("한 차에 발주 여러 건 같이 싣고 가면 예약할 때 어떻게 해요?", [result]) == [
        "한 차량에 여러 발주를 싣는 경우 발주서 번호를 모두 입력해야 합니다."
    ]


BEAN_SPROUT_ORDER_RESULT = (
    "[1] (거래처 기록 · 주문 SO-2611-1018)\n[주문] 주문 SO-2611-1018\n"
    "초록마당 콩나물 4kg (CM-101) 40박스 주문 접수. 납기 2026-12-03, 배송지 본사 물류센터. 주문 금액 248,000원.\n"
    "상태: 출고 준비\n\n"
    "[2] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
    "주요 품목 공급가: 초록마당 콩나물 4kg 6,200원."
)


def test_an_order_named_by_its_count_is_answered_by_its_records_other_lines():
    """`콩나물 40박스`: the order of that count, so its 납기 line answers the 납품 asked although it names neither;
    `어떤 상태` is answered by the record's `상태` line; the 공급가 asked of the contract is no 납기."""
    assert answer_sentences("콩나물 40박스 언제까지 납품이에요?", [BEAN_SPROUT_ORDER_RESULT]) == [
        "납기 2026-12-03, 배송지 본사 물류센터."
    ]
    assert answer_sentences("콩나물 40박스 주문건 지금 어떤 상태에요?", [BEAN_SPROUT_ORDER_RESULT]) == [
        "상태: 출고 준비"
    ]
    assert answer_sentences("콩나물 4kg 공급가요?", [BEAN_SPROUT_ORDER_RESULT]) == [
        "주요 품목 공급가: 초록마당 콩나물 4kg 6,200원."
    ]


def test_a_size_or_a_cost_the_evidence_does_not_state_gets_no_near_answer():
    """`전단 1면` is a size no statement names: the quarter page's price is another size's; whether `EDI 연동` costs
    anything is not answered by a sentence saying only that it is possible."""
    result = f"{LEAFLET_FAQ}\n\n{_faq('EDI 연동이 되나요?', '대형 협력사는 EDI 연동이 가능합니다.', 2)}"

    assert answer_sentences("전단 1면 통으로 쓰면 광고비 얼마에요?", [result]) == []
    assert answer_sentences("전단 1면짜리는 광고비 얼마에요?", [result]) == []
    assert answer_sentences("EDI 연동하면 비용 따로 내야돼요?", [result]) == []
    assert answer_sentences("전단 1/4면 광고비 얼마예요?", [result]) == [
        "전단 게재 시 면당 광고비가 발생하며, 1/4면 기준 30만 원입니다."
    ]


def test_glued_question_words_compounds_and_the_action_asked_are_read():
    """`얼마동안` and `며칠날` are question words written together, not subject words; `김해센터` is named by
    "김해 물류센터"; `통장을 바꾸려면` asks about the 계좌 변경, not about paying by 계좌 이체."""
    result = "\n\n".join(
        [
            _faq("API 키가 만료됐어요.", "API 키의 유효 기간은 1년입니다."),
            "[2] (지식 허브 · 반품 회수 요일 변경 공지)\n[반품 회수 요일 변경 공지] 2026년 11월부터 김해 물류센터의 "
            "반품 회수 요일이 목요일에서 금요일로 바뀝니다.",
            _faq("현금 결제 외 다른 지급 방법이 있나요?", "대금은 계좌 이체로만 지급합니다.", 3),
            _faq(
                "대금 지급 계좌를 변경하고 싶어요.",
                "계좌 변경은 [회사 정보] > [지급 계좌]에서 통장 사본을 첨부해 신청해 주세요.",
                4,
            ),
        ]
    )

    assert answer_sentences("API 키 한번 받으면 얼마동안 써요?", [result]) == ["API 키의 유효 기간은 1년입니다."]
    assert answer_sentences("김해센터 반품 회수 요일 바뀐다던데 무슨 요일로 바뀌어요?", [result]) == [
        "2026년 11월부터 김해 물류센터의 반품 회수 요일이 목요일에서 금요일로 바뀝니다."
    ]
    assert answer_sentences("지급받을 통장을 바꾸려면 어떻게 해요?", [result]) == [
        "계좌 변경은 [회사 정보] > [지급 계좌]에서 통장 사본을 첨부해 신청해 주세요."
    ]


def test_a_price_compound_is_about_what_it_prices():
    """`공급단가` is the 단가 of 공급: the list item of the asked product answers, as for `단가` alone."""
    result = (
        "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "주요 품목 납품 단가: 청송과원 청송 사과 10kg 49,400원, 청송과원 배 7.5kg 52,000원."
    )

    assert answer_sentences("청송 사과 10kg 공급단가 얼마예요?", [result]) == ["청송과원 청송 사과 10kg 49,400원."]


def test_a_shared_sentence_naming_the_room_beside_a_masked_vendor_answers_with_the_rooms_part():
    """Shared knowledge that names the room's vendor beside a masked one (`[다른 벤더]과 대한물산은 …`) states the
    room's own fact: the answer is the room's part, with the masked vendor, its clause and its goods cut out."""
    hub = _hub(
        (
            "배송 방식과 운임 부담",
            "고객 직배송",
            "[다른 벤더]과 대한물산은 2026년 9월부터 새벽 배송 직배송 시범 협력사로 참여합니다.",
        ),
        (
            "입고 검사 기준",
            "정기 품질 점검",
            "2026년 2분기 점검에서 대한물산은 위생 점수 96점으로 우수 등급을, "
            "[다른 벤더]은 이물 관리 미흡으로 개선 권고를 받았습니다.",
        ),
        (
            "협력사 거래 기본정책",
            "협력사 평가",
            "2026년 상반기 평가에서는 대한물산과 [다른 벤더]이 납품 정확도 99% 이상으로 우수 협력사에 선정되었습니다.",
        ),
        (
            "반품 회수 요일 변경",
            "대상",
            "변경 대상 협력사는 김해 물류센터로 납품하는 [다른 벤더], 대한물산, [다른 벤더]입니다.",
        ),
        (
            "하반기 행사 일정",
            "명절 선물세트전",
            "참여 협력사: [다른 벤더](금빛수산 굴비 세트), 대한물산(참솔식품 참기름 선물세트)",
        ),
        ("단가 비교", "할인", "대한물산은 5%, [다른 벤더]은 7% 할인합니다."),
    )

    assert _answer("저희 새벽배송 시범은 언제부터 참여해요?", {"search_faq": hub}) == [
        "대한물산은 2026년 9월부터 새벽 배송 직배송 시범 협력사로 참여합니다."
    ]
    assert _answer("2분기 품질 점검 때 저희 위생 점수 몇 점이었죠?", {"search_faq": hub}) == [
        "2026년 2분기 점검에서 대한물산은 위생 점수 96점으로 우수 등급을 받았습니다."
    ]
    assert _answer("상반기 평가에서 우수 협력사로 선정된 게 맞나요?", {"search_faq": hub}) == [
        "2026년 상반기 평가에서는 대한물산이 납품 정확도 99% 이상으로 우수 협력사에 선정되었습니다."
    ]
    assert _answer("반품 회수 요일 변경 대상 협력사가 어디예요?", {"search_faq": hub}) == [
        "변경 대상 협력사는 김해 물류센터로 납품하는 대한물산입니다."
    ]
    assert _answer("명절 선물세트전 참여 협력사 누구예요?", {"search_faq": hub}) == [
        "참여 협력사: 대한물산(참솔식품 참기름 선물세트)"
    ]
    # Two values side by side, each the subject's own: the masked one's rate cannot be cut from a shared predicate.
    assert _answer("단가 비교 할인 몇 % 해요?", {"search_faq": hub}) == []


def test_the_vowel_fold_is_kept_to_words_of_three_syllables_or_more():
    """매일 and 메일 are two words: a two-syllable word spelt apart by ㅐ/ㅔ alone does not name the other."""
    faq = _faq("세금계산서는 어떻게 받나요?", "세금계산서는 매일 오전에 발행됩니다.")

    assert answer_sentences("세금계산서 메일로도 보내주나요?", [faq]) == []


def test_a_heading_that_gives_its_subjects_period_answers_for_it():
    """`… > 연말 신선 기획전 (12월 1일 ~ 12월 31일)`: no sentence under the heading repeats the period, so the
    heading's own fact answers `언제까지` — as a `subject: value` fact, never as the heading itself."""
    hub = (
        "[1] (지식 허브 · 2026년 하반기 주요 행사 일정)\n"
        "[2026년 하반기 주요 행사 일정 > 연말 신선 기획전 (12월 1일 ~ 12월 31일)] 참여 협력사: 대한물산(참솔식품 "
        "참기름 선물세트)\n"
        "[2026년 하반기 주요 행사 일정 > 연말 신선 기획전 (12월 1일 ~ 12월 31일)] 신선 식품 위주로 진행합니다.\n"
        "[2026년 하반기 주요 행사 일정 > 행사 참여 안내] 행사 참여는 파트너센터 [행사 관리]에서 신청합니다."
    )

    reply, _, _ = _run("연말 신선 기획전은 언제까지 해요?", {"search_faq": hub})
    statements = evidence_statements([hub], counterpart_names=("대한물산",))

    assert _body(reply.content) == ["연말 신선 기획전: 12월 1일 ~ 12월 31일"]
    assert answer_defects(reply.content) == []
    # one fact for the heading, however many lines stand under it; a heading without a value gives none
    assert [s.text for s in statements if s.is_fact] == ["연말 신선 기획전: 12월 1일 ~ 12월 31일"]


def test_papers_asked_by_the_sheet_are_answered_by_the_copy():
    """`몇 장` of a document is answered by the copies the evidence counts (`2부`)."""
    faq = _faq("납품 시 필요한 서류는?", "거래명세서 2부와 발주서 번호가 필요합니다.")

    assert answer_sentences("납품할 때 거래명세서 몇 장 들고 가요?", [faq]) == [
        "거래명세서 2부와 발주서 번호가 필요합니다."
    ]


# (question, the passage that answers it) — what vendors type for a word the evidence writes otherwise: an
# honorific (`MD님`), 때 glued to the noun (`추석때`), ㅐ for ㅔ in a loanword (`패널티`), words that only say how
# long or at what time (`동안`, `시각`); and the domain's other words for a subject: 상담 is the 문의 desk, 예전 the
# 기존 one, 재계약 the 계약 갱신, 알림톡 the 알림, 해썹 the HACCP.
SPELLING_CASES = (
    (
        "MD님이랑 말로 합의한 것도 인정돼요?",
        (
            "거래 기본정책",
            "거래 조건",
            "모든 거래 조건은 서면 또는 전자계약으로 정하며, MD와의 구두 합의는 인정하지 않습니다.",
        ),
    ),
    (
        "올해 추석때 이천센터 며칠부터 쉬었어요?",
        ("센터 휴무", "추석", "추석 연휴에 이천 물류센터는 9월 24일부터 9월 27일까지 휴무합니다."),
    ),
    (
        "클레임 답변 늦으면 패널티 얼마예요?",
        ("클레임 처리 기준", "기한", "1차 답변 기한을 넘기면 클레임 1건당 5만 원의 페널티가 정산에서 차감됩니다."),
    ),
    (
        "몇 일 동안 안 팔리면 장기재고로 분류돼요?",
        ("장기 재고", "기준", "90일 이상 판매가 없는 재고는 장기 재고로 분류됩니다."),
    ),
    ("EDI 발주 전송 시각이 어떻게 돼요?", ("EDI", "전송", "EDI 발주서는 매일 오후 2시 10분에 전송됩니다.")),
    (
        "카톡 상담 저녁 몇시까지 받아요?",
        ("헬프데스크", "운영 시간", "카카오톡 문의는 평일 오전 9시부터 오후 6시까지 답변드립니다."),
    ),
    (
        "재발급하면 예전 키는 언제 없어져요?",
        ("API", "키", "[API 키 발급]에서 재발급하시면 기존 키는 7일 후 폐기됩니다."),
    ),
    (
        "재계약 때 단가 협상은 몇 달 전부터 해요?",
        ("계약", "갱신", "계약 갱신 2개월 전부터 담당 MD와 다음 연도 단가를 협상합니다."),
    ),
    ("알림톡 받는 담당자 몇 명까지 돼요?", ("알림", "수신자", "[알림 수신자]에서 최대 5명까지 추가할 수 있습니다.")),
    (
        "해썹 인증 만료되면 갱신본은 언제까지 내요?",
        ("인증", "갱신", "HACCP 인증이 만료되기 30일 전에 갱신 인증서를 제출해야 합니다."),
    ),
)


@pytest.mark.parametrize(("question", "passage"), SPELLING_CASES)
def test_the_vendors_spelling_or_word_for_a_subject_still_names_it(question, passage):
    """Each question is asked of all the passages at once: its own passage answers it."""
    hub = _hub(*(passage for _, passage in SPELLING_CASES))

    assert _answer(question, {"search_faq": hub}) == [passage[2]]


def test_next_month_only_says_when():
    """`다음` (다음 달) is no subject word: the record writing 익월 answers."""
    record = "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n지급일: 익월 10일"

    assert _answer("저희 결제는 다음 달 며칠에 나와요?", {"search_records": record}) == ["지급일: 익월 10일"]


def test_a_guess_after_the_question_is_not_a_word_the_answer_must_name():
    """`… 어떤 방식으로 결제돼요? 현금이에요?`: the second question guesses the answer; the record's 전자어음
    answers it."""
    record = (
        "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "결제 조건은 월말 마감 익월 15일 전자어음 결제입니다."
    )

    focus = question_focus("대금 결제 방식이 어떻게 돼요? 현금이에요?")

    assert "현금" in focus.optional
    assert "현금" not in question_focus("현금 결제 방식이 어떻게 돼요?").optional
    assert answer_sentences("저희 대금은 어떤 방식으로 결제돼요? 현금이에요?", [record]) == [
        "결제 조건은 월말 마감 익월 15일 전자어음 결제입니다."
    ]


def test_two_values_asked_together_are_both_answered():
    """`금액이랑 납기`, `몇 % 빠지고 몇 박스 이상`: two values asked in one message get a sentence each, the second from
    the same record; a value that only qualifies the question (`단가 변경을 요청하면 언제까지`) is no second ask."""
    order = (
        "[1] (거래처 기록 · 11월 발주)\n[주문] 11월 발주\n"
        "서울우유 흰우유 1L×10 30박스 (SO-1) 주문 접수.\n주문 금액 735,000원.\n납기: 2026-12-03"
    )
    promotion = (
        "[1] (거래처 기록 · 은빛제지 겨울 행사)\n[프로모션] 은빛제지 겨울 행사\n"
        "행사 기간 중 은빛제지 전 품목 10% 할인합니다.\n5박스 이상 주문 시 적용, 다른 할인과 중복되지 않습니다."
    )

    assert joined_value_aspects("단가 변경을 요청하면 답은 언제까지 받아요?") == ()
    assert _answer("흰우유 30박스 발주 들어간거 금액이랑 납기 좀 알려주세요", {"search_records": order}) == [
        "주문 금액 735,000원.",
        "납기: 2026-12-03",
    ]
    assert _answer("지금 은빛제지 행사 몇프로 빠지고 몇박스 이상 넣어야 적용돼요?", {"search_records": promotion}) == [
        "행사 기간 중 은빛제지 전 품목 10% 할인합니다.",
        "5박스 이상 주문 시 적용, 다른 할인과 중복되지 않습니다.",
    ]
    # one value asked: one sentence
    assert _answer("흰우유 30박스 주문 금액 얼마예요?", {"search_records": order}) == ["주문 금액 735,000원."]


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        # the asking itself, typed playfully, is no subject
        ("산들찬 된장 3키로 단가 확인 부탁드립니당", ("산들찬", "된장")),
        # an example of the noun, or the noun's own one
        ("콩나물같은 냉장품은 리드타임 며칠로 잡혀있어요?", ("콩나물", "냉장품", "리드타임")),
        ("절임배추 고운들꺼 중량 옵션이 어떻게 나뉘어요?", ("절임배추", "고운들", "중량", "옵션")),
        ("수입새우 컨테이너째로 넣을수 있어요?", ("수입새우", "컨테이너", "넣을수")),
        # a pronoun points back at the subject; it is not one
        ("물류비 빠져있던데 이게 입고금액 대비 몇퍼센트에요?", ("물류", "입고", "대비")),
        # that time before, and the month written out
        ("지난번 시월 매입 정산 총액이 얼마였는지", ("매입", "정산")),
    ],
)
def test_chat_words_around_the_subject_are_read_off(question, subject):
    assert question_focus(question).subject == subject


def test_an_example_glued_to_the_noun_need_not_be_named():
    """`콩나물같은 냉장품`: the sources name the kind (냉장 상품), not every example of it; the owner glued with 꺼
    (`고운들꺼`) is still what the question is about."""
    assert question_focus("콩나물같은 냉장품은 리드타임 며칠로 잡혀있어요?").optional == ("콩나물",)
    assert "고운들" not in question_focus("절임배추 고운들꺼 중량 옵션이 어떻게 나뉘어요?").optional


SHIPPING_ORDER_RESULT = (
    "[1] (거래처 기록 · 주문 SO-2611-1014)\n[주문] 주문 SO-2611-1014\n"
    "온새미로 컵밥 12입 (OS-101) 30박스 주문 접수. 납기 2026-12-03, 배송지 본사 물류센터. 주문 금액 540,000원.\n"
    "주문번호: SO-2611-1014 · 수량: 30박스 · 주문 금액: 540,000원 · 납기: 2026-12-03 · 상태: 출고 준비"
)


def test_whether_a_step_happened_is_answered_by_the_records_status():
    """`출고됐나요?` asks whether the order has shipped: its record's 상태 tells, not the line that it was received;
    asked beside another value, the status comes with that value's sentence."""
    assert _answer("컵밥 30박스 그거 출고됐나요?", {"search_records": SHIPPING_ORDER_RESULT}) == ["상태: 출고 준비"]
    assert _answer("컵밥 30박스 출고됐나요? 납기가 언제였죠", {"search_records": SHIPPING_ORDER_RESULT}) == [
        "납기 2026-12-03, 배송지 본사 물류센터.",
        "상태: 출고 준비",
    ]
    # whether it can ship is no question of the past
    assert not question_focus("컵밥 30박스 오늘 출고 되나요?").asks_status


def test_words_of_the_domain_for_the_same_thing_answer():
    """A 트럭 is the 차량 the policy names, a 판촉 직원 its 판촉 사원, the 최소수량 its `최소 주문`, and 키친타올
    the 키친타월 of the price list — whose own item is the one answered."""
    loading = (
        "[1] (지식 허브 · 물류센터 입고 기준)\n"
        "[물류센터 입고 기준 > 입고 예약] 한 차량에 여러 발주를 싣는 경우 발주서 번호를 모두 입력해야 합니다."
    )
    question = "발주 세건을 트럭 하나로 합쳐서 입고하려는데 예약 화면에 뭘 입력해야되죠"
    assert _answer(question, {"search_faq": loading}) == [
        "한 차량에 여러 발주를 싣는 경우 발주서 번호를 모두 입력해야 합니다."
    ]
    promotion = (
        "[1] (거래처 기록 · 11~12월 바른햇살 프로모션)\n[프로모션] 11~12월 바른햇살 프로모션\n"
        "행사 기간 중 바른햇살 전 품목 8% 할인합니다. 20박스 이상 주문 시 적용, 다른 할인과 중복되지 않습니다.\n"
        "할인율: 8% · 최소 주문: 20박스"
    )
    assert _answer("그 할인 받을려면 주문 최소수량 있죠?", {"search_records": promotion}) == [
        "20박스 이상 주문 시 적용, 다른 할인과 중복되지 않습니다."
    ]
    prices = (
        "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "주요 품목 납품 단가: 은빛제지 종이컵 6.5온스 1000개 17,100원, 은빛제지 키친타월 6롤 9,900원, "
        "은빛제지 물티슈 100매×10 12,000원."
    )
    assert _answer("그럼 키친타올은 얼마로 돼 있어요?", {"search_records": prices}) == [
        "은빛제지 키친타월 6롤 9,900원."
    ]


def test_a_complaint_a_leaflet_and_raw_materials_in_the_vendors_words_answer():
    """민원 is the 클레임 the policy names, 전단지 its 전단, 원자재 its 원재료, 캔슬 its 취소, 구조 its 체계;
    `걸로`, `궁금한데` and `답장` say how the asking is said, not what it is about."""
    claims = _hub(
        ("클레임 처리 기준", "배상 기준", "이물 혼입: 제품 교환 또는 환불과 함께 위로금 1만 원 상품권을 지급합니다."),
        ("프로모션 운영 기준", "전단 광고비", "전단 1/4면 광고비는 30만 원, 1/2면은 55만 원입니다."),
        (
            "공급 단가 변경 절차",
            "원재료 연동 단가",
            "원재료 비중이 60% 이상인 상품은 분기마다 단가를 조정할 수 있습니다.",
        ),
    )
    settlement = (
        "[1] (거래처 기록 · 11월 정산 예정)\n[정산] 11월 정산 예정\n"
        "11월 매입분은 11월 30일 마감 후 정산서를 발행하며 지급 예정일은 2026-12-10입니다."
    )
    faq = _faq("카카오톡 문의 운영 시간은 언제인가요?", "카카오톡 문의는 평일 오전 9시부터 오후 6시까지 답변드립니다.")

    assert answer_sentences("이물 민원 들어오면 교환 말고 따로 보상해드리는 게 있어요?", [claims]) == [
        "이물 혼입: 제품 교환 또는 환불과 함께 위로금 1만 원 상품권을 지급합니다."
    ]
    assert answer_sentences("전단지에 1/4면 실으면 광고비가 얼마 나오나요?", [claims]) == [
        "전단 1/4면 광고비는 30만 원, 1/2면은 55만 원입니다."
    ]
    assert answer_sentences("원자재 가격 따라 분기마다 조정 받을 수 있는지 궁금한데 조건이 어떻게 돼요?", [claims]) == [
        "원재료 비중이 60% 이상인 상품은 분기마다 단가를 조정할 수 있습니다."
    ]
    assert answer_sentences("저희 매입분 돈은 며칠에 나가는 걸로 돼 있어요?", [settlement]) == [
        "11월 매입분은 11월 30일 마감 후 정산서를 발행하며 지급 예정일은 2026-12-10입니다."
    ]
    assert answer_sentences("카톡 상담 몇시부터 몇시까지 답장 해주세요?", [faq]) == [
        "카카오톡 문의는 평일 오전 9시부터 오후 6시까지 답변드립니다."
    ]
    # 구조 is the 체계 the FAQ entry asks about
    codes = _faq("상품 코드 체계가 궁금해요.", "상품 코드는 8자리로 앞 2자리는 상품군, 다음 4자리는 협력사입니다.")
    assert answer_sentences("상품 코드 구조 좀 설명해주세요 총 몇자리예요?", [codes]) == [
        "상품 코드는 8자리로 앞 2자리는 상품군, 다음 4자리는 협력사입니다."
    ]
    # 캔슬 is the 취소 the policy names
    cancel = _hub(
        ("발주 마감과 리드타임", "발주 변경과 취소", "납품 예정일 2영업일 전까지는 발주 취소를 요청할 수 있습니다.")
    )
    assert answer_sentences("발주 받은 거 캔슬하려면 납품일 며칠 전까지 말해야 돼요?", [cancel]) == [
        "납품 예정일 2영업일 전까지는 발주 취소를 요청할 수 있습니다."
    ]


def test_a_particle_takes_the_form_of_the_word_before_it():
    assert [korean_text.particle_after(word, "이") for word in ("대한물산", "가온상사", "MD")] == ["이", "가", "가"]
    assert [korean_text.particle_after(word, "는") for word in ("정원식품", "바다수산")] == ["은", "은"]
    assert korean_text.particle_after("한빛유통서비스", "은") == "는"


def test_a_brand_wide_promotion_answers_for_a_product_the_evidence_names_as_that_brands():
    """`물티슈 행사 몇 %?` is answered by "은빛제지 전 품목 10% 할인" when another record names 물티슈 as 은빛제지's
    product; a product no record ties to the brand is not, and a price question is not answered by the promotion."""
    promotion = (
        "[1] (거래처 기록 · 11~12월 은빛제지 프로모션)\n[프로모션] 11~12월 은빛제지 프로모션\n"
        "행사 기간 중 은빛제지 전 품목 10% 할인합니다. 대상: 종이컵 6.5온스 1000개 외. 5박스 이상 주문 시 적용, "
        "다른 할인과 중복되지 않습니다.\n할인율: 10% · 대상 브랜드: 은빛제지 · 최소 주문: 5박스\n\n"
        "[2] (거래처 기록 · 물티슈 100매×10)\n은빛제지 물티슈 100매×10 (EB-102) 단가 11,400원\n\n"
        "[3] (거래처 기록 · 수세미 3입)\n다온생활 수세미 3입 (DO-7) 단가 2,100원"
    )
    results = {"search_records": promotion}

    assert _answer("물티슈 지금 행사 몇 % 할인이에여?", results) == ["행사 기간 중 은빛제지 전 품목 10% 할인합니다."]
    assert _answer("물티슈 100매 지금 할인 몇 프로 들어가요?", results) == [
        "행사 기간 중 은빛제지 전 품목 10% 할인합니다."
    ]
    assert _answer("수세미 지금 행사 몇 % 할인이에요?", results) == []
    assert _answer("물티슈 단가 얼마에요?", results) == ["은빛제지 물티슈 100매×10 (EB-102) 단가 11,400원"]


def test_a_decimal_size_is_one_word_and_the_whole_record_names_it():
    """`1.8L` is one size, not the words 1 and 8L; the promotion's `대상: 맛술 1.8L` line names it for the rate line."""
    assert korean_text.words("맛술 1.8L 할인, 12,000원") == ["맛술", "1.8L", "할인", "12", "000원"]
    promotion = (
        "[1] (거래처 기록 · 11~12월 참술식품 프로모션)\n[프로모션] 11~12월 참술식품 프로모션\n"
        "행사 기간 중 참술식품 전 품목 7% 할인합니다. 대상: 맛술 1.8L 외. 10박스 이상 주문 시 적용, "
        "다른 할인과 중복되지 않습니다."
    )
    assert _answer("맛술 1.8L 지금 할인 몇 % 들어가요?", {"search_records": promotion}) == [
        "행사 기간 중 참술식품 전 품목 7% 할인합니다."
    ]


def test_the_second_ask_counts_in_its_own_unit_and_the_asked_size_is_no_answer():
    """`몇 % 할인이고 몇박스부터`: the second ask is answered by `5박스 이상`, never by the product's own `5kg`."""
    promotion = (
        "[1] (거래처 기록 · 11~12월 한빛식품 프로모션)\n[프로모션] 11~12월 한빛식품 프로모션\n"
        "행사 기간 중 한빛식품 전 품목 10% 할인합니다. 대상: 총각김치 5kg 외. 5박스 이상 주문 시 적용, "
        "다른 할인과 중복되지 않습니다."
    )
    results = {"search_records": promotion}
    expected = [
        "행사 기간 중 한빛식품 전 품목 10% 할인합니다.",
        "5박스 이상 주문 시 적용, 다른 할인과 중복되지 않습니다.",
    ]
    assert _answer("총각김치 행사 몇 % 할인이고 몇박스부터에요?", results) == expected
    assert _answer("총각김치 5kg 행사 할인 몇프로고 최소 몇 박스 넣어야돼요?", results) == expected


def test_each_ask_of_a_two_value_question_gets_its_value():
    """`할인율 얼마고 몇박스부터`, "몇%에 몇박스 이상", "할인율이랑 최소 주문 박스 수": the count comes from the
    `N박스 이상` line, not from the rate line that also holds a number; "최소수량은?" is a count of goods, not the
    product's `4kg`; "몇박스 … 금액도요" asks the order's amount beside its count (a count alone accepts an amount as
    its value)."""
    promotion = (
        "[1] (거래처 기록 · 11~12월 고운뜰 프로모션)\n[프로모션] 11~12월 고운뜰 프로모션\n"
        "행사 기간 중 고운뜰 전 품목 5% 할인합니다. 대상: 찹쌀 4kg 외. 10박스 이상 주문 시 적용, "
        "다른 할인과 중복되지 않습니다.\n할인율: 5% · 대상 브랜드: 고운뜰 · 최소 주문: 10박스"
    )
    results = {"search_records": promotion}
    rate = "행사 기간 중 고운뜰 전 품목 5% 할인합니다."
    boxes = "10박스 이상 주문 시 적용, 다른 할인과 중복되지 않습니다."
    assert _answer("찹쌀 행사 할인율 얼마고 몇박스부터 돼요", results) == [rate, boxes]
    assert _answer("고운뜰 찹쌀 행사 할인 몇%에 몇박스 이상이에요", results) == [rate, boxes]
    assert _answer("고운뜰 찹쌀 행사 할인 얼마고 최소 몇 박스예요?", results) == [rate, boxes]  # 할인 얼마: a rate
    assert _answer("고운뜰 찹쌀 요즘 행사하던데 몇프로 할인이고 최소수량은?", results) == [rate, "최소 주문: 10박스"]
    order = (
        "[1] (거래처 기록 · 주문 SO-2611-1016)\n[주문] 주문 SO-2611-1016\n"
        "해담제과 버터 과자 24입 (HD-101) 10박스 주문 접수. 납기 2026-12-03, 배송지 본사 물류센터. 주문 금액 126,000원."
    )
    assert _answer("버터과자 24입 몇박스 주문 들어갔었죠? 금액도요", {"search_records": order}) == [
        "해담제과 버터 과자 24입 (HD-101) 10박스 주문 접수.",
        "주문 금액 126,000원.",
    ]
    # 수량 named beside 금액 is a count of goods and money: two values, as `몇박스 … 금액도요` is
    assert _answer("버터과자 주문 들어간 거 수량이랑 금액 좀 알려주세요", {"search_records": order}) == [
        "해담제과 버터 과자 24입 (HD-101) 10박스 주문 접수.",
        "주문 금액 126,000원.",
    ]
    assert joined_value_aspects("수량이 얼마나 돼요") == ()  # 얼마 asks the count here, not money
    # "최소 주문 박스 수" asks a count; a second sentence naming no subject of its own ("몇 박스 넘어야 되는지도요")
    # is answered beside the first question's own answer.
    assert _answer("고운뜰 프로모션 할인율이랑 최소 주문 박스 수 알려주세요~", results) == [rate, boxes]
    assert _answer("고운뜰 찹쌀 행사 지금 할인 얼마나 들어가요? 몇 박스 넘어야 되는지도요", results) == [rate, boxes]
    # "상태랑 금액": the record's status line joins the amount.
    order = (
        "[1] (거래처 기록 · 주문 SO-2611-1022)\n[주문] 주문 SO-2611-1022\n"
        "참솔식품 참기름 1.8L 30박스 주문 접수. 주문 금액 714,000원.\n"
        "주문번호: SO-2611-1022 · 수량: 30박스 · 주문 금액: 714,000원 · 상태: 출고 준비"
    )
    assert _answer("참기름 30박스 주문 상태랑 금액 알려줘요", {"search_records": order}) == [
        "주문 금액 714,000원.",
        "상태: 출고 준비",
    ]


def test_the_end_and_what_to_watch_out_for_are_aspects_not_subjects():
    """`그 할인 마지막 날` asks the promotion's end; `예약할 때 주의할 점` asks what a rule says, not about a 주의."""
    promotion = (
        "[1] (거래처 기록 · 11~12월 은빛제지 프로모션)\n[프로모션] 11~12월 은빛제지 프로모션\n"
        "행사 기간 중 은빛제지 전 품목 10% 할인합니다. 20박스 이상 주문 시 적용, 다른 할인과 중복되지 않습니다.\n"
        "할인율: 10% · 대상 브랜드: 은빛제지 · 최소 주문: 20박스 · 행사 기간: 2026-11-01 ~ 2026-12-15"
    )
    loading = _hub(
        ("물류센터 입고 기준", "입고 예약", "한 차량에 여러 발주를 싣는 경우 발주서 번호를 모두 입력해야 합니다.")
    )

    assert answer_sentences(
        "은빛제지 행사 할인 마지막 날이 언제예요?",
        [promotion],
        follow_up="그 할인 마지막 날이 언제예요?",
        earlier="은빛제지 행사 할인율 몇 %예요?",
    ) == ["행사 기간: 2026-11-01 ~ 2026-12-15"]
    assert answer_sentences("트럭 한 대로 발주 세 건을 한꺼번에 싣는데 예약할 때 주의할 점 있어요?", [loading]) == [
        "한 차량에 여러 발주를 싣는 경우 발주서 번호를 모두 입력해야 합니다."
    ]


def test_what_a_value_is_counted_per_and_the_step_reached_name_no_subject():
    """`회당 운임` is the fare per pick-up, `한 대당 공급가` the price per unit: 회당 and 대당 say what the value is
    counted per; `현재 처리 단계` asks the record's status."""
    fares = _hub(
        (
            "반품·교환 기준",
            "반품 비용 부담",
            "회수 운임은 1회 회수당 25,000원이며, 직접 회수를 선택하면 운임이 없습니다.",
        )
    )
    order = (
        "[1] (거래처 기록 · 주문 SO-2611-1002)\n[주문] 주문 SO-2611-1002\n"
        "초록마당 유기농 두부 1kg 30박스 주문 접수. 납기 2026-12-03, 배송지 본사 물류센터.\n"
        "주문번호: SO-2611-1002 · 수량: 30박스 · 납기: 2026-12-03 · 상태: 출고 준비"
    )

    assert answer_sentences("반품 가져가는 차 부르면 회당 운임 얼마예요?", [fares]) == [
        "회수 운임은 1회 회수당 25,000원이며, 직접 회수를 선택하면 운임이 없습니다."
    ]
    assert "상태: 출고 준비" in answer_sentences("두부 주문 납기랑 현재 처리 단계 좀 알려주세요", [order])


def test_a_count_of_goods_the_question_names_picks_the_record_that_holds_it():
    """`컵밥 30박스 넣은 거 총액`: the order of 30 boxes answers with its amount, not the product's unit price, which
    names the product as fully; without the count, the unit price answers `컵밥 단가`."""
    evidence = [
        "[1] (거래처 기록 · 주문 SO-2611-1014)\n[주문] 주문 SO-2611-1014\n"
        "온새미로 컵밥 12입 (OS-101) 30박스 주문 접수. 주문 금액 753,000원.\n\n"
        "[2] (거래처 기록 · 컵밥 12입)\n온새미로 컵밥 12입 (OS-101) 단가 25,100원"
    ]

    assert answer_sentences("온새미로 컵밥 30박스 넣은 거 총액 얼마 찍혔는지 봐주세요", evidence) == [
        "주문 금액 753,000원."
    ]
    assert answer_sentences("온새미로 컵밥 단가 얼마예요?", evidence) == ["온새미로 컵밥 12입 (OS-101) 단가 25,100원"]


def test_a_months_figure_is_answered_only_by_a_statement_about_that_month():
    """`9월 정산 금액` asks one month's figure: a rule that names no month (`입고 금액의 2.5%가 … 정산에서 차감`) is no
    month's figure, so with no statement about September the answer is the guidance; October's record answers
    `10월분 정산 금액`, and a question about no month's figure still gets the rule."""
    evidence = [
        "[1] (거래처 기록 · 10월 정산 내역)\n[정산] 10월 정산 내역\n"
        "10월 매입 정산액은 10,280,000원(부가세 포함)이며 2026-11-10에 지급 완료했습니다.",
        _hub(("정산 일정", "물류비", "센터 납품 상품은 입고 금액의 2.5%가 물류비로 정산에서 차감됩니다.")),
    ]

    assert answer_sentences("9월 정산 금액이 얼마 들어왔었는지 알 수 있을까요?", evidence) == []
    assert answer_sentences("10월분 정산 금액 얼마 나왔어요?", evidence) == [
        "10월 매입 정산액은 10,280,000원(부가세 포함)이며 2026-11-10에 지급 완료했습니다."
    ]
    assert answer_sentences("센터 납품하면 정산에서 물류비 얼마 빠져요?", evidence) == [
        "센터 납품 상품은 입고 금액의 2.5%가 물류비로 정산에서 차감됩니다."
    ]


def test_a_period_or_size_the_question_names_is_not_answered_by_a_statement_of_another():
    """`11월치 정산금` is not answered by the 9월 settlement sentence; "설 행사" not by the 11~12월 promotion;
    "30롤짜리" not by the 6롤 price, "500g짜리" not by the 1kg one, `T300` not by the `T200`. A statement that names no
    period still answers."""
    hub = (
        "[1] (지식 허브 · 2026년 추석 연휴 운영 안내)\n"
        "[2026년 추석 연휴 운영 안내 > 정산] 9월 정산 대금은 10월 15일에 정상 지급합니다."
    )
    assert _answer("11월치 정산금 며칠에 들어오나요", {"search_knowledge": hub}) == []
    november = (
        "[1] (거래처 기록 · 11월 정산 예정)\n[정산] 11월 정산 예정\n"
        "11월 매입분은 11월 30일 마감 후 정산서를 발행하며 지급 예정일은 2026-12-10입니다."
    )
    assert _answer("11월치 정산금 며칠에 들어오나요", {"search_records": november, "search_knowledge": hub}) == [
        "11월 매입분은 11월 30일 마감 후 정산서를 발행하며 지급 예정일은 2026-12-10입니다."
    ]
    promotion = (
        "[1] (거래처 기록 · 11~12월 해담제과 프로모션)\n[프로모션] 11~12월 해담제과 프로모션\n"
        "행사 기간 중 해담제과 전 품목 12% 할인합니다."
    )
    assert _answer("해담제과 쿠키세트 설 행사 할인율은 정해졌어요?", {"search_records": promotion}) == []
    assert _answer("해담제과 12월 행사 할인율은요?", {"search_records": promotion}) == [
        "행사 기간 중 해담제과 전 품목 12% 할인합니다."
    ]
    contract = (
        "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "주요 품목 납품 단가: 은빛제지 키친타월 6롤 10,200원, 은빛제지 종이컵 6.5온스 1000개 17,500원."
    )
    assert _answer("키친타월 30롤짜리 단가 얼마 받을수 있을까요", {"search_records": contract}) == []
    [price] = _answer("키친타월 6롤 단가 얼마에요", {"search_records": contract})
    assert "키친타월 6롤 10,200원" in price
    terminal = "[1] (거래처 기록 · POS 단말기 T200)\n스마트포스 POS 단말기 T200 183,300원."
    assert _answer("POS 단말기 T300 모델 단가 얼마에요", {"search_records": terminal}) == []
    assert _answer("POS 단말기 T200 단가 얼마에요", {"search_records": terminal}) == [
        "스마트포스 POS 단말기 T200 183,300원."
    ]
    sesame = "[1] (거래처 기록 · 볶음참깨 1kg)\n참솔식품 볶음참깨 1kg 12,800원."
    assert _answer("볶음참깨 500g짜리 공급가 좀 알려주세요", {"search_records": sesame}) == []
    assert _answer("볶음참깨 1kg 공급가 좀 알려주세요", {"search_records": sesame}) == [
        "참솔식품 볶음참깨 1kg 12,800원."
    ]


def test_a_second_question_in_its_own_sentence_is_answered_too():
    """`납기 언제에요? 지금 상태는요?`: the second question, read as a follow-up of the first, adds its answer; a
    second ask the first answer already answers adds nothing."""
    order = (
        "[1] (거래처 기록 · 발주 PO-2611-014 고등어)\n[주문] 발주 PO-2611-014 고등어\n"
        "바다수산 고등어 1kg 40박스 주문 접수.\n납기 2026-12-03, 배송지 본사 물류센터.\n"
        "상태: 출고 준비 · 금액: 480,000원"
    )
    assert _answer("고등어 40박스 주문 넣은거 납기 언제에요? 지금 상태는요?", {"search_records": order}) == [
        "납기 2026-12-03, 배송지 본사 물류센터.",
        "상태: 출고 준비",
    ]
    assert _answer("고등어 40박스 주문 넣은거 납기 언제에요?", {"search_records": order}) == [
        "납기 2026-12-03, 배송지 본사 물류센터."
    ]
    delivery = "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n배송은 주 2회 (화·금) 진행합니다."
    assert _answer("일주일에 배송 며칠 들어와요? 요일도 알려주세요", {"search_records": delivery}) == [
        "배송은 주 2회 (화·금) 진행합니다."
    ]


def test_a_kind_of_goods_and_a_short_name_are_the_subject_the_sources_write_out():
    """`수입품` is a `수입 상품`, `PL보험` the 생산물 배상책임보험, `파레트` the 팔레트, `신입` the 신규 one; `뭐가`
    asks and names nothing."""
    from agent.knowledge.synonyms import subject_variants

    assert "수입상품" in subject_variants("수입품") and "냉장상품" in subject_variants("냉장품목")
    assert "팔레트" in subject_variants("파레트") and "생산물배상책임보험" in subject_variants("PL보험")
    documents = (
        "[1] (FAQ · 수입 상품 납품 시 필요한 서류는?)\n질문: 수입 상품 납품 시 필요한 서류는?\n"
        "답변: 수입신고필증과 수입식품 검사 성적서를 상품 등록 시 제출해 주세요.\n\n"
        "[2] (FAQ · 보험 가입이 필수인가요?)\n질문: 보험 가입이 필수인가요?\n"
        "답변: 식품 협력사는 생산물 배상책임보험 가입이 필수이며 보상 한도는 1억 원 이상이어야 합니다. "
        "보험 증권 사본을 매년 갱신해 제출해 주세요.\n\n"
        "[3] (FAQ · 팔레트 적재 기준이 있나요?)\n질문: 팔레트 적재 기준이 있나요?\n"
        "답변: 팔레트 1개당 높이는 1.5m 이하, 중량은 1톤 이하로 적재해 주세요."
    )
    results = {"search_faq": documents}
    assert _answer("수입품 새로 등록하려는데 서류 뭐가 필요해요?", results) == [
        "수입신고필증과 수입식품 검사 성적서를 상품 등록 시 제출해 주세요."
    ]
    assert _answer("보험 갱신하려는데 PL보험 한도 최소 얼마짜리로 가입해야 되는지요", results) == [
        "식품 협력사는 생산물 배상책임보험 가입이 필수이며 보상 한도는 1억 원 이상이어야 합니다."
    ]
    assert _answer("파레트 몇미터 높이까지 쌓아도 돼요? 무게 제한도 있나요", results) == [
        "팔레트 1개당 높이는 1.5m 이하, 중량은 1톤 이하로 적재해 주세요."
    ]


def test_a_number_asked_with_a_glued_counter_asks_that_number():
    """`몇명까지 돼요?` asks how many (the `5명` sentence), not whether: the counter glued to 몇 is read apart."""
    assert question_focus("알림톡 받는 직원 몇명까지 돼요?").aspect == "quantity"
    assert question_focus("엑셀 몇달치까지 한번에 돼요?").aspect == "duration"
    entry = (
        "[1] (FAQ · 발주 알림을 받을 담당자를 추가하고 싶어요.)\n질문: 발주 알림을 받을 담당자를 추가하고 싶어요.\n"
        "답변: 파트너센터 [설정] > [알림 수신자]에서 최대 5명까지 추가할 수 있습니다. "
        "추가된 담당자에게는 발주·반품 알림톡이 함께 발송됩니다."
    )
    assert _answer("발주 알림톡 받는 직원 더 넣고싶은데 몇명까지 돼요?", {"search_faq": entry}) == [
        "파트너센터 [설정] > [알림 수신자]에서 최대 5명까지 추가할 수 있습니다."
    ]


def test_an_faq_answer_is_about_its_entry_and_the_topic_set_apart_is_answered():
    """A sentence of an FAQ answer answers for the subject another sentence of the entry names ("최대 3개월 범위까지"
    in the entry about [발주 조회]'s Excel download); "선물세트는 몇 %?" is answered by the sentence that sets 선물세트
    apart with 는, not by the general rule before it."""
    download = (
        "[1] (FAQ · 발주서 엑셀 다운로드가 가능한가요?)\n질문: 발주서 엑셀 다운로드가 가능한가요?\n"
        "답변: 네, [발주 조회] 화면 오른쪽 위의 [엑셀 다운로드] 버튼으로 조회된 발주를 한 번에 받으실 수 있습니다. "
        "최대 3개월 범위까지 조회됩니다."
    )
    assert _answer("발주조회에서 엑셀 받을 때 몇달치까지 한번에 돼요?", {"search_faq": download}) == [
        "최대 3개월 범위까지 조회됩니다."
    ]
    packaging = (
        "[1] (FAQ · 과대포장 기준이 있나요?)\n질문: 과대포장 기준이 있나요?\n"
        "답변: 포장 공간 비율은 식품 15% 이하, 포장 횟수는 2차 이내여야 합니다. 선물세트는 25% 이하 기준이 적용됩니다."
    )
    assert _answer("선물세트는 포장 공간 비율 몇 %까지 괜찮아요?", {"search_faq": packaging}) == [
        "선물세트는 25% 이하 기준이 적용됩니다."
    ]


def test_a_message_of_two_questions_whose_second_finds_nothing_answers_the_first():
    """`몇시부터 몇시까지 답해줘요? 주말엔 안되나요`: the hours answer the first question although no sentence names
    주말; the whole message read as one would ask for both."""
    hours = (
        "[1] (FAQ · 카카오톡 문의 운영 시간은 언제인가요?)\n질문: 카카오톡 문의 운영 시간은 언제인가요?\n"
        "답변: 카카오톡 문의는 평일 오전 9시부터 오후 6시까지 답변드립니다."
    )
    assert _answer("카톡 문의는 몇시부터 몇시까지 답해줘요? 주말엔 안되나요", {"search_faq": hours}) == [
        "카카오톡 문의는 평일 오전 9시부터 오후 6시까지 답변드립니다."
    ]


@pytest.mark.parametrize(
    ("question", "subject", "optional"),
    [
        # examples before 이런 / 같은 name the kind after them, which the sources write
        (
            "요거트 치즈 이런 냉장품목 리드타임 며칠이에요",
            ("요거트", "치즈", "냉장품목", "리드타임"),
            ("요거트", "치즈"),
        ),
        # a compound ending in 출고 keeps it; the asker's memory is no subject
        ("리콜 결정되면 로트 생산출고 내역 언제까지 넘겨야돼요?", ("리콜", "결정", "로트", "생산출고", "내역"), ()),
        ("직배송 시범사업 들어간 게 몇월이었는지 기억이 안나네요", ("직배송", "시범사업"), ()),
        # a question word typed against its noun, and the thing the asker mixes the subject up with
        ("깍두기 5kg 단가얼마에요 맛김치랑 자꾸 헷갈려서", ("깍두기", "맛김치"), ("맛김치",)),
    ],
)
def test_what_a_question_names_beside_its_subject(question, subject, optional):
    focus = question_focus(question)
    assert [word for word in focus.subject if word not in focus.non_nouns] == list(subject)
    assert set(optional) <= set(focus.optional)
    assert not set(focus.optional) & (set(subject) - set(optional))


def test_a_month_or_a_score_asked_is_a_value_of_its_own_kind():
    """`몇월이었는지` asks a date; `몇 점` is answered by `96점`; the item list is cut to the product asked, not the one
    it is mixed up with."""
    assert question_focus("시범사업 들어간 게 몇월이었는지").aspect == "date"
    inspection = (
        "[1] (지식 허브 · 입고 검사 기준)\n[입고 검사 기준 > 정기 점검] 2026년 2분기 점검에서 위생 점수 96점으로 "
        "우수 등급을 받았습니다."
    )
    assert _answer("2분기 위생 점검 때 저희 몇 점 받았어요?", {"search_faq": inspection}) == [
        "2026년 2분기 점검에서 위생 점수 96점으로 우수 등급을 받았습니다."
    ]
    prices = (
        "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "주요 품목 납품 단가: 한빛식품 맛김치 5kg 17,600원, 한빛식품 깍두기 5kg 17,500원."
    )
    assert _answer("깍두기 5kg 단가얼마에요 맛김치랑 자꾸 헷갈려서", {"search_records": prices}) == [
        "한빛식품 깍두기 5kg 17,500원."
    ]


def test_the_item_of_the_size_asked_is_cut_from_a_list_that_names_the_subject_once():
    """`전단 반면 광고하면 얼마?` is answered by `1/2면은 55만 원`, the item of the size asked, although only the first
    item names the 전단 광고비; a rate asked of a product reads a brand-wide promotion without the word 행사."""
    leaflet = (
        "[1] (지식 허브 · 프로모션 운영 기준)\n[프로모션 운영 기준 > 전단 광고비] 전단 1/4면 광고비는 30만 원, "
        "1/2면은 55만 원이며 행사 종료 다음 달 정산에서 차감합니다."
    )
    assert _answer("전단 반면 광고하면 얼마 나와요?", {"search_faq": leaflet}) == [
        "1/2면은 55만 원이며 행사 종료 다음 달 정산에서 차감합니다."
    ]
    promotion = (
        "[1] (거래처 기록 · 11~12월 은빛제지 프로모션)\n[프로모션] 11~12월 은빛제지 프로모션\n"
        "행사 기간 중 은빛제지 전 품목 15% 할인합니다.\n\n"
        "[2] (거래처 기록 · 물티슈 100매×10)\n은빛제지 물티슈 100매×10 (EB-102) 단가 11,400원"
    )
    assert _answer("물티슈 지금 몇 % 할인돼요?", {"search_records": promotion}) == [
        "행사 기간 중 은빛제지 전 품목 15% 할인합니다."
    ]


def test_a_second_ask_in_another_unit_is_no_repeat_and_a_period_asks_a_date():
    """`몇시간 안에 …? 늦으면 얼마 깎여요?`: the penalty's `1건당 5만 원` is not the `1차 … 5영업일` of the first
    answer; `시작일이랑 종료일` ask the period, they name no subject."""
    claims = (
        "[1] (지식 허브 · 클레임 처리 기준)\n[클레임 처리 기준 > 접수] 협력사는 접수 후 24시간 안에 1차 답변을, "
        "5영업일 안에 원인과 조치 결과를 등록해야 합니다.\n\n"
        "[2] (지식 허브 · 클레임 처리 기준)\n[클레임 처리 기준 > 처리 기한 위반] 1차 답변 기한을 넘기면 클레임 1건당 "
        "5만 원의 페널티가 다음 달 정산에서 차감됩니다."
    )
    assert _answer("클레임 들어오면 첫 답변 몇시간 안에 해야돼요? 늦으면 얼마 깎여요?", {"search_faq": claims}) == [
        "협력사는 접수 후 24시간 안에 1차 답변을, 5영업일 안에 원인과 조치 결과를 등록해야 합니다.",
        "1차 답변 기한을 넘기면 클레임 1건당 5만 원의 페널티가 다음 달 정산에서 차감됩니다.",
    ]
    focus = question_focus("신선 기획전 행사 시작일이랑 종료일이 어떻게 돼요")
    assert focus.aspect == "date" and focus.subject == ("신선", "기획전", "행사")


def test_a_fact_that_only_repeats_the_subject_answers_nothing():
    """`참술식품은 어떤 상품군 브랜드예요?` is answered by the hub's `전통주·식초 브랜드`, not by the promotion's
    `대상 브랜드: 참술식품`."""
    results = {
        "search_records": (
            "[1] (거래처 기록 · 11~12월 참술식품 프로모션)\n[프로모션] 11~12월 참술식품 프로모션\n"
            "행사 기간 중 참술식품 전 품목 7% 할인합니다.\n할인율: 7% · 대상 브랜드: 참술식품"
        ),
        "search_faq": (
            "[1] (지식 허브 · 브랜드별 주요 상품 정보)\n[브랜드별 주요 상품 정보 > 참솔식품과 참술식품] "
            "참술식품은 전통주·식초 브랜드입니다."
        ),
    }
    assert _answer("참술식품은 어떤 상품군 브랜드예요?", results) == ["참술식품은 전통주·식초 브랜드입니다."]


def test_a_compound_the_evidence_does_not_write_is_read_as_its_written_parts():
    """`입금계좌` is the 입금 and the 계좌 the FAQ writes apart; a compound with a part no statement holds stays whole,
    so a subject the evidence lacks finds no answer."""
    entry = (
        "[1] (FAQ · 지급 계좌를 바꾸고 싶어요.)\n질문: 지급 계좌를 바꾸고 싶어요.\n"
        "답변: 입금 받을 계좌를 바꾸려면 통장 사본을 올려 주세요. 승인까지 3영업일이 걸립니다."
    )
    results = {"search_faq": entry}
    assert _answer("회사 입금계좌 변경 신청하려는데 처리 며칠 걸리나요", results) == ["승인까지 3영업일이 걸립니다."]
    assert _answer("회사 법인카드 변경 신청하려는데 처리 며칠 걸리나요", results) == []


def test_a_yes_or_no_second_question_is_answered_beside_the_first():
    """`POS T200 공급단가 얼마에요? 지금 행사할인도 들어가나요`: the price and the brand's promotion, each for its own
    question, rather than the promotion for both."""
    records = (
        "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "주요 품목 납품 단가: 스마트포스 POS 단말기 T200 183,300원, 스마트포스 무선 카드 단말기 M30 159,000원.\n\n"
        "[2] (거래처 기록 · 11~12월 스마트포스 프로모션)\n[프로모션] 11~12월 스마트포스 프로모션\n"
        "행사 기간 중 스마트포스 전 품목 7% 할인합니다."
    )
    assert _answer("POS T200 공급단가 얼마에요? 지금 행사할인도 들어가나요", {"search_records": records}) == [
        "주요 품목 납품 단가: 스마트포스 POS 단말기 T200 183,300원, 스마트포스 무선 카드 단말기 M30 159,000원.",
        "행사 기간 중 스마트포스 전 품목 7% 할인합니다.",
    ]


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        # why the vendor asks, after the question, and the asker's own side name no subject
        ("참기름 1.8리터짜리 납품가 얼마로 잡혀있죠? 견적서 다시 뽑아야돼서요", ("참기름",)),
        ("알림톡 수신자 추가 한도가 몇명이에요? 영업팀 애들도 받게 하려구요", ("알림톡", "수신자", "추가", "한도")),
        ("무가당 요거트 1kg 저희쪽 단가 얼마였죠", ("무가당", "요거트")),
        # a reason ending in 서 after the question, and one said before it
        ("SO-2611-1010 건 총 얼마짜리인지 확인 부탁드릴게요 계산서 끊어야 돼서", ("SO",)),
        ("경리팀에서 물어봐서요 10월 매입분 정산 총액이 얼마로 나갔어요?", ("매입분", "정산")),
        # a period or day named relative to today, a case, a degree and the asker's own progress
        ("지난달 정산 얼마였죠", ("정산",)),
        ("내일 결품 불이익 있나요", ("결품", "불이익")),
        ("오늘 출고 마감 몇시에요", ("출고",)),
        ("PB 상품 납품하는 경우 하도급 지급 기한", ("PB", "납품", "하도급", "지급")),
        ("회수차 부르면 비용 어느 정도에요", ("회수차",)),
        ("신규 등록 서류 준비중인데 뭐가 필요해요", ("신규", "서류")),
    ],
)
def test_the_reason_for_asking_and_the_askers_side_are_no_subject(question, subject):
    focus = question_focus(question)
    assert tuple(word for word in focus.subject if word not in focus.optional) == subject


def test_each_question_of_a_promotion_message_gets_its_own_value():
    """`할인 언제 끝나요? 몇 박스부터`: the end date for the first question (a count in boxes answers no date), the box
    count for the second; "할인 얼마나 돼요? 최소 몇박스" asks a rate first; `진행됐어요?` asks the record's status."""
    promotion = (
        "[1] (거래처 기록 · 11~12월 청송과원 프로모션)\n[프로모션] 11~12월 청송과원 프로모션\n"
        "행사 기간 중 청송과원 전 품목 10% 할인합니다. 5박스 이상 주문 시 적용, 다른 할인과 중복되지 않습니다.\n"
        "할인율: 10% · 최소 주문: 5박스\n적용 기간: 2026-11-01 ~ 2026-12-15"
    )
    results = {"search_records": promotion}
    assert _answer("청송과원 할인 언제 끝나요? 몇 박스부터 적용되는지도 알려주세요", results) == [
        "적용 기간: 2026-11-01 ~ 2026-12-15",
        "5박스 이상 주문 시 적용, 다른 할인과 중복되지 않습니다.",
    ]
    assert question_focus("볶음김치캔 행사 할인 얼마나 돼요?").aspect == "rate"
    rate, boxes = _answer("청송과원 행사 할인 얼마나 돼요? 최소 몇박스 넣어야돼요?", results)
    assert rate == "행사 기간 중 청송과원 전 품목 10% 할인합니다." and "5박스" in boxes
    assert question_focus("고등어 발주 들어간거 지금 어디까지 진행됐어요?").asks_status


def test_a_derived_word_the_evidence_does_not_write_is_read_as_its_noun():
    """`주문건` is the 주문 the record names, `행사용` the 행사, `교환해달래서` the 교환; `제품들` names no subject, as
    `제품` does not. A derived word whose noun the evidence does not write still finds no answer."""
    order = (
        "[1] (거래처 기록 · 주문 SO-2611-1028)\n[주문] 주문 SO-2611-1028\n"
        "국산 된장 60박스 주문이 접수되었습니다. 주문 금액 774,000원.\n납기: 2026-12-03"
    )
    assert _answer("된장 60박스 주문건 얼마짜리에요?", {"search_records": order}) == ["주문 금액 774,000원."]
    promotion = (
        "[1] (거래처 기록 · 11~12월 참술식품 프로모션)\n[프로모션] 11~12월 참술식품 프로모션\n"
        "행사 기간 중 참술식품 전 품목 7% 할인합니다."
    )
    assert _answer("참술 제품들 요즘 할인 몇 퍼센트 해주고 있어요?", {"search_records": promotion}) == [
        "행사 기간 중 참술식품 전 품목 7% 할인합니다."
    ]
    exchange = (
        "[1] (FAQ · 고객이 교환을 요청하면 어떻게 하나요?)\n"
        "Q: 고객이 교환을 요청하면 어떻게 하나요?\nA: 회수 확인 후 2영업일 이내에 교환 상품을 재발송해 주세요."
    )
    assert _answer("고객이 교환해달래서 회수는 했는데 새 상품은 언제까지 보내줘야 돼요?", {"search_faq": exchange}) == [
        "회수 확인 후 2영업일 이내에 교환 상품을 재발송해 주세요."
    ]
    assert _answer("된장 60박스 배송건 얼마짜리에요?", {"search_records": order}) == []


def test_an_faq_answer_naming_the_subject_in_passing_gives_way_to_one_about_it():
    """`장기 재고는 어떻게 처리되나요?` is answered `… 할인 판매나 반품을 협의합니다`: 반품 in passing. Asked for the
    returns period, the returns schedule answers, which is about 반품; on its own the FAQ sentence still does."""
    stock = _faq(
        "장기 재고는 어떻게 처리되나요?",
        "90일 이상 판매가 없는 재고는 장기 재고로 분류되어 담당 MD가 할인 판매나 반품을 협의합니다.",
    )
    schedule = _hub(
        (
            "반품·교환 기준",
            "반품 일정",
            "협력사는 목록 등록 후 3영업일 안에 [반품 승인] 또는 [이의 신청]을 해야 합니다.",
        )
    )

    assert answer_sentences("반품 접수 기간은요?", [stock, schedule]) == [
        "협력사는 목록 등록 후 3영업일 안에 [반품 승인] 또는 [이의 신청]을 해야 합니다."
    ]
    assert answer_sentences("반품 접수 기간은요?", [stock]) == [
        "90일 이상 판매가 없는 재고는 장기 재고로 분류되어 담당 MD가 할인 판매나 반품을 협의합니다."
    ]


def _hub_section(title, section, *sentences):
    """One hub passage: several sentences under one section path, as the hub tool writes a whole section."""
    lines = "\n".join(f"[{title} > {section}] {sentence}" for sentence in sentences)
    return f"[1] (지식 허브 · {title})\n{lines}"


def test_a_hub_sentence_answers_for_what_the_rest_of_its_section_names():
    """`택배 파손은 협력사가 부담합니다` is about the 박스 sent to the 센터 by 택배 that the sentence before it names;
    that sentence itself names the 센터 as a place, not as the party asked for."""
    parcel = _hub_section(
        "배송 방식과 운임 부담",
        "택배 납품",
        "박스 10개 이하 소량 상품은 택배로 센터에 납품할 수 있습니다.",
        "택배 송장 번호는 입고 예약에 함께 입력해야 하며, 택배 파손은 협력사가 부담합니다.",
    )
    question = "택배로 센터 납품하다가 박스 파손되면 그건 누구 책임이에요?"

    assert answer_sentences(question, [parcel]) == [
        "택배 송장 번호는 입고 예약에 함께 입력해야 하며, 택배 파손은 협력사가 부담합니다."
    ]
    first_only = _hub_section(
        "배송 방식과 운임 부담", "택배 납품", "박스 10개 이하 소량 상품은 택배로 센터에 납품할 수 있습니다."
    )
    assert answer_sentences(question, [first_only]) == []


def test_a_section_sentence_stating_its_own_value_lends_the_others_none_of_its_words():
    """Under one heading, the 평택 line with its own dates is the answer for 평택; the 이천·용인 line does not borrow
    평택 from it. A follow-up about another centre takes that centre's line."""
    holiday = _hub_section(
        "2026 추석 연휴 운영 안내",
        "센터 휴무",
        "이천 물류센터와 용인 신선센터는 9월 24일부터 9월 27일까지 휴무합니다.",
        "평택 전용 물류센터는 9월 25일부터 9월 27일까지 휴무합니다.",
    )

    assert answer_sentences("지난 추석때 평택 센터는 며칠부터 쉬었었죠?", [holiday]) == [
        "평택 전용 물류센터는 9월 25일부터 9월 27일까지 휴무합니다."
    ]
    assert answer_sentences("지난 추석때 이천 센터는 며칠부터 쉬었었죠?", [holiday]) == [
        "이천 물류센터와 용인 신선센터는 9월 24일부터 9월 27일까지 휴무합니다."
    ]


def test_the_items_of_a_listed_section_lend_each_other_nothing():
    """`김해 물류센터: …` without hours does not make the 이천 line (with hours) an answer for 김해."""
    centres = _hub_section(
        "물류센터 입고 기준",
        "센터별 입고 대상",
        "이천 물류센터: 상온 상품 전체. 평일 오전 7시부터 오후 4시까지 입고합니다.",
        "김해 물류센터: 부산·경남 권역 점포용으로 담당 MD가 지정한 상품만 입고합니다.",
    )

    assert answer_sentences("김해센터는 입고 몇 시부터 받아요?", [centres]) == []
    assert answer_sentences("이천센터는 입고 몇 시부터 받아요?", [centres]) == [
        "이천 물류센터: 상온 상품 전체. 평일 오전 7시부터 오후 4시까지 입고합니다."
    ]


def test_the_scene_said_before_a_question_need_not_be_named_by_its_answer():
    """`이번에 냉동 교자 처음 들고 가는데 …`: what the vendor is doing sets the scene; the question after it (탑차 온도
    기준, 영하 몇 도) must be answered. A statement that names only the scene answers nothing."""
    frozen = _faq("냉동 상품 납품 온도 기준은?", "냉동 상품은 영하 18도 이하, 냉장 상품은 0~10도를 유지해야 합니다.")
    lead_time = _hub(("발주 마감과 리드타임", "리드타임", "냉동 상품은 발주일로부터 1영업일 안에 납품합니다."))
    question = "이번에 냉동 교자 처음 들고 가는데 탑차 온도 기준이 영하 몇 도예요?"

    assert answer_sentences(question, [frozen, lead_time]) == [
        "냉동 상품은 영하 18도 이하, 냉장 상품은 0~10도를 유지해야 합니다."
    ]
    assert answer_sentences(question, [lead_time]) == []
    focus = question_focus(question)
    assert {"냉동", "교자", "처음"} <= set(focus.scene) and "탑차" not in focus.scene


def test_a_question_with_little_of_its_own_after_the_scene_keeps_the_scene_required():
    """`… 파일로 받는데 기간 제한 있어요?`: 제한 alone is not a subject, so the scene's 발주 목록 must be named."""
    focus = question_focus("발주 목록 엑셀 파일로 받는데 기간 제한 있어요?")

    assert focus.scene == ()
    cancel = _faq("발주를 취소할 수 있나요?", "납품 예정일 2영업일 전까지는 발주 취소 요청이 가능합니다.")
    assert answer_sentences("발주 목록 엑셀 파일로 받는데 기간 제한 있어요?", [cancel]) == []


def test_a_total_asked_is_the_orders_sum_not_the_products_unit_price():
    """`콩나물 4kg 건 총액`: the order's 주문 금액, although the contract's unit price names the product as fully."""
    records = (
        "[1] (거래처 기록 · 주문 SO-2611-1018)\n[주문] 주문 SO-2611-1018\n"
        "초록마당 콩나물 4kg (CM-101) 40박스 주문 접수. 납기 2026-12-03, 배송지 본사 물류센터. 주문 금액 248,000원.\n"
        "주문번호: SO-2611-1018 · 수량: 40박스 · 주문 금액: 248,000원 · 납기: 2026-12-03 · 상태: 출고 준비\n\n"
        "[2] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "최소 주문 금액은 500,000원입니다. "
        "주요 품목 납품 단가: 초록마당 유기농 두부 1kg 4,300원, 초록마당 콩나물 4kg 6,200원.\n"
        "최소 주문 금액: 500,000원\n적용 기간: 2026-01-01 ~ 2026-12-31"
    )

    assert answer_sentences("지난주에 받은 발주 콩나물 4kg 건 총액이 얼마로 찍혀 있는지 궁금해요", [records]) == [
        "주문 금액 248,000원."
    ]
    assert question_focus("콩나물 4kg 납품가 얼마예요?").asks_total is False


def test_another_item_with_also_asks_the_earlier_question_about_that_item():
    """`된장 3kg짜리도 알려주세요` after "쌈장 2kg 납품가 얼마예요?" asks the 된장's 납품가: a follow-up, although it
    names an item of its own; with an ask of its own ("고추장도 얼마예요?") it stands alone."""
    rewritten = rewrite_follow_up("된장 3kg짜리도 알려주세요", ["쌈장 2kg 납품가 얼마예요?"])
    assert rewritten and "된장" in rewritten and "쌈장" in rewritten
    assert rewrite_follow_up("된장 3kg짜리도요?", ["쌈장 2kg 납품가 얼마예요?"])
    assert rewrite_follow_up("고추장도 얼마예요?", ["쌈장 2kg 납품가 얼마예요?"]) == ""
    assert rewrite_follow_up("온도 알려주세요", ["쌈장 2kg 납품가 얼마예요?"]) == ""
    records = (
        "[1] (거래처 기록 · 주문 SO-2611-1028)\n[주문] 주문 SO-2611-1028\n"
        "산들찬 된장 3kg (SD-101) 60박스 주문 접수. 주문 금액 774,000원.\n\n"
        "[2] (거래처 기록 · 된장 3kg)\n산들찬 된장 3kg (SD-101) 단가 12,900원"
    )

    answer = answer_sentences(
        rewritten, [records], follow_up="된장 3kg짜리도 알려주세요", earlier="쌈장 2kg 납품가 얼마예요?"
    )

    assert answer == ["산들찬 된장 3kg (SD-101) 단가 12,900원"]


def test_a_place_ending_like_a_verb_form_is_still_the_subject():
    """`김해` ends as `확인해` does, but the analyser reads it as a noun: "김해 센터로 납품하는데 … 무슨 요일" is
    answered by the 김해 notice, not by the general schedule that names no centre."""
    question = "저희는 김해 센터로 납품하는데 요즘 반품 회수 차가 무슨 요일에 와요?"
    assert "김해" in question_focus(question).subject
    assert question_focus("이거 확인해 주세요").words == ()
    returns = (
        "[1] (지식 허브 · 반품 회수 요일 변경 공지)\n"
        "[반품 회수 요일 변경 공지] 2026년 11월부터 김해 물류센터의 반품 회수 요일이 목요일에서 금요일로 바뀝니다.\n\n"
        "[2] (지식 허브 · 반품·교환 기준)\n"
        "[반품·교환 기준 > 반품 일정] 반품 예정 목록은 매주 화요일 파트너센터에 등록되고, "
        "회수 차량은 목요일에 출발합니다."
    )

    assert answer_sentences(question, [returns]) == [
        "2026년 11월부터 김해 물류센터의 반품 회수 요일이 목요일에서 금요일로 바뀝니다."
    ]


def test_an_address_asked_is_answered_by_a_street_address_only():
    """`김해 물류센터 주소` is not answered by the line that names the 김해 centre without its address; the FAQ entry's
    addresses of the other centres name another place."""
    centres = _hub_section(
        "물류센터 입고 기준",
        "센터별 입고 대상",
        "김해 물류센터: 부산·경남 권역 점포용으로 담당 MD가 지정한 상품만 입고합니다.",
    )
    head_office = _faq("본사 주소가 어떻게 되나요?", "본사는 서울특별시 송파구 올림픽로 300, 누리타워 12층입니다.")

    assert answer_sentences("김해 물류센터 주소가 어떻게 돼요?", [centres]) == []
    assert answer_sentences("본사 주소 좀 알려주세요", [head_office]) == [
        "본사는 서울특별시 송파구 올림픽로 300, 누리타워 12층입니다."
    ]


def test_a_bound_said_before_the_value_asked_is_not_required_of_the_answer():
    """`최소 몇 픽셀` asks for a minimum that "1000×1000 픽셀 이상" states by 이상 alone; a range word the analyser
    leaves unread (`최소 얼마 이상`) names no subject either. A noun naming the bound (`한도`) is still asked about."""
    images = _faq(
        "상품 이미지 규격이 있나요?",
        "대표 이미지는 흰 배경의 1000×1000 픽셀 이상 JPG 파일로 등록해 주세요. "
        "상세 이미지는 가로 860 픽셀을 권장합니다.",
    )

    answer = answer_sentences("상품 대표 이미지 최소 몇 픽셀이어야 돼요?", [images])
    assert answer[0] == "대표 이미지는 흰 배경의 1000×1000 픽셀 이상 JPG 파일로 등록해 주세요."
    focus = question_focus("한 번에 최소 얼마어치 이상 주문 넣어야 되는 거였죠?")
    assert "최소" in focus.optional and "이상" not in focus.subject
    assert "한도" not in question_focus("행사 할인율 한도가 몇 %예요?").optional


def test_an_action_typed_as_its_noun_is_the_action_asked():
    """`계좌 변경 신청하면 처리 며칠 걸리나요?` asks about changing the account, as `바꾸려면` does: the FAQ entry on
    the 계좌 변경 answers it, not the settlement record that paid by 계좌 이체."""
    assert question_focus("정산 입금 계좌 변경 신청하면 처리 며칠 걸리나요?").actions == ("변경",)
    assert question_focus("입금 계좌 바꾸려면 며칠 걸려요?").actions == ("변경",)
    settlement = (
        "[1] (거래처 기록 · 10월 정산 내역)\n[정산] 10월 정산 내역\n"
        "10월 매입 정산액은 37,420,000원(부가세 포함)이며 2026-11-10에 계좌 이체로 지급 완료했습니다."
    )
    account = _faq(
        "대금 지급 계좌를 변경하고 싶어요.",
        "계좌 변경은 파트너센터 [회사 정보] > [지급 계좌]에서 통장 사본과 사용인감계를 첨부해 신청해 주세요. "
        "승인까지 3영업일이 걸립니다.",
        number=2,
    )

    assert answer_sentences("정산 입금 계좌 변경 신청하면 처리 며칠 걸리나요?", [settlement, account]) == [
        "승인까지 3영업일이 걸립니다."
    ]


@pytest.mark.parametrize("typed", ["반 페이지짜리는요?", "반면짜리는요?", "반 페이지면요?", "반 면으로 키우면요?"])
def test_half_a_page_however_typed_is_the_half_page_the_sources_write(typed):
    assert "1/2면" in question_focus(typed).words
    assert "1/2면" not in question_focus("반면에 이건 어때요?").words  # 반면: "on the other hand"


@pytest.mark.parametrize("follow_up", ["반 페이지짜리는요?", "반면짜리는요?", "반 페이지면요?"])
def test_half_a_page_asked_after_a_quarter_is_answered_for_half_a_page(follow_up):
    """After "전단 1/4면 광고비 얼마예요?", half a page is asked the same question: its 55만 원, never the 1/4면's
    30만 원 again ("반 페이지면요?" names an item with 이면, not a condition of its own)."""
    earlier = "전단 1/4면 광고비 얼마예요?"
    leaflet = (
        _hub_section(
            "프로모션 운영 기준",
            "전단 광고비",
            "전단 1/4면 광고비는 30만 원, 1/2면은 55만 원이며 행사 종료 다음 달 정산에서 차감합니다.",
        )
        + "\n\n"
        + _faq("전단 행사 광고비가 있나요?", "전단 게재 시 면당 광고비가 발생하며, 1/4면 기준 30만 원입니다.", number=2)
    )
    rewritten = rewrite_follow_up(follow_up, [earlier])

    answer = answer_sentences(rewritten, [leaflet], follow_up=follow_up, earlier=earlier)

    assert answer and "55만 원" in answer[0] and "30만 원" not in " ".join(answer)


def test_a_question_asked_only_of_its_scene_is_answered_by_the_faq_entry_asking_the_same_about_one_of_it():
    """`서류 들고 본사 찾아가려는데 주소가 어디에요?` names nothing after its scene: the address asked is of one thing
    the scene names (the 본사), which the FAQ entry asking for the 본사's address answers without the 서류. A hub
    sentence naming only one of the scene's words answers nothing."""
    question = "서류 들고 본사 찾아가려는데 주소가 어디에요?"
    assert question_focus(question).scene_only == ("서류", "들고", "본사")
    head_office = _faq("본사 주소가 어떻게 되나요?", "본사는 서울특별시 송파구 올림픽로 300, 누리타워 12층입니다.")
    mail = _faq("우편으로 서류를 보내려면?", "서류 원본은 본사 12층 협력사지원팀 앞으로 등기 발송해 주세요.", number=2)

    assert answer_sentences(question, [head_office + "\n\n" + mail]) == [
        "본사는 서울특별시 송파구 올림픽로 300, 누리타워 12층입니다."
    ]
    registration = _hub_section(
        "신규 거래처 등록 절차", "등록 순서", "품평회 통과 후 거래처 등록 서류를 본사 담당 MD에게 제출합니다."
    )
    assert answer_sentences(question, [registration]) == []


def test_the_goods_in_general_are_no_subject_an_answer_must_name():
    """`물량` is the goods, as 물건 is: "물량 적을 땐 택배로 부쳐도 되나요?" is answered by the 택배 rule."""
    assert "물량" not in question_focus("물량 적을땐 그냥 택배로 부쳐도 되나요? 몇박스까지 돼요").subject


@pytest.mark.parametrize(
    ("question", "aspect"),
    [
        ("회수 요청 받은 날 기준으로 원인 조사 계획 제출 기한이 며칠이에요?", "date"),  # 원인 조사: a document's name
        ("불량 원인이 뭐예요?", "reason"),
        ("담당 MD님 회신은 보통 요청일부터 최대 얼마 안에 오나요?", "duration"),
        ("하도급이라 지급 기한이 따로 있다던데 얼마예요", "duration"),
    ],
)
def test_the_aspect_asked_is_read_from_the_question_not_from_a_name_or_a_price_word(question, aspect):
    assert question_focus(question).aspect == aspect


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("예전에 저희 반품 차감이 대금보다 많아서 다음 달로 넘어간 적 있었죠? 그때 상계된 금액이 얼마였어요?", "달로"),
        ("예전에 저희 반품 차감이 대금보다 많아서 다음 달로 넘어간 적 있었죠? 그때 상계된 금액이 얼마였어요?", "예전"),
        ("내년 계약 단가랑 장려금률 협상은 갱신 전에 언제쯤부터 시작하나요?", "언제쯤"),
        ("상반기 평가 받을 때 저희 결품률 수치 기억하세요? 몇 퍼센트였는지", "수치"),
        ("파트너센터 비번 주기적으로 바꿔야 돼요? 며칠마다요", "주기적"),
    ],
)
def test_words_for_when_it_was_said_or_the_form_of_the_value_are_no_subject(question, word):
    assert word not in question_focus(question).subject


def test_a_renewed_copy_or_a_pickup_truck_is_about_the_renewal_or_the_pickup():
    """`갱신본` is the 갱신 인증서 the hub names, `냉동차` the 냉동 상품's truck: read as the noun they come from."""
    quality = _hub_section(
        "입고 검사 기준",
        "품질 서류",
        "HACCP 인증 상품은 인증서 사본을 등록하고, 인증이 만료되기 30일 전에 갱신 인증서를 제출해야 합니다.",
    )

    answer = answer_sentences("해썹 인증 곧 끝나는데 갱신본 업로드 기한이 만료 몇일 전까지인가요", [quality])

    assert answer and "30일" in answer[0]


def test_the_vendors_own_figure_in_a_policy_answers_a_question_about_its_own_figure():
    """`저희 결품률 몇 퍼센트였죠?`: the sentence naming the room's vendor, not the threshold all are held to."""
    evaluation = _hub_section(
        "협력사 거래 기본 정책",
        "협력사 평가",
        "결품률이 3%를 넘거나 품질 사고가 연 2회 이상이면 개선 계획서를 제출해야 합니다.",
        "가온상사는 결품률 4.2%로 개선 계획서 제출 대상이었으며, 7월 말까지 계획서를 제출했습니다.",
    )
    answer = answer_sentences(
        "상반기 평가 받을 때 저희 결품률 수치 기억하세요? 몇 퍼센트였는지",
        [evaluation],
        counterpart_names=("가온상사",),
    )

    assert answer == ["가온상사는 결품률 4.2%로 개선 계획서 제출 대상이었으며, 7월 말까지 계획서를 제출했습니다."]


def test_a_reason_said_first_and_the_customer_served_are_not_required_of_a_claims_rule():
    """ "담당자가 휴가라 …" says why the vendor asks; `고객` is whom the claim came from, which the claims rules do not
    write; `불만` is the 클레임 they do."""
    claims = _hub_section(
        "클레임 처리 기준",
        "처리 기한 위반",
        "1차 답변 기한을 넘기면 클레임 1건당 5만 원의 페널티가 다음 달 정산에서 차감됩니다.",
    )
    focus = question_focus("저희 담당자가 휴가라 민원 첫 회신이 늦어질 것 같은데 늦으면 정산에서 얼마나 깎여요?")
    assert {"담당자", "휴가"} <= set(focus.optional)
    assert "고객" in question_focus("고객 불만 건 첫 회신을 늦게 하면 건당 얼마씩 정산에서 빠져요?").optional

    for question in (
        "저희 담당자가 휴가라 민원 첫 회신이 늦어질 것 같은데 늦으면 정산에서 얼마나 깎여요?",
        "고객 불만 건 첫 회신을 늦게 하면 건당 얼마씩 정산에서 빠져요?",
    ):
        answer = answer_sentences(question, [claims])
        assert answer and "5만 원" in answer[0], question


EXCEL_FAQ = _faq(
    "발주서 엑셀 다운로드가 가능한가요?",
    "네, [발주 조회] 화면 오른쪽 위의 [엑셀 다운로드] 버튼으로 조회된 발주를 한 번에 받으실 수 있습니다. "
    "최대 3개월 범위까지 조회됩니다.",
)


@pytest.mark.parametrize(
    "question",
    [
        "발주내역 엑셀로 뽑을때 한번에 몇달치까지 조회되나요",  # 발주내역: the 발주's listing
        "엑셀로 발주 목록 내려받으면 조회 기간 제한이 몇 달이에요?",
        "발주조회 엑셀로 받을때 기간 최대 얼마까지 걸 수 있어요",  # 기간 … 최대 얼마: a length of time
        "발주 목록 엑셀 파일로 받는데 기간 제한 있어요?",  # whether there is a limit: the limit
    ],
)
def test_the_listing_a_screen_shows_is_not_required_and_a_limit_asked_is_answered_by_the_limit(question):
    assert answer_sentences(question, [EXCEL_FAQ])[0] == "최대 3개월 범위까지 조회됩니다."


def test_a_main_images_resolution_is_the_representative_images_size():
    """`메인 이미지` is the 대표 이미지 the FAQ names, `해상도` a size asked (read whole, not as 해상 with 도)."""
    images = _faq(
        "상품 이미지 규격이 있나요?",
        "대표 이미지는 흰 배경의 1000×1000 픽셀 이상 JPG 파일로 등록해 주세요. "
        "상세 이미지는 가로 860 픽셀을 권장합니다.",
    )
    assert question_focus("상품 메인 사진 흰배경으로 찍었는데 해상도 기준이 어떻게 되나요").aspect == "size"

    answer = answer_sentences("상품 메인 사진 흰배경으로 찍었는데 해상도 기준이 어떻게 되나요", [images])

    assert answer[0] == "대표 이미지는 흰 배경의 1000×1000 픽셀 이상 JPG 파일로 등록해 주세요."


def test_a_lecture_on_how_to_use_the_partner_centre_is_its_training():
    training = _faq(
        "파트너센터 이용 교육이 있나요?",
        "신규 협력사를 위한 온라인 교육이 매월 첫째 주 수요일 오후 2시에 진행됩니다. "
        "신청은 [공지사항]의 교육 안내 글에서 하실 수 있습니다.",
    )

    answer = answer_sentences("새로 온 직원이 파트너센터 사용법 강의 받을수 있을까요? 언제 하나요", [training])

    assert any("첫째 주 수요일" in sentence for sentence in answer)


def test_another_month_asked_after_a_settlement_question_is_that_months_settlement():
    """`10월 거는`: a period with a dependent noun picks another occurrence of the earlier topic, which is the 정산
    the earlier question names after its period (not the period alone)."""
    follow_up, earlier = "10월 거는 얼마 받았었죠?", "11월분 정산 언제 들어와요?"
    rewritten = rewrite_follow_up(follow_up, [earlier])
    assert "정산" in rewritten and "10월" in rewritten
    assert "10월" in rewrite_follow_up("10월 건은 얼마 나갔었죠?", ["11월 정산 지급 예정일이 언제에요?"])
    settlements = (
        "[1] (거래처 기록 · 10월 정산 내역)\n[정산] 10월 정산 내역\n"
        "10월 매입 정산액은 37,420,000원(부가세 포함)이며 2026-11-10에 계좌 이체로 지급 완료했습니다.\n\n"
        "[2] (거래처 기록 · 11월 정산 예정)\n[정산] 11월 정산 예정\n"
        "11월 매입분은 11월 30일 마감 후 정산서를 발행하며 지급 예정일은 2026-12-25입니다."
    )

    answer = answer_sentences(rewritten, [settlements], follow_up=follow_up, earlier=earlier)

    assert answer and "37,420,000원" in answer[0]


def test_two_asks_joined_in_one_sentence_get_both_values():
    """ "할인 몇 퍼센트에 최소 몇 박스예요?", "유효기간이 얼마고, … 언제 없어져요?": two asks joined by 에 or 고 after
    a question word's phrase, each answered; the open API (`오픈 API`) is the API the entry names."""
    promotion = (
        "[1] (거래처 기록 · 11~12월 초록마당 프로모션)\n[프로모션] 11~12월 초록마당 프로모션\n"
        "행사 기간 중 초록마당 전 품목 12% 할인합니다. 10박스 이상 주문 시 적용, 다른 할인과 중복되지 않습니다."
    )
    api_key = _faq(
        "API 키가 만료됐어요.",
        "API 키의 유효 기간은 1년입니다. [설정] > [API 키 발급]에서 재발급하시면 기존 키는 7일 후 폐기됩니다.",
    )

    promotion_answer = " ".join(
        answer_sentences("초록마당 프로모션 말인데요, 할인 몇 퍼센트에 최소 몇 박스예요?", [promotion])
    )
    key_answer = " ".join(
        answer_sentences("오픈 API 키 받으면 유효기간이 얼마고, 재발급하면 예전 키는 언제 없어져요?", [api_key])
    )

    assert "12%" in promotion_answer and "10박스" in promotion_answer
    assert "1년" in key_answer and "7일" in key_answer


def test_who_asks_said_first_is_not_what_is_asked_about():
    """ "대성기업 구매 담당입니다.", "금강제과 경리팀인데요,": the vendor's name, team or role said first names no
    subject; a topic said the same way (`초록마당 두부 건인데요`) still does."""
    wipes = (
        "[1] (거래처 기록 · 2026년 거래 조건)\n[계약 조건] 2026년 거래 조건\n"
        "주요 품목 납품 단가: 은빛제지 종이컵 6.5온스 1000개 17,100원, 은빛제지 물티슈 100매×10 12,000원."
    )
    question = "대성기업 구매 담당입니다. 은빛제지 물티슈 100매×10 납품가가 얼마로 돼 있죠?"

    assert question_focus(question, counterpart_names=("대성기업",)).subject == ("은빛제지", "물티슈")
    assert "두부" in question_focus("초록마당 두부 건인데요, 납기 언제예요?", counterpart_names=("가온상사",)).subject
    answer = answer_sentences(question, [wipes], counterpart_names=("대성기업",))
    assert answer and "12,000원" in answer[0]
