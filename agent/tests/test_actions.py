"""Irreversible actions through the real pipeline, with an OpenAI-compatible model over real HTTP that calls
`send_document`: nothing is sent inside the tool loop; the request runs only after the answer passed verification
(auto at once, review on approval, held never); what happened is a code-built `[시스템 확인]` line; a completed-
action claim for a queued job is removed; a stored request is checked again when it runs."""

import json

import pytest
from django.core.management import call_command

from agent.llm.base import provider_override
from agent.llm.fake_server import FakeOpenAIServer, FakeResponse, chat_completion_body
from agent.llm.openai_compat import OpenAICompatibleProvider
from agent.models import ActionRequest, AnswerRun
from agent.selectors import questions_needing_attention
from agent.services import action_request_run_by_staff, answer_approve, question_process
from conversations.models import Question
from conversations.tests.factories import QuestionFactory, RoomFactory
from delivery.models import SendJob
from monitoring.services import marker_accepted_write
from vendors.models import VendorRecord
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import VendorRecordFactory

QUOTE_BODY = "A형 박스 견적 조건 안내."
CLAIM = "견적서를 보내드렸습니다."
HONEST = "견적서 발송 요청을 접수했습니다."
INVENTED = "견적 금액은 999,999원입니다."


def _feedback(messages) -> bool:
    last = next((m for m in reversed(messages) if m["role"] == "user"), {})
    return str(last.get("content", "")).startswith("(시스템) 초안 검증")


def sending_model(reference: str, *, draft: str, rewrite: str | None = None):
    """A model that looks the document up, asks to send it, then writes `draft` (and `rewrite` after feedback).
    Judge calls are answered "unsupported"."""

    def respond(body: dict) -> FakeResponse:
        messages = body["messages"]
        if "verdict" in messages[0]["content"]:
            return FakeResponse(200, chat_completion_body(content='{"verdict": "unsupported"}'))
        if body.get("tools") and not any(m["role"] == "tool" for m in messages):
            calls = [
                {"id": "c1", "name": "search_records", "arguments": json.dumps({"query": "견적서"})},
                {"id": "c2", "name": "send_document", "arguments": json.dumps({"reference": reference})},
            ]
            return FakeResponse(200, chat_completion_body(content="", tool_calls=calls))
        text = rewrite if rewrite is not None and _feedback(messages) else draft
        return FakeResponse(200, chat_completion_body(content=text))

    return respond


@pytest.fixture
def quote_question(knowledge_stores):
    vendor = VendorFactory(code="1001", name="대한물산", aliases=[])
    record = VendorRecordFactory(vendor=vendor, kind=VendorRecord.Kind.OTHER, title="견적서", body=QUOTE_BODY)
    question = QuestionFactory(message__room=RoomFactory(vendor=vendor), text="견적서 보내주세요")
    marker_accepted_write(question=question)
    return question, record


def run_over_http(question, responder):
    with FakeOpenAIServer(responder) as server:
        provider = OpenAICompatibleProvider(base_url=server.base_url, model="fake-model", api_key="", max_retries=0)
        return question_process(question.pk, provider=provider), server


def document_jobs():
    return SendJob.objects.filter(idempotency_key__contains=":document:")


def answer_text(question) -> str:
    return SendJob.objects.get(question=question).items.get().text


