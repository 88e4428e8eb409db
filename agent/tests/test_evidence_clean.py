"""Evidence that is current and clean: periods, passages, two values for one subject, where answer sentences came
from, and how the evaluation judges an answer. Pure functions: no database."""

import datetime

from agent.answer_sources import sentence_sources
from agent.evaluation import CaseResult, _check_expectations, answer_defects
from agent.knowledge.passages import Unit, chunk_units, heading_only
from agent.knowledge.periods import (
    Period,
    holiday_period,
    in_force,
    month_figure_asked,
    months_named,
    period_in,
    question_window,
)
from agent.knowledge.reconcile import evidence_reconcile
from agent.knowledge.synonyms import spoken_forms_written
from agent.knowledge.types import EvidenceItem

TODAY = datetime.date(2026, 12, 1)


def test_periods_are_read_from_headings_and_questions():
    assert period_in("2026년 하반기 행사 > 추석 기획전 (9월 1일 ~ 9월 24일)", year=2025) == Period(
        datetime.date(2026, 9, 1), datetime.date(2026, 9, 24)
    )
    assert period_in("연말 재고 조사(12월 29~31일)", year=2026) == Period(
        datetime.date(2026, 12, 29), datetime.date(2026, 12, 31)
    )
    assert period_in("7~8월 한정 특가", year=2026) == Period(datetime.date(2026, 7, 1), datetime.date(2026, 8, 31))
    assert period_in("정산 일정 > 정산 주기", year=2026) is None
    # A question is about today unless it names a period of its own.
    assert question_window("할인율이 얼마예요?", today=TODAY) == Period(TODAY, TODAY)
    assert question_window("지난달 정산 금액", today=TODAY) == Period(
        datetime.date(2026, 11, 1), datetime.date(2026, 11, 30)
    )
    assert question_window("익월 25일 맞나요?", today=TODAY) == Period(TODAY, TODAY)  # 익월 is a term here
    ended = Period(datetime.date(2026, 7, 1), datetime.date(2026, 8, 31))
    assert not in_force(ended, question_window("지금 할인율은?", today=TODAY))
    assert in_force(ended, question_window("7~8월 특가 할인율은?", today=TODAY))
    assert in_force(None, Period(TODAY, TODAY))


def test_a_named_season_last_year_or_past_event_is_the_questions_period_and_a_day_asked_is_a_term():
    """`여름 특가` is about this summer (the ended promotion is evidence again), `작년` about last year, `지난 김장
    특가전` about the past whenever it was; `다음 달 며칠에` asks for the day of a term, not about next month."""
    summer = Period(datetime.date(2026, 6, 1), datetime.date(2026, 8, 31))
    assert question_window("여름 특가 때는 몇 %였죠?", today=TODAY) == summer
    assert question_window("여름철 배송은요?", today=TODAY) == summer
    assert question_window("겨울 행사는요?", today=TODAY) == Period(
        datetime.date(2026, 12, 1), datetime.date(2027, 2, 28)
    )
    # A season not yet begun this year is last year's.
    assert question_window("가을 행사 할인율은?", today=datetime.date(2026, 5, 2)) == Period(
        datetime.date(2025, 9, 1), datetime.date(2025, 11, 30)
    )
    assert question_window("작년 정산 금액은?", today=TODAY) == Period(
        datetime.date(2025, 1, 1), datetime.date(2025, 12, 31)
    )
    assert question_window("작년 11월 정산금 얼마였죠?", today=TODAY) == Period(
        datetime.date(2025, 11, 1), datetime.date(2025, 11, 30)
    )
    past = question_window("지난 김장 특가전 행사가 얼마였어요?", today=TODAY)
    assert past == Period(None, TODAY)
    assert in_force(Period(datetime.date(2026, 11, 10), datetime.date(2026, 11, 30)), past)
    assert question_window("지난 달 정산은요?", today=TODAY) == Period(
        datetime.date(2026, 11, 1), datetime.date(2026, 11, 30)
    )
    assert question_window("저희 결제는 다음 달 며칠에 나와요?", today=TODAY) == Period(TODAY, TODAY)
    assert question_window("다음 달 행사는요?", today=TODAY) == Period(
        datetime.date(2027, 1, 1), datetime.date(2027, 1, 31)
    )
    # A word that holds a season's letters is no season.
    assert question_window("봄나물 가격은?", today=TODAY) == Period(TODAY, TODAY)


