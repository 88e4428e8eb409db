"""Database helpers shared by the apps' services."""

from django.db import connection, transaction

BULK_WRITE_ROWS = 1000


def analyze_after_bulk_write(*models, rows: int) -> None:
    """Once a bulk write of `rows` rows commits, refresh PostgreSQL's statistics of the models' tables.

    The searches on those tables (the FAQ keyword retry's bigram index, the records' trigram index) are planned
    from the statistics; right after a large import they still describe the table before it, and the planner
    scans instead of using the index until autovacuum analyses it — a minute or more later, never when it is off.
    """
    if rows < BULK_WRITE_ROWS or connection.vendor != "postgresql":
        return
    tables = ", ".join(connection.ops.quote_name(model._meta.db_table) for model in models)

    def analyze():
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {tables}")

    transaction.on_commit(analyze)
