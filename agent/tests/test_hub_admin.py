"""Staff interfaces of the knowledge hub: the admin (upload, re-ingest, retire, restore, replace, delete, versions,
workspaces) and `ingest_knowledge`."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from agent.knowledge.hub import hub_document_ingest, hub_search
from agent.models import KnowledgeDocument, KnowledgeDocumentVersion, KnowledgeWorkspace
from monitoring.models import AuditEvent

pytestmark = pytest.mark.django_db

POLICY_MD = "# 신규 거래처 등록\n\n거래처 코드는 4자리 숫자이며 상담방 이름 앞 괄호 안의 번호입니다.\n"


def test_a_file_uploaded_in_the_admin_is_ingested_into_its_workspace(hub, admin_client, admin_user):
    """Uploading a Markdown file stores the document, ingests it, titles it from its heading, audits the staff user."""
    upload = SimpleUploadedFile("거래처_등록.md", POLICY_MD.encode("utf-8"), content_type="text/markdown")
    workspace = KnowledgeWorkspace.objects.get(slug="policies")

    response = admin_client.post(
        reverse("admin:agent_knowledgedocument_add"),
        {"workspace": workspace.pk, "title": "", "source": "운영팀", "upload": upload},
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    document = KnowledgeDocument.objects.get()
    assert document.status == KnowledgeDocument.Status.INGESTED
    assert document.title == "신규 거래처 등록" and document.file_name == "거래처_등록.md"
    assert document.source == "운영팀"
    audit = AuditEvent.objects.get(action="knowledge.document.ingest")
    assert (audit.actor_kind, audit.actor_id) == ("staff", str(admin_user.pk))
    assert any("4자리" in item.text for item in hub_search("거래처 코드 자릿수는?", workspaces=["policies"]))


def test_the_admin_refuses_files_that_are_not_text(hub, admin_client):
    """A binary or non-text upload is a form error; nothing is stored."""
    workspace = KnowledgeWorkspace.objects.get(slug="policies")
    for upload in (
        SimpleUploadedFile("표.xlsx", b"PK\x03\x04", content_type="application/octet-stream"),
        SimpleUploadedFile("깨진.txt", b"\xff\xfe\xfa\x80\x81", content_type="text/plain"),
    ):
        response = admin_client.post(
            reverse("admin:agent_knowledgedocument_add"), {"workspace": workspace.pk, "upload": upload}
        )
        assert response.status_code == 200
        assert response.context["adminform"].form.errors["upload"]
    assert KnowledgeDocument.objects.count() == 0


def test_the_reingest_action_writes_the_selected_documents_again(hub, admin_client):
    """The admin action re-ingests through the service: the workspace revision moves once per document."""
    call_command("ingest_knowledge", "policies", str(_write(hub.parent, "a.md", POLICY_MD)))
    document = KnowledgeDocument.objects.get()

    response = admin_client.post(
        reverse("admin:agent_knowledgedocument_changelist"),
        {"action": "reingest", "_selected_action": [document.pk]},
    )

    assert response.status_code == 302
    assert KnowledgeWorkspace.objects.get(slug="policies").revision == 2
    assert AuditEvent.objects.filter(action="knowledge.document.ingest", target_id=str(document.pk)).count() == 2


def test_staff_rename_and_disable_a_workspace_with_an_audit_row(admin_client, admin_user):
    """Title and enabled are staff-editable; the change is audited; the slug cannot be changed."""
    workspace = KnowledgeWorkspace.objects.get(slug="returns")
    response = admin_client.post(
        reverse("admin:agent_knowledgeworkspace_change", args=[workspace.pk]),
        {
            "slug": "renamed",
            "title": "반품 정책",
            "description": workspace.description,
            "routing_keywords": '["반품", "교환"]',
            "enabled": "",
        },
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    workspace.refresh_from_db()
    assert (workspace.slug, workspace.title, workspace.enabled) == ("returns", "반품 정책", False)
    assert workspace.routing_keywords == ["반품", "교환"]
    audit = AuditEvent.objects.get(action="knowledge.workspace.update")
    assert audit.actor_id == str(admin_user.pk) and "title" in audit.data["fields"]


def test_the_workspace_list_shows_document_counts(hub, admin_client):
    """The changelist annotates ingested and failed documents per workspace."""
    call_command("ingest_knowledge", "policies", str(_write(hub.parent, "a.md", POLICY_MD)))
    response = admin_client.get(reverse("admin:agent_knowledgeworkspace_changelist"))
    assert response.status_code == 200
    row = next(obj for obj in response.context["cl"].result_list if obj.slug == "policies")
    assert (row.ingested_count, row.failed_count) == (1, 0)


def test_ingest_knowledge_reports_each_file_and_fails_when_one_fails(hub, tmp_path, capsys):
    """Each file gets a line; a bad file does not stop the others; the command then exits with an error."""
    good = _write(tmp_path, "정산.md", "# 정산\n\n대금은 다음 달 15일에 지급합니다.\n")
    empty = _write(tmp_path, "빈.txt", "   \n")
    sheet = _write(tmp_path, "표.csv", "a,b\n")

    with pytest.raises(CommandError, match="3개 중 2개"):
        call_command("ingest_knowledge", "settlement", str(good), str(empty), str(sheet))

    out, err = capsys.readouterr()
    assert f"{good}: 반영됨" in out
    assert f"{empty}: 실패" in err and f"{sheet}: 실패" in err
    assert list(KnowledgeDocument.objects.values_list("title", flat=True)) == ["정산"]

    call_command("ingest_knowledge", "settlement", str(good))
    assert KnowledgeDocument.objects.count() == 1  # the same text again is the same document


def test_ingest_knowledge_refuses_an_unknown_workspace(tmp_path):
    with pytest.raises(CommandError, match="없는 워크스페이스"):
        call_command("ingest_knowledge", "nope", str(_write(tmp_path, "a.md", "# 제목\n\n본문입니다.\n")))


def _write(directory, name, text):
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


# --- a document's page: retire, restore, replace, delete, re-index, versions ---

WRONG_FEE = "# 반품 회수비\n\n단순 변심 반품의 회수 택배비는 1건당 7,700원이며 협력사가 부담합니다.\n"
RIGHT_FEE = "# 반품 회수비\n\n단순 변심 반품의 회수 택배비는 1건당 4,400원이며 협력사가 부담합니다.\n"
FEE_QUESTION = "반품 회수 택배비는 얼마인가요?"


def _fee_document():
    return hub_document_ingest(workspace="returns", title="반품 회수비", content=WRONG_FEE, actor="test")


def _evidence(question=FEE_QUESTION) -> str:
    return "\n".join(item.text for item in hub_search(question, workspaces=["returns"], limit=20))


def _url(name, document):
    return reverse(f"admin:agent_knowledgedocument_{name}", args=[document.pk])


def test_a_corrected_upload_replaces_the_wrong_document_as_evidence(hub, admin_client, admin_user):
    """The 7,700원 / 4,400원 case: the corrected file replaces the wrong text in the hub, so only 4,400원 ranks as
    evidence; the page shows both versions."""
    document = _fee_document()
    assert "7,700원" in _evidence()
    page = admin_client.get(_url("replace", document))
    assert page.status_code == 200 and "7,700원" in page.content.decode()  # the current text, ready to edit

    upload = SimpleUploadedFile("반품_회수비_수정.md", RIGHT_FEE.encode("utf-8"), content_type="text/markdown")
    response = admin_client.post(_url("replace", document), {"upload": upload, "content": "", "confirmed": "on"})

    assert response.status_code == 302, response.content.decode()[:2000]
    found = _evidence()
    assert "4,400원" in found and "7,700원" not in found
    assert KnowledgeDocument.objects.count() == 1
    page = admin_client.get(_url("change", document)).content.decode()
    assert "본문 교체" in page and "등록" in page and "7,700원" in page  # the old text lives on as a version
    audit = AuditEvent.objects.get(action="knowledge.document.replace")
    assert (audit.actor_kind, audit.actor_id) == ("staff", str(admin_user.pk))


def test_an_edited_text_replaces_too_and_nothing_happens_without_confirmation(hub, admin_client):
    document = _fee_document()

    unconfirmed = admin_client.post(_url("replace", document), {"content": RIGHT_FEE})
    assert unconfirmed.status_code == 200 and unconfirmed.context["form"].errors["confirmed"]
    assert "7,700원" in _evidence()

    response = admin_client.post(_url("replace", document), {"content": RIGHT_FEE, "confirmed": "on"})
    assert response.status_code == 302
    assert "4,400원" in _evidence() and "7,700원" not in _evidence()


def test_retiring_from_the_document_page_asks_first_then_takes_it_out_of_the_evidence(hub, admin_client):
    document = _fee_document()

    confirm = admin_client.get(_url("retire", document))
    assert confirm.status_code == 200 and "예, 보관합니다" in confirm.content.decode()
    assert "7,700원" in _evidence()  # asking changed nothing

    response = admin_client.post(_url("retire", document), {"confirmed": "yes"})
    assert response.status_code == 302
    document.refresh_from_db()
    assert document.status == KnowledgeDocument.Status.RETIRED
    assert "7,700" not in _evidence()
    page = admin_client.get(_url("change", document)).content.decode()
    assert "보관(검색 제외)" in page and 'id="document-restore"' in page

    admin_client.post(_url("restore", document))
    document.refresh_from_db()
    assert document.status == KnowledgeDocument.Status.INGESTED and "7,700원" in _evidence()
    reasons = list(document.versions.order_by("id").values_list("reason", flat=True))
    assert reasons == ["created", "retired", "restored"]


def test_the_retire_action_retires_the_selected_documents_after_confirmation(hub, admin_client):
    document = _fee_document()
    changelist = reverse("admin:agent_knowledgedocument_changelist")

    confirm = admin_client.post(changelist, {"action": "retire_selected", "_selected_action": [document.pk]})
    assert confirm.status_code == 200 and "반품 회수비" in confirm.content.decode()
    assert KnowledgeDocument.objects.get().status == KnowledgeDocument.Status.INGESTED

    response = admin_client.post(
        changelist, {"action": "retire_selected", "_selected_action": [document.pk], "confirmed": "yes"}
    )
    assert response.status_code == 302
    assert KnowledgeDocument.objects.get().status == KnowledgeDocument.Status.RETIRED
    assert "7,700" not in _evidence()


def test_deleting_in_the_admin_removes_the_document_from_the_hub_and_keeps_a_version(hub, admin_client):
    document = _fee_document()
    assert admin_client.get(_url("delete", document)).status_code == 200  # Django's confirmation page

    response = admin_client.post(_url("delete", document), {"post": "yes"})

    assert response.status_code == 302
    assert not KnowledgeDocument.objects.exists()
    assert "7,700" not in _evidence()
    version = KnowledgeDocumentVersion.objects.get(reason="deleted")
    assert "7,700원" in version.content
    versions_page = admin_client.get(reverse("admin:agent_knowledgedocumentversion_changelist"))
    assert versions_page.status_code == 200 and "(삭제됨)" in versions_page.content.decode()


def test_reindex_from_the_document_page(hub, admin_client):
    document = _fee_document()
    revision = KnowledgeWorkspace.objects.get(slug="returns").revision

    response = admin_client.post(_url("reingest", document))

    assert response.status_code == 302
    assert KnowledgeWorkspace.objects.get(slug="returns").revision == revision + 1
    assert "7,700원" in _evidence()
