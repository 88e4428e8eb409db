"""The hub's rare-noun lookup index: character bigrams of each document's text in a jsonb column with a GIN index
(PostgreSQL), as the FAQ's keyword index (0007). The embedded default (SQLite) keeps the column but scans; its hub
is small."""

from django.db import migrations, models

from agent.knowledge.embeddings import text_bigrams

BIGRAM_INDEX = "agent_knowledgedocument_search_bigrams_gin"
_BATCH = 200


def fill_bigrams(apps, schema_editor):
    KnowledgeDocument = apps.get_model("agent", "KnowledgeDocument")
    batch = []
    for document in KnowledgeDocument.objects.only("id", "content").iterator(chunk_size=_BATCH):
        document.search_bigrams = text_bigrams(document.content)
        batch.append(document)
        if len(batch) == _BATCH:
            KnowledgeDocument.objects.bulk_update(batch, ["search_bigrams"])
            batch = []
    KnowledgeDocument.objects.bulk_update(batch, ["search_bigrams"])


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {BIGRAM_INDEX} ON agent_knowledgedocument "
            "USING gin (search_bigrams jsonb_path_ops)"
        )


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {BIGRAM_INDEX}")


class Migration(migrations.Migration):
    dependencies = [("agent", "0015_knowledge_term_counts")]

    operations = [
        migrations.AddField(
            model_name="knowledgedocument",
            name="search_bigrams",
            field=models.JSONField(blank=True, default=list, editable=False, verbose_name="검색 바이그램"),
        ),
        migrations.RunPython(fill_bigrams, migrations.RunPython.noop),
        migrations.RunPython(create_index, drop_index),
    ]
