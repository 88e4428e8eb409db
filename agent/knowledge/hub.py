"""The LightRAG knowledge hub: documents into workspaces, evidence out of them, and its health.

Writes (`hub_document_ingest`, `hub_document_reingest`, `hub_document_replace`, `hub_document_retire`,
`hub_document_restore`, `hub_document_delete`, `hub_demo_load`) lock the workspace row for the whole LightRAG
write, so writers of one workspace are serialised across processes and hosts, and bump its `revision` in the same
transaction; readers (`hub_search`) compare the revisions they loaded with the database and reload a workspace
that changed (see `hub_runtime`). Every change of a document's text or state leaves a `KnowledgeDocumentVersion`.

Retrieval never calls an LLM: the question's keywords are extracted locally (`korean_terms.query_keywords`) and
given to LightRAG, which returns structured chunks, entities and relations; each becomes an `EvidenceItem`
scored by the cosine similarity of its stored vector to the question.
"""

import contextlib
import datetime
import hashlib
import logging
import os
import re
import shutil
import threading
import time
from collections import namedtuple
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from agent.knowledge import hub_graph, hub_migrate
from agent.knowledge.embeddings import text_bigrams
from agent.knowledge.hub_extract import document_chunks, graph_draft_build
from agent.knowledge.hub_runtime import HubError, lightrag_modules, llm_configured, runtime_get, runtime_problems
from agent.knowledge.hub_storage import POSTGRES, HubStorageError, storage_kind, storage_label
from agent.knowledge.hub_terms import document_terms_count, domain_terms_get
from agent.knowledge.korean_terms import (
    BRAND,
    ORGANIZATION,
    ProperNounLexicon,
    query_keywords,
    terms_extract,
    text_normalise,
)
from agent.knowledge.passages import Unit, chunk_units, unit_from_line
from agent.knowledge.periods import Period, holiday_period, in_force, period_in, question_window
from agent.knowledge.synonyms import spoken_forms_written
from agent.knowledge.types import EvidenceItem
from agent.models import KnowledgeDocument, KnowledgeDocumentVersion, KnowledgeTermCount, KnowledgeWorkspace
from monitoring.services import audit_record
from vendors.selectors import brand_name_rows, brand_table_revision, vendor_name_rows, vendor_table_revision

logger = logging.getLogger(__name__)

DEMO_KNOWLEDGE_DIR = Path(settings.BASE_DIR) / "demo" / "data" / "knowledge"
LEXICON_RECHECK_SECONDS = 60.0
_DOC_FILE_PATH = re.compile(r"^doc-(\d+):")


class KnowledgeHubError(ValueError):
    """A request the hub refuses as given: an unknown workspace, an empty or oversized text, a changed slug."""


# --- proper nouns -------------------------------------------------------------------------------------------------

_lexicon_lock = threading.Lock()
_lexicon_state = {"signature": None, "lexicon": None, "checked_at": 0.0}


def lexicon_get(*, max_age_seconds: float = LEXICON_RECHECK_SECONDS) -> ProperNounLexicon:
    """Vendor and brand names (with aliases) as a lexicon, rebuilt when either table changed.

    Whether they changed is checked at most every `max_age_seconds` (ingestion passes 0).
    """
    now = time.monotonic()
    if _lexicon_state["lexicon"] is not None and now - _lexicon_state["checked_at"] < max_age_seconds:
        return _lexicon_state["lexicon"]
    signature = (vendor_table_revision(), brand_table_revision())
    with _lexicon_lock:
        if _lexicon_state["signature"] != signature:
            entries = []
            for rows, kind in ((vendor_name_rows(), ORGANIZATION), (brand_name_rows(), BRAND)):
                for _, name, aliases in rows:
                    entries += [(written, name, kind) for written in [name, *(aliases or [])]]
            _lexicon_state["lexicon"] = ProperNounLexicon(entries)
            _lexicon_state["signature"] = signature
        _lexicon_state["checked_at"] = now
        return _lexicon_state["lexicon"]


# --- writes -----------------------------------------------------------------------------------------------------


def _actor_fields(actor) -> tuple[str, str | None]:
    """A staff user, or a label for a command or loader (`"command:ingest_knowledge"`), or None for the system."""
    if actor is None:
        return "system", None
    if getattr(actor, "pk", None) is not None:
        return "staff", actor.pk
    return "system", str(actor)


def _workspace_resolve(workspace) -> KnowledgeWorkspace:
    if isinstance(workspace, KnowledgeWorkspace):
        return workspace
    try:
        return KnowledgeWorkspace.objects.get(slug=workspace)
    except KnowledgeWorkspace.DoesNotExist:
        raise KnowledgeHubError(f"unknown knowledge workspace: {workspace!r}") from None


def _content_clean(content: str) -> str:
    content = (content or "").replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "").strip()
    if not content:
        raise KnowledgeHubError("the document is empty")
    if len(content) > settings.KNOWLEDGE_HUB_MAX_DOCUMENT_CHARS:
        raise KnowledgeHubError(
            f"the document has {len(content):,} characters; the limit is {settings.KNOWLEDGE_HUB_MAX_DOCUMENT_CHARS:,}"
        )
    return content


