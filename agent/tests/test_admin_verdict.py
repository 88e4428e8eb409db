"""The audit page puts the verdict first: the text that was (or would be) sent, the outcome, the violation kinds and
the staff actions before anything else; timings, tool calls and history fold away. Staff read Korean throughout:
reason codes, stage names, workspaces and the devices that sent."""

import pytest

from agent.models import DraftRound, KnowledgeWorkspace
from agent.templatetags.agent_admin import reason_label, sentence_diff, sentences
from agent.tests import test_admin_questions as audit_page
from agent.tests.test_admin_questions import FINAL_TEXT, answer_run, change_url, question_in_status
from conversations.models import Question
from conversations.tests.factories import QuestionFactory, RoomFactory
from monitoring.models import Alert
from vendors.models import Vendor

pytestmark = pytest.mark.django_db

delivered_question = audit_page.delivered_question  # the fixture, shared with the audit page's own tests


def position(body: str, marker: str) -> int:
    index = body.find(marker)
    assert index >= 0, marker
    return index


def test_a_delivered_answer_shows_the_sent_text_outcome_and_violation_kinds_first(admin_client, delivered_question):
    KnowledgeWorkspace.objects.update_or_create(slug="policies", defaults={"title": "정산 정책 모음"})
    body = admin_client.get(change_url(delivered_question)).content.decode()

    verdict = position(body, 'id="verdict"')
    assert verdict < position(body, 'id="actions"') < position(body, 'id="question-summary"')
    assert position(body, 'id="question-summary"') < position(body, 'id="run-details"')
    assert position(body, "<details") < position(body, 'id="tool-calls"')
    assert position(body, "<details") < position(body, 'id="run"')
    top = body[verdict : position(body, 'id="actions"')]
    assert "발송한 답변" in top and FINAL_TEXT in top and "✔ 도착 확인" in top
    assert "금액 1건" in top and "브랜드 오기 1건" in top
    assert "정산 정책 모음" in body  # the workspace by its name, not its slug


def test_send_history_names_the_device_and_reads_in_korean(admin_client, delivered_question):
    body = admin_client.get(change_url(delivered_question)).content.decode()
    history = body[position(body, 'id="send-jobs"') : position(body, 'id="reviews"')]
    device_name = delivered_question.send_jobs.get().claimed_by.name
    assert f"발송 기기 {device_name}" in history and f"기기 {device_name}" in history
    assert "도착 확인: 글 1 · 사진 0 · 파일 0" in history
    assert "기기 수령 → <strong>발송 중</strong>" in history


def test_a_held_answer_shows_the_unsent_draft_with_its_violations_on_top(admin_client):
    question = question_in_status(Question.Status.HELD, answer_mode=Vendor.AnswerMode.REVIEW)
    run = answer_run(
        question, outcome="held", final_text="", awaiting_review=True, outcome_reason="검증을 통과한 문장이 없습니다."
    )
    DraftRound.objects.create(
        run=run,
        number=0,
        draft="납품 단가는 50,000원입니다.",
        violations=[{"kind": "amount", "text": "50,000원", "span": [7, 14], "reason": "근거에 없는 금액: 50,000원"}],
    )
    body = admin_client.get(change_url(question)).content.decode()
    top = body[position(body, 'id="verdict"') : position(body, 'id="actions"')]
    assert "보류된 초안 (보내지 않음)" in top and "검토 대기" in top
    assert '<mark class="violation violation-number"' in top and "금액 1건" in top
    assert position(body, 'id="actions"') < position(body, 'id="question-summary"')


def test_a_question_in_a_blocked_room_reads_its_reason_in_korean(admin_client):
    room = RoomFactory(vendor=None, resolution_status="blocked", resolution_reason="id_typo")
    question = QuestionFactory(
        room=room, message__room=room, vendor=None, status="blocked", outcome_reason="room_blocked:id_typo"
    )
    body = admin_client.get(change_url(question)).content.decode()
    assert "room_blocked" not in body
    assert "방 매칭 차단: 방 이름의 (코드)와 이름이 서로 다른 벤더를 가리킵니다 (코드 오타 의심)" in body


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (
            "room_blocked:id_typo",
            "방 매칭 차단: 방 이름의 (코드)와 이름이 서로 다른 벤더를 가리킵니다 (코드 오타 의심)",
        ),
        ("room_unresolved:ambiguous", "방 벤더 미확정: 방 이름이 여러 벤더에 맞습니다"),
        ("attempts exhausted (3)", "시도 3회를 모두 썼습니다"),
        ("attempts exhausted: TimeoutError", "시도를 모두 썼습니다 (오류 TimeoutError)"),
        ("lease lapsed, attempts exhausted (3)", "작업자가 멈춘 뒤 시도 3회를 모두 썼습니다"),
        (
            "근거가 되는 검색 결과가 없어 안내 문구로 답했습니다.",
            "근거가 되는 검색 결과가 없어 안내 문구로 답했습니다.",
        ),
    ],
)
def test_reason_codes_read_as_korean(code, words):
    assert reason_label(code) == words


def test_the_round_diff_is_by_sentence():
    before = "결제는 월말 마감입니다. 납품 단가는 50,000원입니다.\n감사합니다."
    after = "결제는 월말 마감입니다. 납품 단가는 30,000원입니다.\n감사합니다."
    assert sentences(before) == ["결제는 월말 마감입니다.", "납품 단가는 50,000원입니다.", "감사합니다."]
    html = str(sentence_diff(before, after))
    assert '<del class="diff-del">납품 단가는 50,000원입니다.</del>' in html
    assert '<ins class="diff-ins">납품 단가는 30,000원입니다.</ins>' in html
    assert '<span class="diff-same">결제는 월말 마감입니다.</span>' in html
    assert html.count("<del") == 1 and html.count("<ins") == 1


def test_the_admin_index_counts_what_waits_for_staff(admin_client, delivered_question):
    question_in_status(Question.Status.HELD)
    question_in_status(Question.Status.FAILED)
    Alert.objects.create(kind=Alert.Kind.UPLOAD_GAP, key="pc-1", message="업로드가 멈췄습니다")
    Alert.objects.create(kind=Alert.Kind.DEVICE_SILENT, key="mac-1", message="응답 없음", status="closed")
    body = admin_client.get("/admin/").content.decode()
    assert '<strong id="count-attention">2건</strong>' in body
    assert '<strong id="count-alerts">1건</strong>' in body
    assert '<strong id="count-unsent">0건</strong>' in body  # the delivered question's job arrived
