import pytest
from django.db import connection

from agent.tests.faults import PAYMENT_TERMS
from conversations.tests.factories import QuestionFactory, RoomFactory
from monitoring.services import marker_accepted_write
from vendors.tests.factories import VendorFactory
from vendors.tests.factories_records import VendorRecordFactory


@pytest.fixture
def answerable_question(knowledge_stores):
    """An accepted question in 대한물산's room whose answer (`PAYMENT_TERMS`) is in the vendor's records."""
    vendor = VendorFactory(code="1001", name="대한물산", aliases=[])
    VendorRecordFactory(vendor=vendor, title="대한물산 결제 조건", body=PAYMENT_TERMS)
    question = QuestionFactory(message__room=RoomFactory(vendor=vendor), text="결제 조건 알려주세요")
    marker_accepted_write(question=question)
    return question


@pytest.fixture
def fail_once():
    """`fail_once(table, when=...)`: the next insert into `table` matching `when` fails once with a real
    PostgreSQL serialization failure, which Django raises as `OperationalError` (a transient error). Committed
    DDL, so it also holds for other processes (a real worker); dropped at the end of the test."""
    installed = []

    def install(table: str, when: str = "TRUE") -> None:
        name = f"fault_{table}"
        with connection.cursor() as cursor:
            # A sequence, not a table: nextval() survives the rollback of the transaction that it fails.
            cursor.execute(f"CREATE SEQUENCE {name}_seq")
            cursor.execute(
                f"""CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF {when} THEN
                        IF nextval('{name}_seq') = 1 THEN
                            RAISE EXCEPTION 'injected fault' USING ERRCODE = 'serialization_failure';
                        END IF;
                    END IF;
                    RETURN NEW;
                END $$"""
            )
            cursor.execute(f"CREATE TRIGGER {name} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()")
        installed.append((table, name))

    yield install
    with connection.cursor() as cursor:
        for table, name in installed:
            cursor.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")
            cursor.execute(f"DROP FUNCTION IF EXISTS {name}()")
            cursor.execute(f"DROP SEQUENCE IF EXISTS {name}_seq")