def hub_document_ingest(
    *, workspace, title: str, content: str, source: str = "", file_name: str = "", actor=None
) -> KnowledgeDocument:
    """Store a document in `workspace` (a slug or row) and ingest it into the hub.

    The same text in the same workspace is one document: it is not stored twice, and ingested again only if an
    earlier attempt did not succeed. Returns the document, `INGESTED` or `FAILED` (with the error).
    """
    document = _document_store(
        workspace=workspace, title=title, content=content, source=source, file_name=file_name, actor=actor
    )
    if document.status == KnowledgeDocument.Status.INGESTED:
        return document
    return hub_document_reingest(document=document, actor=actor)


def _document_store(*, workspace, title: str, content: str, source: str, file_name: str, actor) -> KnowledgeDocument:
    """The document row for this text in this workspace, created (with its audit row) if it is new."""
    workspace = _workspace_resolve(workspace)
    content = _content_clean(content)
    actor_kind, actor_id = _actor_fields(actor)
    with transaction.atomic():
        document, created = KnowledgeDocument.objects.get_or_create(
            workspace=workspace,
            sha256=hashlib.sha256(content.encode("utf-8")).hexdigest(),
            defaults={
                "title": (title or file_name or "문서").strip()[:300],
                "source": source[:200],
                "file_name": file_name[:255],
                "content": content,
                "search_bigrams": text_bigrams(content),
            },
        )
        if created:
            document_terms_count(document, counted=True)
            _version_record(document, workspace.slug, KnowledgeDocumentVersion.Reason.CREATED, actor)
            audit_record(
                actor_kind=actor_kind,
                actor_id=actor_id,
                action="knowledge.document.create",
                target=document,
                data={"workspace": workspace.slug, "title": document.title, "chars": len(content)},
            )
    if document.status == KnowledgeDocument.Status.INGESTED:
        return document
    if document.status == KnowledgeDocument.Status.RETIRED:
        return hub_document_restore(document=document, actor=actor)
    return hub_document_reingest(document=document, actor=actor)


def _hub_file_path(document: KnowledgeDocument) -> str:
    """The `file_path` LightRAG keeps for the document's chunks: its id first, so evidence finds the row again."""
    # LightRAG keeps only a path's base name and drops `[...]` parser hints: neither may appear in the name.
    name = re.sub(r"[/\\\[\]]", " ", document.file_name or document.title)
    return f"{document.hub_doc_id}:{name}"


def hub_document_reingest(*, document: KnowledgeDocument, actor=None) -> KnowledgeDocument:
    """Ingest a stored document (again) into its workspace's graph; re-ingesting the same text is idempotent.

    One transaction: lock the workspace row (writers of a workspace queue here, across processes), write to
    LightRAG, bump the workspace revision, record the outcome and the audit row. A LightRAG failure is recorded
    on the document (status `FAILED`) and leaves the revision as it was. A retired document comes back
    (`hub_document_restore` records that as a version).
    """
    runtime = runtime_get()
    with transaction.atomic():
        workspace, document = _locked(document)
        return _ingest_locked(runtime, workspace, document, actor=actor, revision_moved=False)


def _locked(document: KnowledgeDocument) -> tuple[KnowledgeWorkspace, KnowledgeDocument]:
    """The workspace row then the document row, locked for the transaction (always in that order)."""
    workspace = KnowledgeWorkspace.objects.select_for_update().get(pk=document.workspace_id)
    return workspace, KnowledgeDocument.objects.select_for_update().get(pk=document.pk)


