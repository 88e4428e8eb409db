"""`evidence_for`: records, FAQ and hub in one ordered, masked, de-duplicated list with a budget per source."""

import json

import pytest
from django.core.management import CommandError, call_command

from agent.knowledge import evidence
from agent.knowledge.evidence import SOURCE_ORDER, EvidenceBudget, evidence_for
from agent.knowledge.faq_index import faq_index_reset
from agent.knowledge.faq_services import faq_entry_create
from agent.knowledge.hub import hub_document_ingest
from agent.knowledge.hub_runtime import runtime_reset
from agent.knowledge.masking import MASK
from agent.knowledge.types import EvidenceItem
from vendors.models import VendorRecord
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import VendorRecordFactory

pytestmark = pytest.mark.django_db

RETURNS_DOC = """# 반품 처리 기준

## 반품 신청
반품은 상품 수령 후 7일 이내에 협력사 포털에서 신청해야 합니다.
세림식품 납품분은 검수 완료 후 3일 이내에만 반품을 받습니다.

## 반품 비용
단순 변심 반품의 회수 택배비는 1건당 4,000원이며 협력사가 부담합니다.
"""


@pytest.fixture
def vendors():
    return (
        VendorFactory(code="1001", name="대한물산"),
        VendorFactory(code="1002", name="가온상사", aliases=["가온"]),
        VendorFactory(code="1007", name="세림식품"),
    )


@pytest.fixture
def knowledge(settings, tmp_path, django_capture_on_commit_callbacks, vendors):
    """Real sources on the embedded default: a Qdrant local-mode FAQ with the local embedding and reranker, and a
    LightRAG working dir with the local graph extractor, each in this test's temporary directory."""
    settings.QDRANT_URL = ""
    settings.QDRANT_PATH = str(tmp_path / "qdrant")
    settings.LIGHTRAG_WORKING_DIR = str(tmp_path / "lightrag")
    faq_index_reset()
    runtime_reset()
    with django_capture_on_commit_callbacks(execute=True):
        faq_entry_create(
            question="반품은 어떻게 신청하나요?",
            answer="상품 수령 후 7일 이내에 협력사 포털에서 신청합니다. "
            "가온상사처럼 합배송하는 거래처는 담당자에게 먼저 알려 주세요.",
            category="반품",
        )
        faq_entry_create(
            question="세금계산서는 언제 발행하나요?", answer="매월 말일 기준으로 발행합니다.", category="정산"
        )
    hub_document_ingest(workspace="returns", title="반품 처리 기준", content=RETURNS_DOC, source="운영팀", actor="test")
    yield
    faq_index_reset()
    runtime_reset()


def test_three_sources_ordered_by_source_then_score_with_other_vendors_masked(vendors, knowledge):
    """Records, then FAQ, then hub, each by score; another vendor's name in any of them is `[다른 벤더]`, counted
    per item; the counterpart's own name stays."""
    daehan, _, _ = vendors
    record = VendorRecordFactory(
        vendor=daehan,
        kind=VendorRecord.Kind.NOTICE,
        title="반품 신청 안내",
        body="대한물산 반품은 협력사 포털에서 신청합니다. 가온 물량과 합배송된 상품은 따로 신청해 주세요.",
    )

    result = evidence_for("반품은 어떻게 신청하나요?", daehan)

    assert result.failed_sources == []
    kinds = [item.source_kind for item in result.items]
    assert {"record", "faq", "hub"} <= set(kinds)
    assert kinds == sorted(kinds, key=SOURCE_ORDER.index)
    for kind in SOURCE_ORDER:
        scores = [item.score for item in result.items if item.source_kind == kind]
        assert scores == sorted(scores, reverse=True)
    first = result.items[0]
    assert first.reference == f"record:{record.pk}"
    assert (first.mask_count, MASK in first.text, "대한물산 반품" in first.text) == (1, True, True)
    faq = next(item for item in result.items if item.source_kind == "faq")
    assert faq.title == "반품은 어떻게 신청하나요?"
    assert "가온상사" not in faq.text and f"{MASK}처럼" in faq.text and faq.mask_count == 1
    hub_items = [item for item in result.items if item.source_kind == "hub"]
    assert all(item.workspace == "returns" for item in hub_items)
    assert any(MASK in item.text for item in hub_items)
    for item in result.items:
        assert not any(name in item.as_dict().__repr__() for name in ("가온상사", "세림식품"))
        assert item.mask_count == item.text.count(MASK) + item.title.count(MASK) + repr(item.extra).count(MASK)
    assert result.mask_count == sum(item.mask_count for item in result.items) >= 3
    assert set(result.timings_ms) == {"record", "faq", "hub", "mask"}


