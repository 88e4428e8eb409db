"""`python manage.py ingest_knowledge WORKSPACE FILE...` — text and Markdown files into one hub workspace."""

from pathlib import Path

from django.core.management.base import CommandError

from agent.knowledge.hub import KnowledgeHubError, document_text_decode, document_title, hub_document_ingest
from agent.models import KnowledgeDocument, KnowledgeWorkspace
from config.commands import ProjectCommand

SUPPORTED_SUFFIXES = {".txt", ".md", ".markdown"}


class Command(ProjectCommand):
    help = "텍스트·마크다운 파일을 지식 허브 워크스페이스에 반영합니다. 같은 내용은 한 번만 저장됩니다."

    def add_arguments(self, parser):
        parser.add_argument("workspace", help="워크스페이스 슬러그 (예: returns)")
        parser.add_argument("files", nargs="+", help=".txt / .md 파일")
        parser.add_argument("--source", default="file", help="문서 출처로 기록할 값 (기본: file)")

    def handle(self, *args, workspace: str, files: list[str], source: str, **options):
        if not KnowledgeWorkspace.objects.filter(slug=workspace).exists():
            slugs = ", ".join(KnowledgeWorkspace.objects.values_list("slug", flat=True))
            raise CommandError(f"없는 워크스페이스입니다: {workspace} (있는 것: {slugs})")
        failed = 0
        for name in files:
            path = Path(name)
            try:
                if path.suffix.lower() not in SUPPORTED_SUFFIXES:
                    raise KnowledgeHubError(f"지원하지 않는 파일 형식입니다: {path.suffix or '(없음)'}")
                content = document_text_decode(path.read_bytes())
                document = hub_document_ingest(
                    workspace=workspace,
                    title=document_title(content, path.stem),
                    content=content,
                    source=source,
                    file_name=path.name,
                    actor="command:ingest_knowledge",
                )
            except (OSError, KnowledgeHubError) as error:
                failed += 1
                self.stderr.write(f"{name}: 실패 — {error}")
                continue
            if document.status != KnowledgeDocument.Status.INGESTED:
                failed += 1
                self.stderr.write(f"{name}: 실패 — 문서 #{document.pk}: {document.error}")
                continue
            self.stdout.write(
                f"{name}: 반영됨 — 문서 #{document.pk}, 청크 {document.chunk_count}, "
                f"엔터티 {document.entity_count}, 관계 {document.relation_count}"
            )
        if failed:
            raise CommandError(f"{len(files)}개 중 {failed}개 파일을 반영하지 못했습니다.")
