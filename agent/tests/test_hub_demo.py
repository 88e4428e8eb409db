"""The demo knowledge: every workspace gets documents, loading twice changes nothing, and retrieval quality on a
labelled set of questions stays above a floor."""

import csv
import json
from pathlib import Path

import pytest
from django.conf import settings

from agent.knowledge.hub import DEMO_KNOWLEDGE_DIR, _enabled_workspaces, hub_demo_load, hub_search, workspaces_route
from agent.knowledge.hub_runtime import runtime_reset
from agent.models import KnowledgeDocument, KnowledgeWorkspace
from vendors.models import Brand, Vendor

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

DEMO_DATA = Path(settings.BASE_DIR) / "demo" / "data"

# (question, workspace holding the answer, text the answer contains)
LABELLED_QUESTIONS = [
    ("반품 회수 비용은 누가 부담하나요?", "returns", "25,000원"),
    ("정산 대금 지급일이 언제예요?", "settlement", "15일에 지급"),
    ("세금계산서 언제까지 발행해야 하나요?", "settlement", "5일까지"),
    ("평택 물류센터 입고 시간 알려주세요", "logistics", "오전 6시"),
    ("팔레트 높이 기준이 어떻게 되나요", "logistics", "1.5m"),
    ("행사 할인 분담 비율은?", "promotions", "50%씩"),
    ("전단 광고비 얼마예요", "promotions", "30만 원"),
    ("고운들 절임배추 행사 가격", "promotions", "29,900원"),
    ("계약 자동 연장 되나요?", "contracts", "자동 연장"),
    ("소비기한 입고 기준", "products", "70%"),
    ("발주 마감 시간이 몇 시예요?", "ordering", "오후 2시"),
    ("결품 페널티 면제 조건", "ordering", "결품 예고"),
    ("단가 변경 요청하면 언제 적용되나요", "pricing", "14일"),
    ("HACCP 인증서 갱신 기한", "quality", "30일 전"),
    ("리콜 시 점포 재고 회수 기한", "quality", "48시간"),
    ("클레임 1차 답변 기한 넘기면 페널티가 있나요", "claims", "5만 원"),
    ("파트너센터 비밀번호 잠김 해제", "systems", "잠깁니다"),
    ("추석 연휴 물류센터 휴무 일정", "notices", "9월 24일"),
    ("김해 센터 반품 회수 요일이 바뀌었나요", "notices", "금요일"),
    ("거래처 코드는 어떻게 확인하나요", "policies", "4자리"),
    ("조기 지급 받을 수 있나요", "settlement", "5영업일"),
    ("금빛수산 고등어구이 회수 건", "returns", "1,200개"),
    ("참술식품은 어느 회사가 납품하나요", "products", "새한물산"),
    ("한빚식품은 무슨 브랜드예요", "products", "떡·한과"),
]
# When this was written the local extractor and embedder put the answer first for 21 of the 24 questions and in
# the top 3 for 23 (the miss: "참술식품 … 납품" is routed to logistics by `납품`, the answer is in products).
# The floor allows one more miss, so a tuning change that costs more than that fails here.
HIT_AT_3_FLOOR = 22


# Questions no routing keyword narrows (checked below): they are asked of the workspaces nearest in content
# (KNOWLEDGE_HUB_UNROUTED_WORKSPACES), so these test that choice as much as the ranking.
UNROUTED_QUESTIONS = [
    ("PB 제조 위탁이면 며칠 안에 돈을 받나요", "contracts", "60일"),
    ("점포 재고는 몇 시간 안에 거둬들이나요", "quality", "48시간"),
    ("사업자등록증 말고 어떤 서류를 내야 하나요", "policies", "통장 사본"),
    ("차량 온도 기록지가 없으면 어떻게 되나요", "quality", "보류"),
    ("알림톡은 언제 오나요", "systems", "알림톡"),
    ("구두 약속도 인정되나요", "policies", "구두 약속"),
    ("헬프데스크 번호 알려주세요", "systems", "1588-0000"),
    ("위로금은 얼마예요", "claims", "1만 원"),
    ("전단 광고비 얼마예요", "promotions", "30만 원"),
    ("거래처 코드는 어떻게 확인하나요", "policies", "4자리"),
    ("한빚식품은 무슨 브랜드예요", "products", "떡·한과"),
]
# Written with 4 nearest workspaces: 10 of 11, the same as asking all 13 (the miss, "위로금은 얼마예요", finds nothing
# either way); with 2 a different question missed. The floor allows one more miss.
UNROUTED_HIT_AT_3_FLOOR = 9


