"""Staff read the admin in Korean: every label on every admin page (lists, filters, change and add forms, the
custom pages) has Hangul in it. Identifiers staff know by their letters (ID, URL, SKU, FAQ, LLM, CSV, …) may stay as
they are; data values (names, codes, texts) are not labels and are not checked."""

import re
from html.parser import HTMLParser

import pytest
from django.contrib import admin
from django.urls import reverse
from django.utils import timezone

from agent.models import (
    AnswerRun,
    DraftRound,
    FaqEntry,
    FaqVersion,
    KnowledgeDocument,
    KnowledgeWorkspace,
    RunEvidence,
    ToolCallRecord,
    TrainingJob,
)
from conversations.models import QuarantinedMessage, Question, Room
from conversations.tests.factories import QuestionFactory, RoomFactory
from delivery.models import SendJob
from delivery.services import send_request_submit, sender_room_set
from delivery.tests.factories import active_device
from monitoring.models import Alert, AuditEvent, LivenessMarker
from vendors.tests.factories_records import ProductFactory, VendorRecordFactory

pytestmark = pytest.mark.django_db

HANGUL = re.compile(r"[\uac00-\ud7a3]")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*")
# Letters staff read as they are.
KNOWN_WORDS = {"ID", "URL", "SKU", "FAQ", "LLM", "CSV", "JSON", "API", "SHA-256", "ms", "Redis", "Qdrant", "xlsx"}
# A record named by its identifier (a username, a batch id, a slug) is data, not a label.
IDENTIFIER = re.compile(r"[a-z0-9][a-z0-9_\-]*")
LABEL_TAGS = {"label", "th", "h1", "h2", "h3", "caption", "legend", "summary", "button"}


