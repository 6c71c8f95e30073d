"""common/sql.py prepares its statements on each PostgreSQL session, so that the database
parses and plans them once per connection, not once per request; what a session holds is
always known, or started over."""

import os
import subprocess
import sys
import threading
import uuid

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from boards.models import EventKind, TaskEvent
from common import sql
from tests.factories import StepFactory
from tests.servers import ROOT


def new_statement() -> str:
    """A statement no session has prepared yet."""
    return f'SELECT %s::int + 1 AS "n{uuid.uuid4().hex}"'


def sent(statement: str, value: int) -> tuple[list, str]:
    """The rows of `statement` for `value`, and the query string that went for it."""
    with CaptureQueriesContext(connection) as captured:
        rows = sql.fetch(statement, [value])
    (query,) = captured
    return rows, query["sql"]


@pytest.mark.django_db
def test_a_statement_is_prepared_once_per_session_and_then_only_executed():
    statement = new_statement()
    rows, first = sent(statement, 1)
    assert rows == [(2,)] and "PREPARE kandev_" in first
    rows, second = sent(statement, 41)
    assert rows == [(42,)] and second.startswith("EXECUTE kandev_") and "PREPARE" not in second

    elsewhere = {}

    def another_session():  # a thread has a connection of its own
        try:
            elsewhere["sent"] = sent(statement, 9)
        finally:
            connection.close()

    thread = threading.Thread(target=another_session)
    thread.start()
    thread.join()
    rows, query = elsewhere["sent"]
    assert rows == [(10,)] and "PREPARE kandev_" in query


@pytest.mark.django_db
def test_a_failed_query_leaves_the_session_knowing_what_it_holds():
    statement = new_statement()
    # Its PREPARE refused with the rest: the transaction was already aborted.
    with pytest.raises(DatabaseError), transaction.atomic():
        with connection.cursor() as cursor:
            try:
                cursor.execute("SELECT 1 / 0")
            except DatabaseError:
                pass  # caught without a savepoint: only the database knows
        sql.fetch(statement, [1])
    assert sent(statement, 2)[0] == [(3,)]

    statement = new_statement()
    # Its PREPARE done, a later statement of the query failed: the rollback keeps it.
    with pytest.raises(DatabaseError), transaction.atomic():
        sql.fetch_together((statement, [1], ()), ("SELECT 1 / 0", [], ()))
    rows, query = sent(statement, 4)
    assert rows == [(5,)] and query.startswith("DEALLOCATE ALL; PREPARE kandev_")
    rows, query = sent(statement, 5)
    assert rows == [(6,)] and query.startswith("EXECUTE kandev_")


@pytest.mark.django_db
def test_a_batch_of_rows_or_any_statement_behind_a_transaction_pooler_goes_as_written(monkeypatch, make_task):
    step = StepFactory()
    task = make_task(step)
    events = [TaskEvent(workflow=step.workflow, task=task, kind=EventKind.MOVED, to_step_id=step.pk) for _ in range(12)]
    sent(new_statement(), 0)  # the session's statements known (a test before may have left them unknown)
    with CaptureQueriesContext(connection) as captured:
        sql.insert(events)
    (query,) = captured
    assert query["sql"].startswith("INSERT INTO") and "PREPARE" not in query["sql"]  # 108 parameters
    assert TaskEvent.objects.filter(task=task, kind=EventKind.MOVED).count() == 12

    statement = new_statement()
    monkeypatch.setitem(connection.settings_dict, "DISABLE_SERVER_SIDE_CURSORS", True)
    rows, query = sent(statement, 2)
    assert rows == [(3,)] and query == statement.replace("%s", "2")


@pytest.mark.parametrize("pooler, disabled", [(None, False), ("1", True)])
def test_a_deployment_behind_a_transaction_pooler_says_so_and_nothing_is_prepared(pooler, disabled):
    environ = {k: v for k, v in os.environ.items() if k != "DATABASE_TRANSACTION_POOLER"}
    environ |= {"DJANGO_SETTINGS_MODULE": "kandev.settings", "DEBUG": "0", "SECRET_KEY": "x" * 50}
    environ |= {"DATABASE_URL": "postgresql://kandev@db/kandev"} | (
        {"DATABASE_TRANSACTION_POOLER": pooler} if pooler else {}
    )
    read = "from django.conf import settings; print(settings.DATABASES['default']['DISABLE_SERVER_SIDE_CURSORS'])"
    done = subprocess.run([sys.executable, "-c", read], cwd=ROOT, env=environ, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(disabled)
