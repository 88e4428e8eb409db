"""The 13 knowledge hub workspaces of a distributor, with Korean titles staff can rename and routing keywords."""

from django.db import migrations

# slug, title, description, routing keywords: a question with one of them as (part of) a noun is routed to the
# workspace; "*" means the workspace is asked along with any routed question (agent.knowledge.hub.workspaces_route).
DEFAULT_WORKSPACES = [
    (
        "policies",
        "거래 정책",
        "거래 조건 일반, 신규 거래처 등록, 협력사 준수 사항과 운영 원칙",
        ["정책", "규정", "거래 조건", "거래조건", "거래처 등록", "신규 거래", "준수", "윤리", "협력사"],
    ),
    (
        "logistics",
        "물류·배송",
        "물류센터 입고·출고, 납품 시간, 배송 방식과 운송 조건",
        ["물류", "배송", "입고", "출고", "납품", "택배", "화물", "팔레트", "운송", "배차", "창고"],
    ),
    (
        "returns",
        "반품·교환",
        "반품과 교환의 조건, 기한, 회수 절차와 비용 부담",
        ["반품", "교환", "회수", "환불", "반송"],
    ),
    (
        "settlement",
        "정산",
        "대금 정산 주기, 지급일, 세금계산서 발행과 수수료",
        ["정산", "대금", "지급", "입금", "세금계산서", "계산서", "수수료", "마감", "송금", "상계", "계좌"],
    ),
    (
        "promotions",
        "프로모션",
        "판촉 행사 운영, 할인 분담, 쿠폰과 기획전 참여 조건",
        ["프로모션", "행사", "할인", "판촉", "이벤트", "쿠폰", "기획전", "특가", "사은품", "증정"],
    ),
    (
        "contracts",
        "계약",
        "거래 계약의 체결·갱신·해지, 특약과 전자계약 절차",
        ["계약", "갱신", "해지", "약정", "특약", "서명"],
    ),
    (
        "products",
        "상품 정보",
        "상품 등록 기준, 규격·표시 사항, 신상품과 단종 처리",
        ["상품", "제품", "규격", "성분", "유통기한", "소비기한", "원산지", "상세페이지", "바코드", "신상품", "단종"],
    ),
    (
        "ordering",
        "발주·주문",
        "발주 주기와 마감 시간, 최소 주문 수량, 긴급 발주와 결품 대응",
        ["발주", "주문", "수주", "리드타임", "최소주문", "최소 주문", "moq", "결품"],
    ),
    (
        "pricing",
        "가격·단가",
        "공급 단가 결정과 변경 절차, 가격 인상·인하 요청",
        ["단가", "가격", "공급가", "원가", "인상", "인하", "견적", "매입가"],
    ),
    (
        "quality",
        "품질 관리",
        "입고 검사, 품질 기준, 위생·인증 서류와 리콜 절차",
        ["품질", "검사", "불량", "이물", "위생", "인증", "haccp", "리콜", "시험성적서"],
    ),
    (
        "claims",
        "클레임·분쟁",
        "클레임 접수와 처리 기한, 배상 기준, 분쟁 조정",
        ["클레임", "분쟁", "배상", "보상", "손해", "파손", "이의", "페널티", "패널티"],
    ),
    (
        "systems",
        "시스템·EDI",
        "협력사 포털과 EDI 사용법, 계정·권한, 전산 오류 문의",
        ["시스템", "edi", "포털", "로그인", "비밀번호", "계정", "전산", "연동", "오류", "파트너센터"],
    ),
    (
        "notices",
        "공지사항",
        "휴무·연휴 운영 일정, 제도 변경과 전사 공지",
        # "*": asked whenever a question is routed, since a notice may change the rule of any other workspace.
        ["*", "공지", "휴무", "연휴", "명절", "변경", "공문"],
    ),
]


def workspaces_create(apps, schema_editor):
    KnowledgeWorkspace = apps.get_model("agent", "KnowledgeWorkspace")
    for slug, title, description, routing_keywords in DEFAULT_WORKSPACES:
        KnowledgeWorkspace.objects.get_or_create(
            slug=slug,
            defaults={"title": title, "description": description, "routing_keywords": routing_keywords},
        )


def workspaces_delete(apps, schema_editor):
    KnowledgeWorkspace = apps.get_model("agent", "KnowledgeWorkspace")
    slugs = [slug for slug, *_ in DEFAULT_WORKSPACES]
    KnowledgeWorkspace.objects.filter(slug__in=slugs, documents__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("agent", "0002_knowledge_hub"),
    ]

    operations = [
        migrations.RunPython(workspaces_create, workspaces_delete),
    ]