def test_budget_caps_each_source_and_zero_leaves_a_source_out(vendors, knowledge):
    """At most the budget per source; a zero budget does not ask that source at all."""
    daehan, _, _ = vendors
    for region in ["수도권", "충청", "영남", "호남"]:
        VendorRecordFactory(vendor=daehan, title=f"{region} 반품 신청 기준", body=f"{region} 반품은 포털에서 신청")

    result = evidence_for("반품은 어떻게 신청하나요?", daehan, budget=EvidenceBudget(records=2, hub=0, faq=1))

    counts = {kind: sum(item.source_kind == kind for item in result.items) for kind in SOURCE_ORDER}
    assert counts == {"record": 2, "faq": 1, "hub": 0}
    assert "hub" not in result.timings_ms


def test_another_vendors_records_never_reach_the_evidence(vendors, knowledge):
    """The record source is the counterpart's: asking by another vendor's record title finds only shared sources."""
    daehan, gaon, _ = vendors
    VendorRecordFactory(vendor=gaon, title="가온 반품 특약", body="가온상사 전용 반품 조건")

    result = evidence_for("가온 반품 특약은 어떻게 신청하나요?", daehan)

    assert not [item for item in result.items if item.source_kind == "record"]
    assert result.items  # FAQ and hub still answer


# --- behaviour of the combination, with the sources replaced by fixed lists --------------------------------------


def item(kind: str, reference: str, text: str, score: float) -> EvidenceItem:
    return EvidenceItem(source_kind=kind, reference=reference, text=text, score=score)


@pytest.fixture
def sources(monkeypatch):
    """Replace the three searches with fixed answers; a source given an exception raises it when finished."""
    answers: dict = {"record": [], "faq": [], "hub": []}
    asked: list[tuple[str, int]] = []
    steps: list[str] = []

    def start_for(kind):
        def start(question, counterpart, limit, on):
            asked.append((kind, limit))
            steps.append(f"start {kind}")

            def finish():
                steps.append(f"finish {kind}")
                if isinstance(answers[kind], Exception):
                    raise answers[kind]
                return list(answers[kind])

            return finish

        return start

    for kind in SOURCE_ORDER:
        monkeypatch.setitem(evidence._STARTS, kind, start_for(kind))
    answers["asked"] = asked
    answers["steps"] = steps
    return answers


def test_the_hub_is_started_before_and_awaited_after_the_records_and_the_faq(vendors, sources):
    """The hub searches on its own loop thread: it is started first and waited for last, so its search overlaps
    the records and FAQ searches made in the caller's thread; each source's time is what it held the caller."""
    result = evidence_for("질문", vendors[0])

    assert sources["steps"] == [
        "start hub",
        "start record",
        "start faq",
        "finish record",
        "finish faq",
        "finish hub",
    ]
    assert set(result.timings_ms) == {"record", "faq", "hub", "mask"}


def test_order_is_by_source_priority_never_by_score_across_sources(vendors, sources):
    """A high hub score does not move it above FAQ or records: scores of different sources are not comparable."""
    sources["record"] = [item("record", "record:1", "계약 단가 12,500원", 0.2)]
    sources["faq"] = [item("faq", "faq:1", "반품 기한 7일", 0.5), item("faq", "faq:2", "배송 마감 오후 2시", 0.9)]
    sources["hub"] = [item("hub", "hub:returns:c1", "회수 택배비 4,000원", 0.99)]

    result = evidence_for("질문", vendors[0])

    assert [i.reference for i in result.items] == ["record:1", "faq:2", "faq:1", "hub:returns:c1"]


def test_a_source_returning_more_than_its_budget_is_cut_to_its_best(vendors, sources):
    """The budget holds even if a source ignores the limit it was given: its best-scored items are kept."""
    sources["faq"] = [item("faq", f"faq:{n}", f"답변 {n}번", n / 10) for n in range(10)]

    result = evidence_for("질문", vendors[0], budget=EvidenceBudget(records=5, hub=6, faq=3))

    assert [i.reference for i in result.items] == ["faq:9", "faq:8", "faq:7"]
    assert ("faq", 3) in sources["asked"]


