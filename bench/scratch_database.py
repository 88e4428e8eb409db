"""The benchmarks' scratch PostgreSQL databases: each bench drops and re-creates its own by name."""

import psycopg

PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"


def database_recreate(name: str) -> None:
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def database_drop(name: str) -> None:
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
