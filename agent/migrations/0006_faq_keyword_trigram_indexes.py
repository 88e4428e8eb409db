"""Trigram indexes for the FAQ keyword search (LOWER(column) LIKE '%term%'), on PostgreSQL only: the embedded
default (SQLite) has no pg_trgm and its FAQ tables are small."""

from django.db import migrations

INDEXES = {
    "agent_faqentry_question_lower_trgm": "question",
    "agent_faqentry_answer_lower_trgm": "answer",
}


def create_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, column in INDEXES.items():
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON agent_faqentry USING gin (LOWER({column}) gin_trgm_ops)"
        )


def drop_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("agent", "0005_answer_run_started_index")]

    operations = [migrations.RunPython(create_indexes, drop_indexes)]