@pytest.fixture
def demo_hub(tmp_path, settings):
    settings.LIGHTRAG_WORKING_DIR = str(tmp_path / "lightrag")
    runtime_reset()
    with (DEMO_DATA / "vendors.csv").open(encoding="utf-8") as rows:
        for row in csv.DictReader(rows):
            aliases = [alias for alias in row["aliases"].split("|") if alias]
            Vendor.objects.create(code=row["code"], name=row["name"], aliases=aliases)
    for line in (DEMO_DATA / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") == "brand":
            Brand.objects.create(name=record["brand"], aliases=record.get("aliases", []))
    loaded = hub_demo_load()
    yield loaded
    runtime_reset()


def test_every_workspace_gets_one_to_three_demo_documents(demo_hub):
    """All 13 workspaces are filled, every document ingests, and loading again adds nothing."""
    expected = {path.name: len(list(path.glob("*.md"))) for path in DEMO_KNOWLEDGE_DIR.iterdir() if path.is_dir()}
    assert set(expected) == set(KnowledgeWorkspace.objects.values_list("slug", flat=True))
    assert all(1 <= count <= 3 for count in expected.values())
    assert demo_hub == expected
    assert not KnowledgeDocument.objects.exclude(status=KnowledgeDocument.Status.INGESTED).exists()

    revisions = dict(KnowledgeWorkspace.objects.values_list("slug", "revision"))
    assert hub_demo_load() == expected
    assert dict(KnowledgeWorkspace.objects.values_list("slug", "revision")) == revisions


def test_shared_demo_documents_name_several_vendors_and_near_identical_brands(demo_hub):
    """Masking and brand verification have something to show: shared text names other vendors and brands that
    differ by one character."""
    texts = [document.content for document in KnowledgeDocument.objects.all()]
    vendor_names = list(Vendor.objects.values_list("name", flat=True))
    assert any(sum(name in text for name in vendor_names) >= 3 for text in texts)
    corpus = "\n".join(texts)
    for pair in (("참솔식품", "참술식품"), ("고운들", "고운뜰"), ("해담제과", "해닮제과"), ("한빛식품", "한빚식품")):
        assert all(brand in corpus for brand in pair)


def test_demo_retrieval_finds_the_answer_in_the_top_three(demo_hub):
    """Routed hub search over the demo knowledge: the passage holding the answer is among the first 3 items for
    at least HIT_AT_3_FLOOR of the labelled questions, and it comes from the right workspace."""
    hits = 0
    misses = []
    for question, workspace, answer in LABELLED_QUESTIONS:
        items = hub_search(question, limit=3)
        if any(answer in item.text and item.workspace == workspace for item in items):
            hits += 1
        else:
            misses.append((question, [item.text[:60] for item in items]))
    assert hits >= HIT_AT_3_FLOOR, misses


def test_questions_routing_cannot_narrow_find_their_answer_in_the_nearest_workspaces(demo_hub):
    """A question with no routing keyword is asked of the few workspaces nearest to it in content, not of all 13;
    the answer's workspace must be among them and the passage in the top 3."""
    rows = _enabled_workspaces()
    hits, misses = 0, []
    for question, workspace, answer in UNROUTED_QUESTIONS:
        assert len(workspaces_route(question, rows)) == len(rows), question
        items = hub_search(question, limit=3)
        if any(answer in item.text and item.workspace == workspace for item in items):
            hits += 1
        else:
            misses.append((question, [(item.workspace, item.text[:60]) for item in items]))
    assert hits >= UNROUTED_HIT_AT_3_FLOOR, misses
