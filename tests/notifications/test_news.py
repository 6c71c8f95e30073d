"""Who hears of what: board changes through the real admission services, the signal sent on
commit, the notification rules and each person's choices; the inbox and watch API."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from accounts.models import Profile
from boards.admission import task_move
from boards.services import task_block, task_unblock, task_update
from notifications.models import Mail, MailBox, Notification, Watch
from teams.services import member_remove
from tests.factories import MembershipFactory, StepFactory, UserFactory
from workflows.models import Role


@pytest.fixture
def bob(workflow):
    user = UserFactory(username="bob", email="bob@example.test")
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER)
    return user


def client_of(user):
    client = APIClient()
    client.force_authenticate(user)
    return client


def news_of(user):
    return list(Notification.objects.filter(recipient=user).order_by("id").values_list("kind", flat=True))


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run what a change does on commit (the signal), as a committed change would."""

    def run(action, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return action(*args, **kwargs)

    return run


def test_assigning_tells_the_assignee_and_never_the_actor(board, make_task, owner, bob, committed):
    task = make_task(board[0], "Write the release notes")
    committed(task_update, task=task, actor=owner, assignee_id=bob.pk)
    (note,) = Notification.objects.filter(recipient=bob)
    assert (note.kind, note.actor, note.task_id, note.detail["title"]) == ("assigned", owner, task.pk, task.title)
    assert note.in_inbox and note.mail == Mail.NONE  # the default: the inbox only
    assert news_of(owner) == []
    assert Watch.objects.filter(user=bob, task=task, watching=True).exists()  # assignees watch


def test_watchers_hear_of_blocks_pulls_and_forcing_but_not_of_their_own(board, make_task, owner, bob, committed):
    backlog, doing, done = board
    first = committed(make_task, doing, "Owner's first")
    committed(make_task, doing, "Owner's second")  # In Progress (limit 2) is full
    task = committed(make_task, backlog, "Fix login", actor=bob)  # its author watches it
    committed(task_block, task=task, actor=owner, reason="Waiting for the vendor")
    committed(task_unblock, task=task, actor=owner)
    committed(task_block, task=task, actor=bob, reason="my own block")  # bob's own action: nothing
    committed(task_unblock, task=task, actor=bob)
    assert news_of(bob) == ["blocked", "unblocked"]
    blocked = Notification.objects.filter(recipient=bob, kind="blocked").get()
    assert blocked.detail["reason"] == "Waiting for the vendor"

    # Finishing the owner's work makes room: In Progress pulls bob's task from Backlog.
    committed(task_move, task=first, to_step=done, actor=owner)
    assert news_of(bob)[-1] == "pulled"
    assert Notification.objects.filter(recipient=bob, kind="pulled").get().detail["step"] == "In Progress"

    third = committed(make_task, backlog, "third", actor=bob)
    committed(task_move, task=third, to_step=doing, actor=owner, force=True, reason="urgent")
    assert news_of(bob)[-1] == "forced"
    assert news_of(owner) == []


def test_each_person_chooses_where_news_goes(board, make_task, owner, bob, committed, settings):
    settings.KANDEV_CAN_SEND_EMAIL = True
    Profile.objects.create(user=bob, notify={"assigned": "email", "blocked": "off"})
    task = make_task(board[0], "Quarterly report")
    committed(task_update, task=task, actor=owner, assignee_id=bob.pk)
    committed(task_block, task=task, actor=owner, reason="on hold")
    (note,) = Notification.objects.filter(recipient=bob)
    assert (note.kind, note.in_inbox, note.mail) == ("assigned", False, Mail.PENDING)
    box = MailBox.objects.get(user=bob)
    assert box.due_at is not None  # one batch scheduled, on the queue
    (queued,) = DBTaskResult.objects.filter(task_path="notifications.mail.send_mail_batch")
    assert queued.args_kwargs["args"] == [bob.pk]


def test_people_who_left_the_workspace_hear_nothing(board, make_task, owner, bob, committed):
    task = committed(make_task, board[0], "Old work", actor=bob)
    member_remove(workspace=board[0].workflow.workspace, user_id=bob.pk, actor=owner)
    committed(task_block, task=task, actor=owner, reason="gone")
    assert news_of(bob) == []


def test_watch_and_unwatch_through_the_api(board, make_task, owner, bob, committed):
    task = make_task(board[0], "Design review")
    client = client_of(bob)
    assert client.get(f"/api/v1/tasks/{task.pk}/").json()["watching"] is False
    assert client.post(f"/api/v1/tasks/{task.pk}/watch/").json() == {"task_id": str(task.pk), "watching": True}
    assert client.get(f"/api/v1/tasks/{task.pk}/").json()["watching"] is True
    assert client_of(owner).get(f"/api/v1/tasks/{task.pk}/").json()["watching"] is False  # per viewer
    committed(task_block, task=task, actor=owner, reason="blocked")
    assert news_of(bob) == ["blocked"]

    assert client.post(f"/api/v1/tasks/{task.pk}/unwatch/").status_code == 200
    committed(task_update, task=task, actor=owner, assignee_id=bob.pk)  # involvement keeps the unwatch
    committed(task_unblock, task=task, actor=owner)
    assert news_of(bob) == ["blocked", "assigned"]

    stranger = UserFactory()
    assert client_of(stranger).post(f"/api/v1/tasks/{task.pk}/watch/").status_code == 404
    assert not Watch.objects.filter(user=stranger).exists()


def test_the_inbox_lists_and_marks_read(board, make_task, owner, bob, committed, django_assert_num_queries):
    tasks = [make_task(board[0], f"Task {n}") for n in range(3)]
    for task in tasks:
        committed(task_update, task=task, actor=owner, assignee_id=bob.pk)
    client = client_of(bob)
    with django_assert_num_queries(2):  # the page's count and its rows (the actor joined)
        listed = client.get("/api/v1/notifications/?unread=true").json()
    assert [n["task_id"] for n in listed["results"]] == [str(t.pk) for t in reversed(tasks)]
    first = listed["results"][0]
    assert set(first) >= {"id", "kind", "task_id", "workflow_id", "actor", "at", "read"}
    assert (first["kind"], first["actor"], first["read"]) == ("assigned", "olivia", False)

    marked = client.post("/api/v1/notifications/read/", {"ids": [first["id"]]}, format="json").json()
    assert marked == {"marked": 1, "unread": 2}
    assert len(client.get("/api/v1/notifications/?unread=false").json()["results"]) == 1
    assert client.post("/api/v1/notifications/read/", {"all": True}, format="json").json() == {"marked": 2, "unread": 0}

    # Another person's ids mark nothing; bad bodies and filters are 400s.
    assert (
        client_of(owner).post("/api/v1/notifications/read/", {"ids": [first["id"]]}, format="json").json()["marked"]
        == 0
    )
    assert client.post("/api/v1/notifications/read/", {}, format="json").status_code == 400
    assert client.post("/api/v1/notifications/read/", {"ids": ["x"]}, format="json").status_code == 400
    assert client.get("/api/v1/notifications/?unread=maybe").status_code == 400
    assert client.get("/api/v1/notifications/?colour=red").status_code == 400


def test_notify_choices_are_read_and_set_on_me(bob):
    client = client_of(bob)
    assert client.get("/api/v1/me/").json()["notify"]["assigned"] == "inbox"
    assert client.patch("/api/v1/me/", {"notify": {"assigned": "both"}}, format="json").status_code == 200
    assert Profile.objects.get(user=bob).notify_choices()["assigned"] == "both"


def test_a_create_s_news_is_one_round_trip_the_author_s_watch_with_the_webhooks_read(
    workflow, make_task, owner, django_capture_on_commit_callbacks
):
    ideas = StepFactory(workflow=workflow, name="Ideas")  # nothing pulls from it
    with django_capture_on_commit_callbacks() as callbacks:
        task = make_task(ideas, "Draft the agenda")
    with CaptureQueriesContext(connection) as ran:
        for callback in callbacks:
            callback()
    assert len(ran) == 1  # nobody else hears of it, and the workspace has no webhook
    assert Watch.objects.filter(user=owner, task=task, watching=True).exists()