class _Labels(HTMLParser):
    """Texts of label-like elements: form labels, column and row headers, headings, captions, filter titles,
    admin action names and submit buttons. A list row's first cell (`<th class="field-…">`) is data."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.labels: list[str] = []
        self._stack: list[list] = []  # [tag, text parts]
        self._in_action_select = False
        self._option: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "select" and attributes.get("name") == "action":
            self._in_action_select = True
        if tag == "option" and self._in_action_select:
            self._option = []
        if tag == "input" and attributes.get("type") == "submit" and attributes.get("value"):
            self.labels.append(attributes["value"])
        if tag in LABEL_TAGS and not (tag == "th" and "field-" in (attributes.get("class") or "")):
            self._stack.append([tag, []])

    def handle_endtag(self, tag):
        if tag == "select":
            self._in_action_select = False
        if tag == "option" and self._option is not None:
            self.labels.append("".join(self._option))
            self._option = None
        if self._stack and self._stack[-1][0] == tag:
            _, parts = self._stack.pop()
            self.labels.append("".join(parts))

    def handle_data(self, data):
        if self._option is not None:
            self._option.append(data)
        for _, parts in self._stack:
            parts.append(data)


def english_labels(html: str) -> list[str]:
    parser = _Labels()
    parser.feed(html)
    bad = []
    for label in parser.labels:
        text = " ".join(label.split())
        if not text or HANGUL.search(text):
            continue
        if all(word in KNOWN_WORDS for word in LATIN_WORD.findall(text)) or IDENTIFIER.fullmatch(text):
            continue
        bad.append(text)
    return sorted(set(bad))


@pytest.fixture
def one_of_everything():
    """At least one row for every model staff open in the admin, so each change page is walked too."""
    question = QuestionFactory(status=Question.Status.ANSWERED)
    device, _ = active_device()
    sender, _ = active_device(role="sender", name="발송 Mac")
    sender_room_set(device=sender, room=question.room, is_active=True, actor="test")
    RoomFactory(vendor=None)
    ProductFactory(vendor=question.vendor)
    VendorRecordFactory(vendor=question.vendor)
    run = AnswerRun.objects.create(
        question=question, provider="scripted", room_kind="vendor", outcome="answered", final_text="답변입니다."
    )
    RunEvidence.objects.create(run=run, position=0, source_kind="record", reference="record:1", text="근거")
    DraftRound.objects.create(run=run, number=0, draft="답변입니다.")
    ToolCallRecord.objects.create(run=run, position=0, name="search_records", allowed=True)
    send_request_submit(
        room=question.room, items=[{"kind": "text", "text": "답변입니다."}], idempotency_key="k-1", actor="agent"
    )
    entry = FaqEntry.objects.create(question="반품은?", answer="7일 안에", source_created_at=timezone.now())
    FaqVersion.objects.create(entry=entry, entry_ref=entry.pk, snapshot={}, reason="created")
    workspace = KnowledgeWorkspace.objects.get_or_create(slug="policies", defaults={"title": "정책"})[0]
    KnowledgeDocument.objects.create(workspace=workspace, title="정책 문서", content="본문", sha256="a" * 64)
    TrainingJob.objects.create(file_name="faq.csv", file_sha256="b" * 64)
    Alert.objects.create(kind=Alert.Kind.UPLOAD_GAP, key="k", message="업로드가 멈췄습니다")
    AuditEvent.objects.create(actor_kind="system", actor_id="test", action="test", target_type="x", target_id="1")
    LivenessMarker.objects.create(question=question, kind="accepted")
    QuarantinedMessage.objects.create(
        batch=question.message.batch, device=device, room=question.room, index=0, reason="invalid", raw={}
    )
    assert SendJob.objects.exists()


def admin_pages():
    """Every admin page with its URL: the index, each app, each model's list, add form and first change form."""
    yield reverse("admin:index")
    apps = {model._meta.app_label for model in admin.site._registry}
    for app_label in sorted(apps):
        yield reverse("admin:app_list", args=[app_label])
    for model, model_admin in admin.site._registry.items():
        info = model._meta.app_label, model._meta.model_name
        yield reverse("admin:{}_{}_changelist".format(*info))
        yield reverse("admin:{}_{}_add".format(*info))
        first = model_admin.get_queryset(_Request()).order_by("pk").first()
        if first is not None:
            yield reverse("admin:{}_{}_change".format(*info), args=[first.pk])
    for name in ("agent_admin:attention", "agent_admin:statistics", "admin_health"):
        yield reverse(name)
    for room in Room.objects.filter(vendor__isnull=True).order_by("pk")[:1]:
        yield reverse("agent_admin:room_assign", args=[room.pk])
    for name in ("admin:agent_faqentry_search", "admin:agent_faqentry_rebuild", "admin:vendors_recordimport_upload"):
        yield reverse(name)


class _Request:
    """What `ModelAdmin.get_queryset` reads from a request to list the rows (none of our admins filter by user)."""

    class user:
        is_superuser = True


def test_every_admin_page_labels_in_korean(admin_client, one_of_everything):
    failures = {}
    for url in admin_pages():
        response = admin_client.get(url)
        if response.status_code in (302, 403, 405):
            continue  # an add page that is not offered (read-only audit records) redirects or refuses
        assert response.status_code == 200, url
        bad = english_labels(response.content.decode())
        if bad:
            failures[url] = bad
    assert failures == {}, "\n".join(f"{url}: {labels}" for url, labels in failures.items())


def test_read_only_lists_say_which_record_to_view_in_korean(admin_client, one_of_everything):
    """Django's catalogue renders "보기위한 1질문 를(을) 선택" on read-only lists; the project catalogue fixes it."""
    html = admin_client.get(reverse("admin:conversations_question_changelist")).content.decode()
    assert "보기위한" not in html
    assert "를(을) 선택" not in html


def test_english_labels_are_caught():
    assert english_labels("<label>created at</label><th>방</th><th class='field-name'>chat-1</th>") == ["created at"]
    assert english_labels("<label>URL</label><h2>FAQ ID</h2>") == []