def test_duplicates_by_reference_or_near_identical_text_are_dropped_keeping_the_first(vendors, sources):
    """Same reference, or the same text up to spacing, punctuation and case, is one item (the higher-priority
    copy stays); texts that differ in a number are different evidence and both stay."""
    sources["faq"] = [item("faq", "faq:1", "반품은 수령 후 7일 이내에 신청합니다.", 0.9)]
    sources["hub"] = [
        item("hub", "hub:returns:c1", "반품은  수령 후 7일 이내에 신청합니다", 0.8),
        item("hub", "hub:returns:c1", "같은 조각", 0.7),
        item("hub", "hub:returns:c2", "반품은 수령 후 3일 이내에 신청합니다.", 0.6),
        item("hub", "hub:returns:c3", "반품 비용은 4,000원입니다.", 0.5),
        item("hub", "hub:returns:c4", "반품 비용은 4000원입니다!", 0.4),
    ]

    result = evidence_for("질문", vendors[0])

    assert [i.reference for i in result.items] == ["faq:1", "hub:returns:c2", "hub:returns:c3"]


def test_a_failing_source_is_named_and_the_others_still_answer(vendors, sources, caplog):
    """A source that raises is logged and listed in failed_sources; the remaining evidence is returned."""
    sources["record"] = [item("record", "record:1", "계약 단가 12,500원", 1.0)]
    sources["hub"] = RuntimeError("hub down")
    sources["faq"] = [item("faq", "faq:1", "반품 기한 7일", 0.5)]

    result = evidence_for("질문", vendors[0])

    assert result.failed_sources == ["hub"]
    assert [i.reference for i in result.items] == ["record:1", "faq:1"]
    assert "Evidence source hub failed" in caplog.text


def test_a_masking_failure_is_never_swallowed(vendors, sources, monkeypatch):
    """Unmasked evidence must never be returned: if masking fails, evidence_for fails."""
    sources["faq"] = [item("faq", "faq:1", "가온상사 반품 기한 7일", 0.5)]

    def broken(items, *, counterpart):
        raise RuntimeError("masker unavailable")

    monkeypatch.setattr(evidence, "mask_evidence", broken)

    with pytest.raises(RuntimeError, match="masker unavailable"):
        evidence_for("질문", vendors[0])


def test_budget_defaults_are_read_from_settings_at_call_time(vendors, sources, settings):
    """EVIDENCE_BUDGET_* are read when evidence_for runs, not when the module was imported."""
    settings.EVIDENCE_BUDGET_RECORDS, settings.EVIDENCE_BUDGET_FAQ, settings.EVIDENCE_BUDGET_HUB = 1, 2, 0

    evidence_for("질문", vendors[0])

    assert sources["asked"] == [("record", 1), ("faq", 2)]


def test_search_evidence_command_prints_the_items_as_json(vendors, sources, capsys):
    """`search_evidence --vendor CODE "<question>" --json` prints the masked items and the failed sources."""
    sources["faq"] = [item("faq", "faq:1", "가온상사 반품 기한 7일", 0.5)]
    sources["hub"] = RuntimeError("hub down")

    call_command("search_evidence", "반품 기한", vendor="1001", json=True)

    payload = json.loads(capsys.readouterr().out)
    assert payload["vendor"] == "1001" and payload["question"] == "반품 기한"
    assert payload["failed_sources"] == ["hub"]
    assert payload["mask_count"] == 1
    assert payload["items"][0]["text"] == f"{MASK} 반품 기한 7일"


def test_search_evidence_command_reads_as_text_and_rejects_unknown_vendors(vendors, sources, capsys):
    """Without --json the items print one block each; an unknown vendor code is an error."""
    sources["record"] = [item("record", "record:3", "계약 단가 12,500원", 1.0)]

    call_command("search_evidence", "단가", vendor="1001")

    assert "record:3" in capsys.readouterr().out
    with pytest.raises(CommandError, match="없는 벤더 코드"):
        call_command("search_evidence", "단가", vendor="9999")
