"""The due-date pass: a passed due date is news for the task's assignee and watchers and an
event for the workspace's webhooks, once per due date, also when passes race; and a comment
through the real API is news for the people it mentions and the task's watchers, with one
webhook event."""

import datetime
import json

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from boards.admission import task_move
from boards.services import task_update
from notifications.due import due_pass
from notifications.models import DuePassed, Notification, Watch
from notifications.webhooks import webhook_create
from tests import concurrency
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Role


@pytest.fixture
def bob(workflow):
    user = UserFactory(username="bob")
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER)
    return user


def news(kind):
    return sorted(Notification.objects.filter(kind=kind).values_list("recipient__username", "task__title"))


def deliveries(event):
    jobs = DBTaskResult.objects.filter(task_path__endswith="webhooks.deliver")
    return [job for job in jobs if json.loads(job.args_kwargs["args"][1])["event"] == event]


def due(task, owner, when):
    task_update(task=task, actor=owner, due_at=when, due_all_day=False)


def test_a_passed_due_date_is_news_for_the_assignee_and_watchers_once(board, make_task, owner, bob):
    backlog, _, done = board
    now = timezone.now()
    task = make_task(backlog, "Send the invoice")
    task_update(task=task, actor=owner, assignee_id=bob.pk)
    Watch.objects.create(user=owner, task=task)
    due(task, owner, now - datetime.timedelta(hours=1))
    later = make_task(backlog, "Not yet")
    due(later, owner, now + datetime.timedelta(hours=1))
    finished = make_task(done, "Shipped")
    due(finished, owner, now - datetime.timedelta(hours=1))
    forgotten = make_task(backlog, "Long ago")
    due(forgotten, owner, now - datetime.timedelta(days=30))

    assert due_pass(now=now) == 1
    assert due_pass(now=now) == 0  # told once
    assert news("due") == [("bob", "Send the invoice"), ("olivia", "Send the invoice")]

    # A new due date that passes is news again.
    due(task, owner, now + datetime.timedelta(minutes=5))
    assert due_pass(now=now + datetime.timedelta(minutes=10)) == 1
    assert len(news("due")) == 4
    task_move(task=task, to_step=done, actor=owner)
    due(task, owner, now + datetime.timedelta(minutes=15))
    assert due_pass(now=now + datetime.timedelta(minutes=20)) == 0  # done work is not due


def test_a_webhook_subscribed_to_due_dates_gets_one_event(board, make_task, owner, settings):
    webhook_create(
        workspace=board[0].workflow.workspace, url="https://hooks.example.com/k", events=["task.due"], actor=owner
    )
    now = timezone.now()
    task = make_task(board[0], "Renew the domain")
    due(task, owner, now - datetime.timedelta(minutes=1))
    due_pass(now=now)
    (job,) = deliveries("task.due")
    assert json.loads(job.args_kwargs["args"][1])["data"]["task"]["title"] == "Renew the domain"


@pytest.mark.django_db(transaction=True)
def test_racing_passes_tell_each_due_date_once(board, make_task, owner, bob):
    now = timezone.now()
    tasks = [make_task(board[0], f"Due {i}") for i in range(5)]
    for task in tasks:
        task_update(task=task, actor=owner, assignee_id=bob.pk)
        due(task, owner, now - datetime.timedelta(minutes=1))

    outcomes = concurrency.race(4, lambda _: due_pass(now=now))

    assert not [o for o in outcomes if isinstance(o, Exception)]
    assert sum(outcomes) == 5
    assert DuePassed.objects.count() == 5
    # One per task for bob (assigned) and for its author (a watcher), whichever pass told it
    assert news("due") == sorted([("bob", t.title) for t in tasks] + [("olivia", t.title) for t in tasks])


def test_a_comment_tells_who_it_mentions_and_the_watchers_with_one_webhook_event(
    board, make_task, owner, bob, django_capture_on_commit_callbacks
):
    carol = UserFactory(username="carol")
    MembershipFactory(workspace=board[0].workflow.workspace, user=carol, role=Role.MEMBER)
    webhook_create(
        workspace=board[0].workflow.workspace,
        url="https://hooks.example.com/k",
        events=["comment.created"],
        actor=owner,
    )
    with django_capture_on_commit_callbacks(execute=True):
        task = make_task(board[0], "Plan the launch")  # its author, the owner, watches it
    client = APIClient()
    client.force_authenticate(bob)

    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": "Ready, @carol?"}, format="json")

    assert answer.status_code == 201, answer.json()
    assert news("mentioned") == [("carol", "Plan the launch")]
    assert news("commented") == [("olivia", "Plan the launch")]
    assert Watch.objects.filter(user=bob, task=task, watching=True).exists()  # commenters watch
    assert len(deliveries("comment.created")) == 1