def test_a_holiday_is_a_period_of_the_passage_that_names_it_and_of_the_question():
    """A notice under `2026년 추석 연휴 운영 안내` is about 추석's months: no evidence for a question about now, and
    evidence for one that names 추석 — the holiday nearest today, the one just past or the one coming."""
    notice = holiday_period("2026년 추석 연휴 운영 안내 > 정산", year=2027)

    assert notice == Period(datetime.date(2026, 9, 1), datetime.date(2026, 10, 31))
    assert holiday_period("설 선물세트 안내", year=2027) == Period(
        datetime.date(2027, 1, 1), datetime.date(2027, 2, 28)
    )
    assert holiday_period("설정 방법 안내", year=2026) is None
    assert not in_force(notice, question_window("정산 대금 언제 지급돼요?", today=TODAY))
    assert in_force(notice, question_window("추석 연휴 때 정산 대금은 언제 나갔어요?", today=TODAY))
    assert question_window("설 연휴 발주 마감 언제예요?", today=TODAY) == Period(
        datetime.date(2027, 1, 1), datetime.date(2027, 2, 28)
    )


def test_a_months_figure_is_a_settlement_purchase_or_sales_total_of_a_named_month():
    assert all(
        month_figure_asked(question)
        for question in ("9월 정산 금액 얼마였죠?", "8월분 매입 정산액", "9월에 정산 받은 금액", "9월 한 달 매입 정산")
    )
    assert not any(
        month_figure_asked(question)
        for question in ("10월 15일에 정산 대금 들어와요?", "정산 금액 얼마예요?", "11월 행사 할인율은?")
    )


def test_spoken_short_forms_are_read_in_the_written_form_of_the_sources():
    assert spoken_forms_written("토욜 날도 발주서 들어와요?") == "토요일 날도 발주서 들어와요?"
    assert spoken_forms_written("낼 오전까지 보내요, 담주 월욜") == "내일 오전까지 보내요, 다음 주 월요일"
    assert spoken_forms_written("여름 특가 때는 몇 프로였죠?") == "여름 특가 때는 몇 %였죠?"
    assert spoken_forms_written("10프로 할인") == "10% 할인"
    assert spoken_forms_written("비번 몇 번 틀리면 잠겨요? 비번은요?") == "비밀번호 몇 번 틀리면 잠겨요? 비밀번호는요?"
    assert (
        spoken_forms_written("카톡으로 물어보면 몇 시까지 답 받아요?") == "카카오톡으로 물어보면 몇 시까지 답 받아요?"
    )
    assert spoken_forms_written("여기 톡으로 물어보면요") == "여기 카카오톡으로 물어보면요"
    assert (
        spoken_forms_written("11월치는 몇일로 잡혀있어요? 몇 일 걸려요?") == "11월치는 며칠로 잡혀있어요? 며칠 걸려요?"
    )
    assert spoken_forms_written("시월 정산이랑 유월 정산") == "10월 정산이랑 6월 정산"
    assert spoken_forms_written("단가 확인 부탁드립니당~ 있나여?") == "단가 확인 부탁드립니다~ 있나요?"
    assert spoken_forms_written("된장 3키로, 즉석밥 210그람, 들기름 1.8리터") == "된장 3kg, 즉석밥 210g, 들기름 1.8L"
    assert spoken_forms_written("전통약과 키로짜리 단가") == "전통약과 1kg짜리 단가"
    assert spoken_forms_written("저흰 몇시까지요? 우린요") == "저희는 몇시까지요? 우린요"
    assert spoken_forms_written("깍두기 단가 확인좀 해주세요") == "깍두기 단가 확인 좀 해주세요"
    assert spoken_forms_written("단가좀?") == "단가 좀?"
    assert (
        spoken_forms_written("전단 반면 광고하면, 반 페이지짜리로 키우면") == "전단 1/2면 광고하면, 1/2면짜리로 키우면"
    )
    assert spoken_forms_written("반면에 반품은 반면") == "반면에 반품은 반면"  # "on the other hand"
    assert spoken_forms_written("배도라지즙30포, 포기김치10kg, 2분기") == "배도라지즙 30포, 포기김치 10kg, 2분기"
    # Longer words holding the same letters stay as written.
    for text in [
        "프로모션 몇 건",
        "서류 낼 때",
        "내일 낼게요",
        "3프로젝트",
        "토요일",
        "비번호",
        "카톡상담",
        "토크",
        "몇 일자",
        "당당",
        "여러 개",
        "시월드",
    ]:
        assert spoken_forms_written(text) == text