@pytest.mark.django_db
def test_auto_mode_runs_the_request_after_verification_and_reports_it_from_the_job(quote_question):
    """The claim `보내드렸습니다` (the job is only queued) is sent back, rewritten, and the delivered answer ends with
    the line built from the job: number, document, state."""
    question, record = quote_question
    run, server = run_over_http(question, sending_model(f"record:{record.pk}", draft=CLAIM, rewrite=HONEST))

    assert run.outcome == AnswerRun.Outcome.ANSWERED
    job = document_jobs().get()
    assert job.idempotency_key == f"question:{question.pk}:document:{record.pk}"
    assert job.items.get().text == f"[견적서]\n{QUOTE_BODY}"
    [request] = ActionRequest.objects.all()
    assert (request.status, request.send_job_id) == (ActionRequest.Status.DONE, job.pk)
    text = answer_text(question)
    assert "보내드렸습니다" not in text
    assert text == f"{HONEST}\n\n[시스템 확인] 발송 요청 #J{job.pk:05d} · 견적서 · 상태: 대기"
    # The model was told, in the tool result, that nothing was done yet.
    tool_results = [m["content"] for r in server.requests for m in r["body"]["messages"] if m["role"] == "tool"]
    assert any("아직 처리되지 않았습니다" in content for content in tool_results)


@pytest.mark.django_db
def test_a_stubborn_completion_claim_is_removed_by_code(quote_question):
    question, record = quote_question
    run_over_http(question, sending_model(f"record:{record.pk}", draft=f"{CLAIM} {HONEST}"))
    text = answer_text(question)
    assert CLAIM not in text and text.startswith(HONEST)
    assert "[시스템 확인] 발송 요청 #J" in text


@pytest.mark.django_db
def test_review_mode_never_sends_before_approval_and_approval_runs_the_request(quote_question, admin_user):
    question, record = quote_question
    question.vendor.answer_mode = "review"
    question.vendor.save()
    run, _ = run_over_http(question, sending_model(f"record:{record.pk}", draft=HONEST))

    assert run.awaiting_review and not SendJob.objects.exists()
    assert ActionRequest.objects.get().status == ActionRequest.Status.PENDING

    answer_approve(question=question, actor=admin_user)
    job = document_jobs().get()
    assert ActionRequest.objects.get().status == ActionRequest.Status.DONE
    assert answer_text(question).endswith(f"[시스템 확인] 발송 요청 #J{job.pk:05d} · 견적서 · 상태: 대기")


@pytest.mark.django_db
def test_a_held_answer_sends_nothing_and_staff_may_run_its_request(quote_question, admin_user):
    question, record = quote_question
    run, _ = run_over_http(question, sending_model(f"record:{record.pk}", draft=INVENTED))

    assert run.outcome == AnswerRun.Outcome.HELD
    assert not SendJob.objects.exists()
    request = ActionRequest.objects.get()
    assert request.status == ActionRequest.Status.PENDING
    assert questions_needing_attention().filter(pk=question.pk).exists()

    done = action_request_run_by_staff(request=request, actor=admin_user)
    assert done.status == ActionRequest.Status.DONE and document_jobs().count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("tamper", ["foreign_record", "read_tool", "retired_record"])
def test_approval_checks_the_stored_request_again(quote_question, admin_user, tamper):
    """Staff approval re-validates the stored request: another vendor's record, a read tool or a record gone since
    is refused; the answer goes out saying nothing was done."""
    question, record = quote_question
    question.vendor.answer_mode = "review"
    question.vendor.save()
    run_over_http(question, sending_model(f"record:{record.pk}", draft=HONEST))
    request = ActionRequest.objects.get()
    if tamper == "foreign_record":
        foreign = VendorRecordFactory(vendor=VendorFactory(code="1002", name="가온상사"), title="가온 단가표")
        ActionRequest.objects.filter(pk=request.pk).update(arguments={"reference": f"record:{foreign.pk}"})
    elif tamper == "read_tool":
        ActionRequest.objects.filter(pk=request.pk).update(tool="search_records", arguments={"query": "단가"})
    else:
        VendorRecord.objects.filter(pk=record.pk).delete()

    answer_approve(question=question, actor=admin_user)

    request.refresh_from_db()
    assert request.status == ActionRequest.Status.REFUSED and request.result
    assert not document_jobs().exists()
    assert answer_text(question).endswith("[시스템 확인] 새로 처리되거나 접수된 것은 없음")