def _ingest_locked(runtime, workspace, document, *, actor, revision_moved: bool) -> KnowledgeDocument:
    """Write the locked document into LightRAG and record the outcome (inside the caller's transaction).

    `revision_moved`: the caller already changed the workspace's LightRAG data in this transaction (a replace
    removed the old text), so the revision goes up even when this write fails.
    """
    actor_kind, actor_id = _actor_fields(actor)
    use_llm = llm_configured()
    file_path = _hub_file_path(document)
    try:
        if use_llm:
            write = hub_graph.document_insert_llm(
                runtime,
                workspace.slug,
                workspace.revision,
                doc_id=document.hub_doc_id,
                content=document.content,
                file_path=file_path,
            )
        else:
            draft = graph_draft_build(
                doc_id=document.hub_doc_id,
                file_path=file_path,
                chunks=document_chunks(document.content, max_chars=settings.KNOWLEDGE_HUB_CHUNK_CHARS),
                lexicon=lexicon_get(max_age_seconds=0),
                entities_per_chunk=settings.KNOWLEDGE_HUB_ENTITIES_PER_CHUNK,
                relations_per_chunk=settings.KNOWLEDGE_HUB_RELATIONS_PER_CHUNK,
                domain_terms=domain_terms_get(),
            )
            write = hub_graph.graph_insert(runtime, workspace.slug, workspace.revision, draft)
        counts = runtime.call(write, timeout=settings.KNOWLEDGE_HUB_INGEST_TIMEOUT_SECONDS)
    except Exception as error:  # LightRAG, the embedder or the LLM failed: record it on the document
        logger.exception("ingesting knowledge document %s into %s failed", document.pk, workspace.slug)
        # The instance may hold part of the write: this process reloads the workspace from its store.
        with contextlib.suppress(HubError):
            runtime.call(runtime.workspace_forget(workspace.slug), timeout=5)
        document.status = KnowledgeDocument.Status.FAILED
        document.error = f"{type(error).__name__}: {error}"[:2000]
        document.hub_chunk_ids = []
        document.save(
            update_fields=["status", "error", "content", "search_bigrams", "sha256", "title", "hub_chunk_ids"]
        )
        if revision_moved:
            _revision_bump(workspace)
        audit_record(
            actor_kind=actor_kind,
            actor_id=actor_id,
            action="knowledge.document.fail",
            target=document,
            data={"workspace": workspace.slug, "error": document.error[:500]},
        )
        return document

    revision = _revision_bump(workspace, runtime)
    document.status = KnowledgeDocument.Status.INGESTED
    document.extractor = KnowledgeDocument.Extractor.LLM if use_llm else KnowledgeDocument.Extractor.LOCAL
    document.error = ""
    document.chunk_count, document.entity_count, document.relation_count = (
        counts.chunks,
        counts.entities,
        counts.relations,
    )
    document.hub_chunk_ids = list(counts.chunk_ids)
    document.ingested_at = timezone.now()
    document.save()
    audit_record(
        actor_kind=actor_kind,
        actor_id=actor_id,
        action="knowledge.document.ingest",
        target=document,
        data={
            "workspace": workspace.slug,
            "revision": revision,
            "extractor": document.extractor,
            "chunks": counts.chunks,
            "entities": counts.entities,
            "relations": counts.relations,
        },
    )
    return document


def _revision_bump(workspace: KnowledgeWorkspace, runtime=None) -> int:
    """Announce a change of the workspace's LightRAG data: other processes reload it when they see the revision.

    With `runtime` (this process made the change through its own instance) the loaded copy is marked current once
    the transaction commits, so this process does not reload what it already holds.
    """
    before, after = workspace.revision, workspace.revision + 1
    KnowledgeWorkspace.objects.filter(pk=workspace.pk).update(revision=F("revision") + 1, updated_at=timezone.now())
    workspace.revision = after
    if runtime is not None:
        slug = workspace.slug
        transaction.on_commit(
            lambda: runtime.call(runtime.revision_advance(slug, before=before, after=after), timeout=5)
        )
    return after


def _version_record(document: KnowledgeDocument, workspace_slug: str, reason: str, actor) -> KnowledgeDocumentVersion:
    label = getattr(actor, "get_username", None)
    return KnowledgeDocumentVersion.objects.create(
        document=document,
        document_ref=document.pk,
        workspace_slug=workspace_slug,
        reason=reason,
        title=document.title,
        content=document.content,
        sha256=document.sha256,
        status=document.status,
        actor=(label() if label else str(actor or "system"))[:150],
    )


def _hub_remove_locked(runtime, workspace: KnowledgeWorkspace, document: KnowledgeDocument):
    """Take the locked document's chunks, entities and relations out of LightRAG (inside the caller's transaction).

    A document the LLM pipeline extracted is deleted by LightRAG itself (`adelete_by_doc_id`); one the local
    extractor built is taken out item by item (`hub_graph.document_remove_local`). A pending document never
    reached the hub. Raises `HubError` when LightRAG fails; the caller's transaction then rolls back.
    """
    if document.status in (KnowledgeDocument.Status.PENDING, KnowledgeDocument.Status.RETIRED):
        return None  # never reached the hub, or already taken out of it
    if document.extractor == KnowledgeDocument.Extractor.LLM:
        removal = hub_graph.document_remove_llm(runtime, workspace.slug, workspace.revision, doc_id=document.hub_doc_id)
    else:
        others = KnowledgeDocument.objects.filter(
            workspace=workspace, status=KnowledgeDocument.Status.INGESTED
        ).exclude(pk=document.pk)
        kept = {chunk_id for other in others for chunk_id in _chunk_ids(other)}
        removal = hub_graph.document_remove_local(
            runtime,
            workspace.slug,
            workspace.revision,
            doc_id=document.hub_doc_id,
            chunk_ids=_chunk_ids(document),
            kept_chunk_ids=kept,
        )
    try:
        return runtime.call(removal, timeout=settings.KNOWLEDGE_HUB_INGEST_TIMEOUT_SECONDS)
    except Exception:
        # Part of the removal may be in this process's copy: reload the workspace from its store on next use.
        with contextlib.suppress(HubError):
            runtime.call(runtime.workspace_forget(workspace.slug), timeout=5)
        raise


def _chunk_ids(document: KnowledgeDocument) -> list[str]:
    if document.hub_chunk_ids:
        return list(document.hub_chunk_ids)
    return hub_graph.chunk_ids_of(document.content, max_chars=settings.KNOWLEDGE_HUB_CHUNK_CHARS)


