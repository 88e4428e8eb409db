"""The FAQ keyword retry's index: character bigrams of question and answer in a jsonb column with a GIN index
(PostgreSQL), replacing the trigram indexes of 0006, which cannot serve the two-syllable terms most Korean
keywords are. The embedded default (SQLite) keeps the column but scans; its FAQ tables are small."""

from django.db import migrations, models

from agent.knowledge.embeddings import text_bigrams

OLD_TRIGRAM_INDEXES = ("agent_faqentry_question_lower_trgm", "agent_faqentry_answer_lower_trgm")
BIGRAM_INDEX = "agent_faqentry_search_bigrams_gin"
_BATCH = 1000


def fill_bigrams(apps, schema_editor):
    FaqEntry = apps.get_model("agent", "FaqEntry")
    batch = []
    for entry in FaqEntry.objects.only("id", "question", "answer").iterator(chunk_size=_BATCH):
        entry.search_bigrams = text_bigrams(f"{entry.question} {entry.answer}")
        batch.append(entry)
        if len(batch) == _BATCH:
            FaqEntry.objects.bulk_update(batch, ["search_bigrams"])
            batch = []
    FaqEntry.objects.bulk_update(batch, ["search_bigrams"])


def swap_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in OLD_TRIGRAM_INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")
    schema_editor.execute(
        f"CREATE INDEX IF NOT EXISTS {BIGRAM_INDEX} ON agent_faqentry USING gin (search_bigrams jsonb_path_ops)"
    )


def restore_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"DROP INDEX IF EXISTS {BIGRAM_INDEX}")
    for name, column in zip(OLD_TRIGRAM_INDEXES, ("question", "answer"), strict=True):
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON agent_faqentry USING gin (LOWER({column}) gin_trgm_ops)"
        )


class Migration(migrations.Migration):
    dependencies = [("agent", "0006_faq_keyword_trigram_indexes")]

    operations = [
        migrations.AddField(
            model_name="faqentry",
            name="search_bigrams",
            field=models.JSONField(blank=True, default=list, editable=False, verbose_name="검색 바이그램"),
        ),
        migrations.RunPython(fill_bigrams, migrations.RunPython.noop),
        migrations.RunPython(swap_indexes, restore_indexes),
    ]
