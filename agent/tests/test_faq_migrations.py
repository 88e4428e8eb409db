"""Migration 0007 on a database that already holds FAQ entries: the bigrams are filled in and the index swapped."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from agent.knowledge.embeddings import text_bigrams

BEFORE = [("agent", "0006_faq_keyword_trigram_indexes")]
AFTER = [("agent", "0007_faq_search_bigrams")]


@pytest.fixture
def migrate_back_and_forth():
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes("agent")
    yield executor
    executor = MigrationExecutor(connection)
    executor.migrate(latest)


@pytest.mark.django_db(transaction=True)  # migrations run outside a test transaction; ordered after the others
def test_0007_fills_the_bigrams_of_existing_entries_and_replaces_the_trigram_indexes(migrate_back_and_forth):
    executor = migrate_back_and_forth
    executor.migrate(BEFORE)
    old_state = executor.loader.project_state(BEFORE).apps
    FaqEntry = old_state.get_model("agent", "FaqEntry")
    entry = FaqEntry.objects.create(
        question="공급 단가는 언제 바뀌나요?",
        answer="분기마다 공지합니다.",
        question_key="k" * 64,
        source_created_at=timezone.now(),
    )

    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)

    new_state = executor.loader.project_state(AFTER).apps
    migrated = new_state.get_model("agent", "FaqEntry").objects.get(pk=entry.pk)
    assert migrated.search_bigrams == text_bigrams("공급 단가는 언제 바뀌나요? 분기마다 공지합니다.")
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'agent_faqentry'")
        indexes = {row[0] for row in cursor.fetchall()}
    assert "agent_faqentry_search_bigrams_gin" in indexes
    assert not indexes & {"agent_faqentry_question_lower_trgm", "agent_faqentry_answer_lower_trgm"}