def _removal_data(workspace, removal) -> dict:
    data = {"workspace": workspace.slug, "revision": workspace.revision}
    if removal is not None:
        data.update(
            chunks=removal.chunks,
            entities_deleted=removal.entities_deleted,
            entities_updated=removal.entities_updated,
            relations_deleted=removal.relations_deleted,
            relations_updated=removal.relations_updated,
        )
    return data


def hub_document_retire(*, document: KnowledgeDocument, actor=None) -> KnowledgeDocument:
    """Take a document out of the hub but keep its row and text (`retired`): it is no longer evidence, and
    `hub_document_restore` brings it back. Retiring a retired document changes nothing."""
    actor_kind, actor_id = _actor_fields(actor)
    runtime = runtime_get()
    with transaction.atomic():
        workspace, document = _locked(document)
        if document.status == KnowledgeDocument.Status.RETIRED:
            return document
        removal = _hub_remove_locked(runtime, workspace, document)
        _revision_bump(workspace, runtime)
        document.status = KnowledgeDocument.Status.RETIRED
        document.error = ""
        document.save(update_fields=["status", "error"])
        document_terms_count(document, counted=False)
        _version_record(document, workspace.slug, KnowledgeDocumentVersion.Reason.RETIRED, actor)
        audit_record(
            actor_kind=actor_kind,
            actor_id=actor_id,
            action="knowledge.document.retire",
            target=document,
            data=_removal_data(workspace, removal),
        )
    return document


def hub_document_restore(*, document: KnowledgeDocument, actor=None) -> KnowledgeDocument:
    """Ingest a retired document again; returns it `INGESTED`, or `FAILED` with the error."""
    runtime = runtime_get()
    with transaction.atomic():
        workspace, document = _locked(document)
        if document.status != KnowledgeDocument.Status.RETIRED:
            raise KnowledgeHubError("보관된 문서만 복원할 수 있습니다.")
        document_terms_count(document, counted=True)
        document = _ingest_locked(runtime, workspace, document, actor=actor, revision_moved=False)
        _version_record(document, workspace.slug, KnowledgeDocumentVersion.Reason.RESTORED, actor)
    return document


def hub_document_replace(
    *, document: KnowledgeDocument, content: str, title: str = "", actor=None
) -> KnowledgeDocument:
    """Correct a document: its old text leaves the hub (chunks, entities, relations) and the new one is ingested
    in the same transaction, so the wrong version never sits beside the corrected one. The old text stays in the
    version history. The same text as before changes nothing; a text another document of the workspace already
    has is refused."""
    content = _content_clean(content)
    sha256 = hashlib.sha256(content.encode("utf-8")).hexdigest()
    runtime = runtime_get()
    actor_kind, actor_id = _actor_fields(actor)
    with transaction.atomic():
        workspace, document = _locked(document)
        if sha256 == document.sha256 and (not title or title.strip() == document.title):
            return document
        duplicate = KnowledgeDocument.objects.filter(workspace=workspace, sha256=sha256).exclude(pk=document.pk)
        if duplicate.exists():
            raise KnowledgeHubError(f"같은 본문의 문서가 이미 있습니다: {duplicate.first().title}")
        removal = _hub_remove_locked(runtime, workspace, document)
        before = {"title": document.title, "sha256": document.sha256, "chars": len(document.content)}
        document.content, document.sha256, document.search_bigrams = content, sha256, text_bigrams(content)
        document.title = (title or document.title).strip()[:300]
        document.hub_chunk_ids = []
        document_terms_count(document, counted=True)
        document = _ingest_locked(runtime, workspace, document, actor=actor, revision_moved=removal is not None)
        _version_record(document, workspace.slug, KnowledgeDocumentVersion.Reason.REPLACED, actor)
        audit_record(
            actor_kind=actor_kind,
            actor_id=actor_id,
            action="knowledge.document.replace",
            target=document,
            data={**_removal_data(workspace, removal), "before": before, "status": document.status},
        )
    return document


def hub_document_delete(*, document: KnowledgeDocument, actor=None) -> None:
    """Take a document out of the hub and delete its row; its last text stays in the version history."""
    actor_kind, actor_id = _actor_fields(actor)
    runtime = runtime_get()
    with transaction.atomic():
        workspace, document = _locked(document)
        removal = _hub_remove_locked(runtime, workspace, document)
        if removal is not None:
            _revision_bump(workspace, runtime)
        _version_record(document, workspace.slug, KnowledgeDocumentVersion.Reason.DELETED, actor)
        audit_record(
            actor_kind=actor_kind,
            actor_id=actor_id,
            action="knowledge.document.delete",
            target=document,
            data={**_removal_data(workspace, removal), "title": document.title},
        )
        document_terms_count(document, counted=False)
        document.delete()


def hub_workspace_save(*, workspace: KnowledgeWorkspace, changed_fields: list[str], actor=None) -> KnowledgeWorkspace:
    """Save a workspace staff created or edited (title, description, routing keywords, enabled), with its audit row.

    The slug names the LightRAG folder, so an existing workspace keeps it.
    """
    actor_kind, actor_id = _actor_fields(actor)
    created = workspace.pk is None
    if not created and "slug" in changed_fields:
        raise KnowledgeHubError("워크스페이스 슬러그는 바꿀 수 없습니다.")
    with transaction.atomic():
        workspace.save()
        audit_record(
            actor_kind=actor_kind,
            actor_id=actor_id,
            action="knowledge.workspace.create" if created else "knowledge.workspace.update",
            target=workspace,
            data={"fields": sorted(changed_fields), "enabled": workspace.enabled, "title": workspace.title},
        )
    return workspace


