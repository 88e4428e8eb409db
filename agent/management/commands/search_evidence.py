"""`python manage.py search_evidence --vendor CODE "<question>" [--json]` — the evidence the agent would get."""

import json

from django.core.management.base import CommandError

from agent.knowledge.evidence import evidence_for
from config.commands import ProjectCommand
from vendors.selectors import vendor_get_by_code

SOURCE_LABELS = {"record": "거래처 기록", "faq": "FAQ", "hub": "지식 허브"}


class Command(ProjectCommand):
    help = "벤더 한 곳의 질문에 대해 에이전트가 받을 근거(기록·FAQ·지식 허브, 마스킹 적용)를 보여 줍니다."

    def add_arguments(self, parser):
        parser.add_argument("question", help="질문")
        parser.add_argument("--vendor", required=True, help="벤더 코드")
        parser.add_argument("--json", action="store_true", help="JSON으로 출력")

    def handle(self, *args, question: str, vendor: str, **options):
        counterpart = vendor_get_by_code(vendor)
        if counterpart is None:
            raise CommandError(f"없는 벤더 코드입니다: {vendor}")
        result = evidence_for(question, counterpart)
        if options["json"]:
            payload = {"vendor": counterpart.code, "question": question, **result.as_dict()}
            self.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2))
            return
        for number, item in enumerate(result.items, start=1):
            where = f"{SOURCE_LABELS.get(item.source_kind, item.source_kind)} {item.workspace}".strip()
            masked = f", 가림 {item.mask_count}" if item.mask_count else ""
            self.stdout.write(f"[{number}] {where} · {item.reference} · 점수 {item.score:.3f}{masked}")
            self.stdout.write(item.text)
            self.stdout.write("")
        if result.failed_sources:
            self.stderr.write(f"실패한 출처: {', '.join(result.failed_sources)}")
        if not result.items:
            self.stdout.write("근거 없음")
