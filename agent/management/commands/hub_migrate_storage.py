"""`python manage.py hub_migrate_storage --to postgres` — the hub's file workspaces into PostgreSQL."""

from django.core.management.base import CommandError

from agent.knowledge.hub import KnowledgeHubError, hub_storage_migrate
from agent.knowledge.hub_runtime import HubError
from config.commands import ProjectCommand

STAGE_LABELS = {
    "full_docs": "문서 원문",
    "text_chunks": "청크",
    "full_entities": "문서별 엔터티",
    "full_relations": "문서별 관계",
    "entity_chunks": "엔터티 청크",
    "relation_chunks": "관계 청크",
    "llm_response_cache": "LLM 캐시",
    "doc_status": "문서 상태",
    "graph": "그래프 노드·엣지",
    "chunks_vdb": "청크 벡터",
    "entities_vdb": "엔터티 벡터",
    "relationships_vdb": "관계 벡터",
}


class Command(ProjectCommand):
    help = (
        "지식 허브의 파일 저장소(LIGHTRAG_WORKING_DIR)를 PostgreSQL 저장소로 복사합니다. 그래프를 다시 추출하지 "
        "않으며, 여러 번 실행해도 결과는 같습니다. KNOWLEDGE_HUB_STORAGE=postgres 와 DATABASE_URL 을 설정한 뒤 "
        "실행하세요."
    )

    def add_arguments(self, parser):
        parser.add_argument("--to", required=True, choices=["postgres"], help="옮길 저장소 (postgres)")
        parser.add_argument(
            "--from-dir", default=None, help="파일 저장소 폴더 (기본: LIGHTRAG_WORKING_DIR, 워크스페이스별 하위 폴더)"
        )
        parser.add_argument("--workspace", action="append", default=None, help="이 워크스페이스만 (여러 번 지정 가능)")

    def handle(self, *args, from_dir=None, workspace=None, **options):
        def progress(slug, stage, count):
            self.stdout.write(f"  {slug}: {STAGE_LABELS.get(stage, stage)} {count:,}건")

        try:
            copied = hub_storage_migrate(
                source_dir=from_dir, workspaces=workspace, actor="command:hub_migrate_storage", progress=progress
            )
        except (KnowledgeHubError, HubError) as error:
            raise CommandError(str(error)) from error
        if not copied:
            self.stdout.write("옮길 워크스페이스가 없습니다 (파일 저장소가 비어 있습니다).")
            return
        for slug, counts in copied.items():
            self.stdout.write(
                f"{slug}: 레코드 {counts.records:,} (청크 {counts.chunks:,}), 노드 {counts.nodes:,}, "
                f"엣지 {counts.edges:,}, 벡터 {counts.vectors:,}"
            )
        self.stdout.write(self.style.SUCCESS(f"워크스페이스 {len(copied)}개를 PostgreSQL로 옮겼습니다."))