def hub_demo_load(*, directory: Path | None = None, actor="demo") -> dict[str, int]:
    """Ingest the demo documents (`demo/data/knowledge/<workspace slug>/*.md`); safe to run again.

    Returns the number of documents now ingested per workspace slug.
    """
    directory = Path(directory or DEMO_KNOWLEDGE_DIR)
    # Every document is stored before any is ingested, so the first one's entities already know which of its
    # nouns the others share (domain_terms_get).
    documents = [
        _document_store(
            workspace=folder.name,
            title=document_title(path.read_text(encoding="utf-8"), path.stem),
            content=path.read_text(encoding="utf-8"),
            source="demo",
            file_name=path.name,
            actor=actor,
        )
        for folder in sorted(path for path in directory.iterdir() if path.is_dir())
        for path in sorted(folder.glob("*.md"))
    ]
    loaded: dict[str, int] = {}
    for document in documents:
        if document.status != KnowledgeDocument.Status.INGESTED:
            document = hub_document_reingest(document=document, actor=actor)
        if document.status == KnowledgeDocument.Status.INGESTED:
            slug = document.workspace.slug
            loaded[slug] = loaded.get(slug, 0) + 1
    return loaded


def hub_storage_migrate(
    *, source_dir: Path | str | None = None, workspaces: list[str] | None = None, actor=None, progress=None
) -> dict[str, "hub_migrate.CopyCounts"]:
    """Copy the file storages of every workspace (or the given slugs) into the configured PostgreSQL storages.

    Nothing is extracted again; copying twice changes nothing (every write is an upsert by LightRAG's ids). Each
    workspace is copied under its row lock, its revision bumped (every process reloads it) and audited
    (`knowledge.storage.migrate`). A workspace without files is left out of the result. `progress(slug, stage,
    count)` is called as each store is copied.
    """
    if storage_kind() != POSTGRES:
        raise KnowledgeHubError(
            "KNOWLEDGE_HUB_STORAGE=postgres 로 설정한 뒤 실행하세요 (파일 저장소의 내용을 PostgreSQL로 옮깁니다)."
        )
    source = Path(source_dir or settings.LIGHTRAG_WORKING_DIR).resolve()
    target = Path(settings.LIGHTRAG_WORKING_DIR).resolve()
    rows = KnowledgeWorkspace.objects.order_by("pk")
    if workspaces:
        unknown = sorted(set(workspaces) - set(rows.filter(slug__in=workspaces).values_list("slug", flat=True)))
        if unknown:
            raise KnowledgeHubError(f"알 수 없는 워크스페이스: {', '.join(unknown)}")
        rows = rows.filter(slug__in=workspaces)
    actor_kind, actor_id = _actor_fields(actor)
    runtime = runtime_get()
    copied = {}
    for row in rows:
        folder = source / row.slug
        if not hub_migrate.workspace_has_files(folder):
            continue
        with transaction.atomic():
            workspace = KnowledgeWorkspace.objects.select_for_update().get(pk=row.pk)
            if runtime.storage_names["vector_storage"] == "NanoVectorDBStorage" and source != target:
                # The vectors stay files beside PostgreSQL: they move to this installation's working dir.
                (target / workspace.slug).mkdir(parents=True, exist_ok=True)
                for file_name in hub_migrate.VECTOR_FILES.values():
                    if (folder / file_name).exists():
                        shutil.copyfile(folder / file_name, target / workspace.slug / file_name)
                runtime.call(runtime.workspace_forget(workspace.slug), timeout=5)
            counts = runtime.call(
                hub_migrate.workspace_copy_from_files(
                    runtime,
                    workspace.slug,
                    workspace.revision,
                    folder=folder,
                    progress=lambda stage, count, slug=workspace.slug: progress and progress(slug, stage, count),
                ),
                timeout=settings.KNOWLEDGE_HUB_INGEST_TIMEOUT_SECONDS,
            )
            revision = _revision_bump(workspace, runtime)
            audit_record(
                actor_kind=actor_kind,
                actor_id=actor_id,
                action="knowledge.storage.migrate",
                target=workspace,
                data={"source": str(folder), "storage": storage_label(), "revision": revision, **vars(counts)},
            )
        copied[workspace.slug] = counts
    return copied