def test_a_chunk_becomes_whole_sentences_and_list_items_under_their_section_path():
    chunk = (
        "정산 일정 > 정산 주기\n\n정산은 월 1회입니다. 대금은 다음 달\n15일에 지급합니다.\n\n"
        "- 물류비: 입고 금액의 2.5%. 직배송은 없습니다.\n- 장려금: 계약서 기준"
    )

    assert chunk_units(chunk) == [
        Unit("정산 일정 > 정산 주기", "정산은 월 1회입니다."),
        Unit("정산 일정 > 정산 주기", "대금은 다음 달 15일에 지급합니다."),  # the soft line break is joined
        Unit("정산 일정 > 정산 주기", "물류비: 입고 금액의 2.5%. 직배송은 없습니다."),  # a list item stays whole
        Unit("정산 일정 > 정산 주기", "장려금: 계약서 기준"),
    ]
    assert (
        Unit("정산 일정 > 정산 주기", "정산은 월 1회입니다.").line() == "[정산 일정 > 정산 주기] 정산은 월 1회입니다."
    )
    assert heading_only("정산 일정 > 정산 주기") and not heading_only("할인율: 15%")


def _item(kind, reference, text, as_of=None, title=""):
    return EvidenceItem(kind, reference, text, 1.0, title=title, extra={"as_of": as_of})


def test_of_two_values_for_one_subject_the_loser_is_not_given_and_the_winner_kept():
    """The newer FAQ answer loses to nothing older; the vendor's record wins over shared knowledge; a limit
    (최대) conflicts with nothing; another subject with another number is not a conflict."""
    hub = _item(
        "hub",
        "hub:returns:c1",
        "[반품 기준 > 반품 일정] 협력사는 목록 등록 후 3영업일 안에 반품 승인을 해야 합니다.\n"
        "[반품 기준 > 비용] 회수 운임은 1회 25,000원입니다.",
        as_of="2026-12-01T00:00:00",
    )
    faq = _item(
        "faq",
        "faq:39",
        "질문: 반품 승인 기한이 있나요?\n"
        "답변: 반품 예정 목록 등록 후 5영업일 이내 승인을 등록해 주셔야 합니다. 기한이 지나면 자동 승인됩니다.",
        as_of="2026-10-05T09:30:00",
    )
    limit = _item("hub", "hub:promotions:c2", "[프로모션 > 한도] 행사 할인율은 최대 50%까지입니다.", as_of="2026-12-01")
    record = _item("record", "record:1", "[프로모션] 겨울 행사\n행사 할인율은 15%입니다.", as_of="2026-11-01")

    kept, removed = evidence_reconcile([record, hub, faq, limit])

    assert [entry["text"] for entry in removed] == ["반품 예정 목록 등록 후 5영업일 이내 승인을 등록해 주셔야 합니다."]
    assert removed[0]["kept_reference"] == "hub:returns:c1"
    by_reference = {item.reference: item for item in kept}
    assert by_reference["faq:39"].text == "질문: 반품 승인 기한이 있나요?\n답변: 기한이 지나면 자동 승인됩니다."
    assert by_reference["hub:returns:c1"] == hub and by_reference["record:1"] == record
    assert by_reference["hub:promotions:c2"] == limit


def test_the_vendors_record_beats_a_newer_shared_statement_and_is_never_cut():
    record = _item(
        "record", "record:1", "[계약 조건] 2026 거래 조건\n반품 승인은 목록 등록 후 7영업일 안에 합니다.", "2026-01-01"
    )
    hub = _item("hub", "hub:returns:c1", "[반품 > 승인] 반품 승인은 목록 등록 후 3영업일 안에 합니다.", "2026-12-01")

    kept, removed = evidence_reconcile([record, hub])

    assert [item.reference for item in kept] == ["record:1"]  # the hub item had nothing else to say
    assert removed[0]["kept_reference"] == "record:1"