@pytest.mark.django_db
def test_a_send_of_another_vendors_record_records_nothing_and_says_so(quote_question):
    question, _ = quote_question
    foreign = VendorRecordFactory(vendor=VendorFactory(code="1002", name="가온상사"), title="가온 단가표")
    run, _ = run_over_http(question, sending_model(f"record:{foreign.pk}", draft=f"{QUOTE_BODY} {HONEST}"))
    assert not ActionRequest.objects.exists() and not document_jobs().exists()
    # Nothing was recorded, so even "요청을 접수했습니다" is untrue and goes.
    assert run.outcome == AnswerRun.Outcome.ANSWERED
    assert answer_text(question) == f"{QUOTE_BODY}\n\n[시스템 확인] 새로 처리되거나 접수된 것은 없음"


@pytest.mark.django_db(transaction=True)
def test_two_attempts_of_one_question_make_one_document_job(quote_question, fail_once):
    """The first attempt fails transiently after its actions ran (the result marker insert); the retry runs them
    again under the same idempotency key: one document job, one answer."""
    question, record = quote_question
    fail_once("monitoring_livenessmarker", "NEW.kind = 'result'")
    responder = sending_model(f"record:{record.pk}", draft=HONEST)
    with FakeOpenAIServer(responder) as server:
        provider = OpenAICompatibleProvider(base_url=server.base_url, model="fake-model", api_key="", max_retries=0)
        with provider_override(provider):
            from agent.tasks import process_question

            assert process_question.delay(question.pk).get() == "answered"
    assert AnswerRun.objects.filter(question=question).count() == 2
    assert document_jobs().count() == 1
    assert SendJob.objects.filter(question=question).count() == 1
    question.refresh_from_db()
    assert question.status == Question.Status.ANSWERED


@pytest.mark.django_db
def test_ask_offers_the_tool_and_prints_what_it_would_record_without_recording(quote_question, settings, capsys):
    question, record = quote_question
    with FakeOpenAIServer(sending_model(f"record:{record.pk}", draft=HONEST)) as server:
        provider = OpenAICompatibleProvider(base_url=server.base_url, model="fake-model", api_key="", max_retries=0)
        with provider_override(provider):
            call_command("ask", "견적서 보내주세요", "--room", question.room.name, "--json")
        offered = [tool["function"]["name"] for tool in server.requests[0]["body"].get("tools", [])]
    result = json.loads(capsys.readouterr().out)
    assert "send_document" in offered
    assert [r["tool"] for r in result["action_requests"]] == ["send_document"]
    assert result["action_requests"][0]["arguments"] == {"reference": f"record:{record.pk}"}
    assert result["system_line"] == "[시스템 확인] 발송 요청 (시험 실행: 기록하지 않음) · 견적서 · 상태: 대기"
    assert not ActionRequest.objects.exists() and not SendJob.objects.exists()


@pytest.mark.django_db
def test_the_question_page_lists_the_requests_and_staff_run_a_pending_one(quote_question, admin_client):
    """The approval screen lists the held answer's action request; **지금 실행** runs it through the service."""
    from django.urls import reverse

    question, record = quote_question
    run_over_http(question, sending_model(f"record:{record.pk}", draft=INVENTED))
    request = ActionRequest.objects.get()

    page = admin_client.get(reverse("admin:conversations_question_change", args=[question.pk])).content.decode()
    assert "동작 요청 (1건)" in page and "지금 실행" in page and "send_document" in page

    response = admin_client.post(reverse("admin:agent_actionrequest_run", args=[request.pk]))
    assert response.status_code == 302
    request.refresh_from_db()
    assert request.status == ActionRequest.Status.DONE and document_jobs().count() == 1
    page = admin_client.get(reverse("admin:conversations_question_change", args=[question.pk])).content.decode()
    assert "지금 실행" not in page and "실행됨" in page
    assert admin_client.get(reverse("admin:agent_actionrequest_changelist")).status_code == 200
