"""The watch written after a change commits, against a deletion of its task: the watch is
one statement that skips a task already gone and waits for one being deleted, so neither
order fails or leaves a watch on a task that is gone."""

import threading

import pytest
from django.db import connection, transaction

from boards.admission import task_delete
from boards.models import Task
from notifications import watching
from notifications.models import Watch
from tests.concurrency import wait_until_a_backend_waits_on_a_lock
from tests.factories import UserFactory


def test_people_watch_what_they_are_involved_in_once(board, make_task, owner):
    first, second = make_task(board[0], "First"), make_task(board[0], "Second")
    Watch.objects.all().delete()
    Watch.objects.create(user=owner, task=second, watching=False)  # their own unwatch stands

    watching.involve({owner.pk: {first.pk, second.pk}, None: {first.pk}})
    watching.involve({owner.pk: {first.pk}})

    assert set(Watch.objects.values_list("task_id", "watching")) == {(first.pk, True), (second.pk, False)}


def test_a_task_or_person_deleted_before_the_watch_is_written_is_skipped(board, make_task, owner):
    task, kept = make_task(board[0], "Short-lived"), make_task(board[0], "Kept")
    task_id = task.pk
    task_delete(task=task, actor=owner)
    gone = UserFactory()
    gone_id = gone.pk
    gone.delete()
    Watch.objects.all().delete()

    watching.involve({owner.pk: {task_id, kept.pk}, gone_id: {kept.pk}})

    assert list(Watch.objects.values_list("user_id", "task_id")) == [(owner.pk, kept.pk)]


@pytest.mark.django_db(transaction=True)
def test_a_watch_waits_for_a_deletion_under_way_then_skips_the_task(board, make_task, owner):
    """Deterministic: the watch is written while the deletion holds the task uncommitted."""
    assert connection.vendor == "postgresql", "row-lock waits are observed in pg_stat_activity"
    task = make_task(board[0], "Short-lived")
    task_id, outcome = task.pk, {}

    def watch():
        try:
            watching.involve({owner.pk: {task_id}})
            outcome["watched"] = True
        except Exception as failed:  # the assertion below names it
            outcome["watched"] = failed
        finally:
            connection.close()

    writer = threading.Thread(target=watch)
    with transaction.atomic():  # a deletion, held open (task_delete's own transaction is durable)
        Task.objects.filter(pk=task_id).delete()
        writer.start()
        outcome["waited"] = wait_until_a_backend_waits_on_a_lock()
    writer.join(timeout=30)

    assert outcome == {"waited": True, "watched": True}
    assert not Watch.objects.filter(task_id=task_id).exists()