def test_answer_sentences_are_traced_to_the_evidence_they_came_from():
    evidence = [
        _item("faq", "faq:1", "질문: 정산일?\n답변: 대금은 다음 달 15일에 지급합니다."),
        _item("hub", "hub:s:c1", "[정산 > 세금계산서] 세금계산서는 다음 달 5일까지 발행합니다."),
    ]
    answer = "대금은 다음 달 15일에 지급합니다.\n세금계산서는 다음달 5일까지 발행해요.\n주말에는 쉽니다.\n\n참고 자료:\nhttps://x"

    sources = sentence_sources(answer, evidence)

    assert [(source.references, source.copied) for source in sources] == [
        (("faq:1",), True),
        (("hub:s:c1",), False),  # reworded: the item sharing most of its character bigrams
        ((), False),
    ]


def test_the_evaluation_judges_right_refused_wrong_and_finds_defects():
    def judged(status, answer, expect, evidence=()):
        result = CaseResult(1, "q", status, answer, 0)
        _check_expectations(result, expect, evidence_texts=list(evidence))
        return result

    fact = {"must_contain": ["15%"], "must_not_contain": ["18%"]}
    assert judged("answered", "행사 할인율은 15%입니다.", fact, ["15%"]).verdict == "right"
    assert judged("answered", "할인율은 15%, 지난 행사는 18%입니다.", fact).verdict == "wrong"
    assert judged("answered", "할인율은 20%입니다.", fact).verdict == "wrong"
    refused = judged("no_evidence", "안내 문구", fact, ["15% 할인"])
    assert (refused.verdict, refused.evidence_hit) == ("refused", True)
    assert judged("answered", "x 15일 y", {"must_contain": [["15일", "2026-12-15"]]}).verdict == "right"
    assert judged("held", "", {"expect_status": "no_evidence"}).verdict == "right"
    assert judged("answered", "휴가는 인사팀에 신청합니다.", {"expect_status": "no_evidence"}).verdict == "wrong"

    assert answer_defects("정산 일정 > 정산 주기\n대금은 15일에 지급합니다.") == ["heading: 정산 일정 > 정산 주기"]
    assert answer_defects("대금은 15일에 지급합니다. 대금은 15일에 지급합니다.") == [
        "repeated: 대금은 15일에 지급합니다."
    ]
    assert answer_defects("대금은 15일에 지급합니다.\n\n참고 자료:\nhttps://x") == []


def test_ask_history_is_oldest_first_and_the_vendors_unless_a_role_is_given():
    from agent.management.commands.ask import history_items

    assert history_items(["반품 접수는 어떻게 하나요?", "반품은 …입니다.", " "], ["user", "assistant"]) == [
        {"role": "user", "text": "반품 접수는 어떻게 하나요?", "sent_at": None},
        {"role": "assistant", "text": "반품은 …입니다.", "sent_at": None},
    ]
    assert history_items(["첫 질문", "둘째 질문"], []) == [
        {"role": "user", "text": "첫 질문", "sent_at": None},
        {"role": "user", "text": "둘째 질문", "sent_at": None},
    ]


def test_the_period_a_question_names_is_read_as_written():
    from agent.knowledge.periods import period_phrase

    assert period_phrase("여름에 초록마당 두부 특가 했었죠?") == "여름"
    assert period_phrase("지난달 정산 금액") == "지난달"
    assert period_phrase("11월 행사 할인율") == "11월"
    assert period_phrase("작년 단가") == "작년"
    assert period_phrase("할인율 몇 %예요?") == ""


def test_the_months_a_text_names_as_its_period_leave_out_single_days():
    """A month, a month's share, a record's `정산 월`, ranges (across the new year too) and 설/추석 name months; a day
    (`10월 15일`, `2026-11-10`) is when something happens, and 설정 or 12개월 name none."""
    assert months_named("11월치 정산금 며칠에 들어오나요") == {11}
    assert months_named("9월 정산 대금은 10월 15일에 정상 지급합니다.") == {9}
    assert months_named("11~12월 한빛식품 프로모션") == {11, 12}
    assert months_named("적용 기간: 2026-11-01 ~ 2026-12-15") == {11, 12}
    assert months_named("연말 재고 조사(12월 29~31일)") == {12}
    assert months_named("특가 (12월 20일 ~ 1월 5일)") == {12, 1}
    assert months_named("정산 월: 2026-10") == {10}
    assert months_named("설 선물세트 행사") == {1, 2}
    assert months_named("추석 기획전") == {9, 10}
    assert months_named("지급일: 2026-11-10") == frozenset()
    assert months_named("설정 메뉴에서 12개월 할부를 고르세요") == frozenset()