def document_text_decode(raw: bytes) -> str:
    """An uploaded text or Markdown file's text: UTF-8 (with or without BOM), else CP949 (Korean Windows)."""
    for encoding in ("utf-8-sig", "cp949"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise KnowledgeHubError("UTF-8 또는 CP949 텍스트 파일만 반영할 수 있습니다.")


def document_title(content: str, fallback: str) -> str:
    """The first Markdown heading, else the first line, else `fallback`."""
    for line in content.splitlines():
        line = line.strip()
        if line:
            return line.lstrip("#").strip()[:300] or fallback
    return fallback


# --- reads ------------------------------------------------------------------------------------------------------

WorkspaceRow = namedtuple("WorkspaceRow", ["slug", "revision", "routing_keywords"])
_workspace_rows_cache = {"rows": None, "read_at": 0.0}


def _enabled_workspaces() -> list[WorkspaceRow]:
    """Enabled workspaces with their revisions: read on every search unless KNOWLEDGE_HUB_REVISION_CHECK_SECONDS."""
    max_age = settings.KNOWLEDGE_HUB_REVISION_CHECK_SECONDS
    now = time.monotonic()
    if max_age > 0 and _workspace_rows_cache["rows"] is not None and now - _workspace_rows_cache["read_at"] < max_age:
        return _workspace_rows_cache["rows"]
    rows = [
        WorkspaceRow(*values)
        for values in KnowledgeWorkspace.objects.filter(enabled=True).values_list(
            "slug", "revision", "routing_keywords"
        )
    ]
    _workspace_rows_cache.update(rows=rows, read_at=now)
    return rows


ALWAYS_ASKED = "*"  # a routing keyword that makes a workspace part of every routed question


def _routing_form(text: str) -> str:
    return re.sub(r"\s+", "", text_normalise(text).lower())


def workspaces_route(query: str, workspaces: list[WorkspaceRow]) -> list[WorkspaceRow]:
    """Which workspaces a question is asked of.

    The question's nouns are extracted (particles and endings stripped, so `반품은` gives `반품` and `확인하나요`
    gives nothing). A workspace is hit when one of its routing keywords is part of one of those nouns (`센터` in
    `물류센터`; a keyword with spaces, `거래 조건`, may span neighbouring nouns). No workspace hit, or more than
    KNOWLEDGE_HUB_ROUTE_MAX_WORKSPACES of them (a question too broad to route), means every enabled workspace.
    Otherwise: the hit workspaces plus those with the keyword `*` (notices, which may change any rule). A hit on
    a `*` workspace alone narrows nothing: it is asked anyway.
    """
    nouns = [_routing_form(term.name) for term in terms_extract(query)]
    joined = "".join(nouns)

    def hit(keyword: str) -> bool:
        keyword = _routing_form(keyword)
        if not keyword or keyword == ALWAYS_ASKED:
            return False
        return any(keyword in noun for noun in nouns) or keyword in joined

    always = [workspace for workspace in workspaces if ALWAYS_ASKED in (workspace.routing_keywords or [])]
    hits = [workspace for workspace in workspaces if any(hit(keyword) for keyword in workspace.routing_keywords or [])]
    narrowing = [workspace for workspace in hits if workspace not in always]
    if not narrowing or len(hits) > settings.KNOWLEDGE_HUB_ROUTE_MAX_WORKSPACES:
        return workspaces
    return [workspace for workspace in workspaces if workspace in hits or workspace in always]


def hub_search(
    query: str, *, workspaces: list[str] | None = None, limit: int | None = None, on: datetime.date | None = None
) -> list[EvidenceItem]:
    """Evidence for a question from the hub: chunks, entities and relations, and the passages that hold a rare
    noun of the question (`_rare_term_hits`), best first.

    `workspaces`: slugs to ask (enabled ones only); None routes the question (`workspaces_route`), and a question
    routing cannot narrow is asked of the KNOWLEDGE_HUB_UNROUTED_WORKSPACES workspaces nearest to it in content
    (plus the `*` ones; 0 asks every enabled workspace). Never calls an LLM. A question too short for retrieval,
    a hub that is unavailable, or a failing workspace gives fewer or no items, never an exception (each failure
    is logged; `hub_status` reports the hub's health). Passages whose section names a period are kept only when
    it overlaps the days the question is about (`periods.question_window`, from `on`, default today).
    """
    return hub_search_start(query, workspaces=workspaces, limit=limit, on=on)()


def hub_search_start(
    query: str, *, workspaces: list[str] | None = None, limit: int | None = None, on: datetime.date | None = None
) -> Callable[[], list[EvidenceItem]]:
    """`hub_search` in two halves: starts the search on the hub's loop thread and returns at once a function that
    waits for it and gives the items. The caller's thread is free meanwhile (the evidence service searches the
    records and the FAQ in it)."""
    query = spoken_forms_written((query or "").strip())
    limit = limit or settings.KNOWLEDGE_HUB_RESULT_LIMIT
    if not query or not lightrag_modules().meets_min_rag_query_weight(query):
        return list
    rows = _enabled_workspaces()
    nearest, others = 0, []
    # Routing narrows the graph queries by keyword lists, which miss a subject's rarer words; the rare nouns are
    # looked up in every workspace the caller allows.
    rare_term_slugs = tuple(row.slug for row in rows if workspaces is None or row.slug in workspaces)
    if workspaces is not None:
        wanted = set(workspaces)
        rows = [row for row in rows if row.slug in wanted]
    else:
        routed = workspaces_route(query, rows)
        if len(routed) == len(rows):  # routing could not narrow: the workspaces nearest in content instead
            nearest = settings.KNOWLEDGE_HUB_UNROUTED_WORKSPACES
        else:  # a question routed by one of its words may be about another workspace's subject
            others = [(row.slug, row.revision) for row in rows if row not in routed]
        rows = routed
    if not rows:
        return list
    always = frozenset(row.slug for row in rows if ALWAYS_ASKED in (row.routing_keywords or []))
    window = question_window(query, today=on)
    hl_keywords, ll_keywords = query_keywords(query, lexicon_get())
    deadline = time.monotonic() + settings.KNOWLEDGE_HUB_SEARCH_TIMEOUT_SECONDS
    try:
        runtime = runtime_get()
        future = runtime.submit(
            hub_graph.workspaces_search(
                runtime,
                [(row.slug, row.revision) for row in rows],
                query=query,
                hl_keywords=hl_keywords,
                ll_keywords=ll_keywords,
                nearest=nearest,
                always=always,
                others=others,
                others_nearest=settings.KNOWLEDGE_HUB_ROUTED_ALSO_NEAREST,
            )
        )
    except HubError as error:
        logger.warning("knowledge hub search failed: %s", error)
        return list

    def finish() -> list[EvidenceItem]:
        try:
            found = runtime.result(future, timeout=max(0.0, deadline - time.monotonic()))
        except HubError as error:
            logger.warning("knowledge hub search failed: %s", error)
            return []
        # A hub whose workspaces all failed (another embedder's vectors, a broken store) gives no evidence at all.
        rare = _rare_term_hits(query, ll_keywords, rare_term_slugs) if found.answered else []
        return _evidence_items([*found.hits, *rare], limit, window)

    return finish


def _rare_term_hits(query: str, keywords: list[str], slugs: tuple[str, ...]) -> list[hub_graph.Hit]:
    """The passages that hold a rare noun of the question (one at most KNOWLEDGE_HUB_RARE_TERM_DOCUMENTS documents
    of the workspaces `slugs` hold: `위로금`, `이물`), scored by the share of the question's nouns they hold. The local
    embedding barely relates a question to a passage that lists several cases (`이물 혼입이면 위로금은 얼마예요?`
    scores 0.09 against its own list item), and the graph has no entity for a word only one document uses; the
    word itself finds it. A question whose rare words no document holds (`휴가`, `와이파이`) gets nothing here."""
    # Loaded once per process (the local answerer loads it too): verb forms are no nouns (`들어갔다고`, `줘야`).
    from agent.llm.morphology import non_nouns

    if settings.KNOWLEDGE_HUB_RARE_TERM_DOCUMENTS <= 0:
        return []
    verbs = non_nouns(query)
    nouns = [term for term in dict.fromkeys(keywords) if len(term) >= 2 and term not in verbs]
    if not nouns or not slugs:
        return []
    limit = settings.KNOWLEDGE_HUB_RARE_TERM_DOCUMENTS
    counts = dict(KnowledgeTermCount.objects.filter(name__in=nouns).values_list("name", "document_count"))
    asked = KnowledgeDocument.objects.filter(status=KnowledgeDocument.Status.INGESTED, workspace__slug__in=slugs)
    # A noun more documents count (kept at ingest, hub_terms) than the limit is common: no text is read for it. The
    # others — counted by few documents, or names, which are not counted (`헬프데스크`, a brand) — are read off the
    # texts, which also hold them inside other words (`시간` in `운영시간`): one more than the limit is enough.
    rare = [
        noun.lower()
        for noun in nouns
        if counts.get(noun, 0) <= limit
        and 0 < len(asked.filter(_holding(noun)).values_list("pk", flat=True)[: limit + 1]) <= limit
    ]
    if not rare:
        return []  # every noun is common enough for the vector search, or in no document
    holding = Q()
    for term in rare:
        holding |= _holding(term)
    documents = list(asked.filter(holding).select_related("workspace").order_by("pk"))
    terms = [noun.lower() for noun in nouns]
    hits = []
    for document in documents:
        chunks = document_chunks(document.content, max_chars=settings.KNOWLEDGE_HUB_CHUNK_CHARS)
        units = [unit for chunk in chunks for unit in chunk_units(chunk)]
        for index, unit in enumerate(units):
            text = unit.text.lower()
            if not any(term in text for term in rare):
                continue
            named = f"{unit.path} {unit.text}".lower()
            share = sum(term in named for term in terms) / len(terms)
            hits.append(
                hub_graph.Hit(
                    document.workspace.slug,
                    "chunk",
                    f"rare-{document.pk}-{index}",
                    f"{unit.path}\n\n{unit.text}" if unit.path else unit.text,
                    settings.KNOWLEDGE_HUB_MIN_SCORE + hub_graph.KEYWORD_BOOST * share,
                    (_hub_file_path(document),),
                )
            )
    return hits


def _holding(term: str) -> Q:
    """Documents whose text holds `term`. A document holding the word holds its bigrams: on PostgreSQL the GIN index
    on them finds those few and ILIKE only rechecks them."""
    holds = Q(content__icontains=term)
    return holds & Q(search_bigrams__contains=text_bigrams(term)) if connection.vendor == "postgresql" else holds


def _hit_units(hit) -> list[Unit]:
    if hit.kind == "chunk":
        return chunk_units(hit.text)
    return [unit_from_line(line) for line in hit.text.split("\n") if line.strip()]


def _unit_period(unit: Unit, year: int, periods: dict[str, Period | None]) -> Period | None:
    """A passage's effective period is the one its section path names (`… 특가전 (11월 10일 ~ 11월 30일)`), else the
    months of the holiday it names (`2026년 추석 연휴 운영 안내 > 정산`): a holiday's notice is no evidence for now."""
    if unit.path not in periods:
        periods[unit.path] = (
            (period_in(unit.path, year=year) or holiday_period(unit.path, year=year)) if unit.path else None
        )
    return periods[unit.path]


def _evidence_items(hits: list, limit: int, window: Period) -> list[EvidenceItem]:
    """Hits as passages: the units of each hit (best first) that no better hit already gave and that are in force
    on the question's dates, one `[path] sentence` line each; a hit left with nothing new is dropped."""
    floor = settings.KNOWLEDGE_HUB_MIN_SCORE
    hits = sorted((hit for hit in hits if hit.score >= floor), key=lambda hit: -hit.score)
    chosen, seen_keys, periods = [], set(), {}
    year = (window.start or window.end or timezone.localdate()).year
    units_of = {id(hit): _hit_units(hit) for hit in hits}
    # A sentence a retrieved chunk holds is read in its chunk, in its order, not again through an entity or a
    # relation that quotes it.
    in_chunks = {unit.key for hit in hits if hit.kind == "chunk" for unit in units_of[id(hit)]}
    for hit in hits:
        units = units_of[id(hit)]
        fresh = [
            unit
            for unit in dict.fromkeys(units)
            if unit.key not in seen_keys
            and (hit.kind == "chunk" or unit.key not in in_chunks)
            and in_force(_unit_period(unit, year, periods), window)
        ]
        seen_keys.update(unit.key for unit in fresh)
        if not fresh:
            continue
        chosen.append((hit, fresh))
        if len(chosen) == limit:
            break
    document_ids = {_document_id(path) for hit, _ in chosen for path in hit.file_paths} - {None}
    documents = {
        row["pk"]: row
        for row in KnowledgeDocument.objects.filter(
            pk__in=document_ids, status=KnowledgeDocument.Status.INGESTED
        ).values("pk", "title", "source", "file_name", "created_at")
    }
    items = []
    for hit, units in chosen:
        cited = {_document_id(path) for path in hit.file_paths} - {None}
        if cited and not cited & documents.keys():
            continue  # every document it came from was retired or deleted meanwhile: never evidence
        document = next(
            (documents[pk] for pk in map(_document_id, hit.file_paths) if pk in documents),
            {"pk": None, "title": "", "source": "", "file_name": "", "created_at": None},
        )
        items.append(
            EvidenceItem(
                source_kind="hub",
                reference=f"hub:{hit.workspace}:{hit.item_id}",
                text="\n".join(unit.line() for unit in units),
                score=round(hit.score, 4),
                workspace=hit.workspace,
                title=document["title"],
                extra={
                    "kind": hit.kind,
                    "document_id": document["pk"],
                    "source": document["source"],
                    "file_name": document["file_name"],
                    "as_of": document["created_at"].isoformat() if document["created_at"] else None,
                    **({"entity_type": hit.entity_type} if hit.entity_type else {}),
                },
            )
        )
    return items


def _document_id(file_path: str) -> int | None:
    match = _DOC_FILE_PATH.match(file_path or "")
    return int(match.group(1)) if match else None


def _storage_label() -> str:
    try:
        return storage_label()
    except HubStorageError as error:
        return str(error)


def hub_status() -> dict:
    """The hub's health for `GET /api/v1/health`: `ok`, or `degraded` with the reason."""
    workspaces = list(KnowledgeWorkspace.objects.values_list("slug", "enabled", "revision"))
    documents = dict(KnowledgeDocument.objects.values_list("status").annotate(count=Count("pk")).order_by())
    problems = []
    if not any(enabled for _, enabled, _ in workspaces):
        problems.append("no knowledge workspace is enabled")
    working_dir = Path(settings.LIGHTRAG_WORKING_DIR)
    existing = next((path for path in [working_dir, *working_dir.parents] if path.exists()), None)
    if existing is None or not os.access(existing, os.W_OK):
        problems.append(f"LIGHTRAG_WORKING_DIR {working_dir} is not writable")
    problems += runtime_problems()
    return {
        "status": "degraded" if problems else "ok",
        "reason": "; ".join(problems),
        "extractor": "llm" if llm_configured() else "local",
        "storage": _storage_label(),
        "workspaces": {"total": len(workspaces), "enabled": sum(1 for _, enabled, _ in workspaces if enabled)},
        "documents": {status: documents.get(status, 0) for status in KnowledgeDocument.Status.values},
        "revisions": {slug: revision for slug, _, revision in workspaces},
    }
