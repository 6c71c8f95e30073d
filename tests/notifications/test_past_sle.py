"""The service-level pass: a task in an active step past its class's service level is news
for its watchers, once, also when passes race; a task within it, waiting in the backlog,
done, or of a class without a level is not; old news is recorded, not told; and the news
reaches a watcher's mailbox through a real SMTP server on loopback."""

import datetime
import email
import email.policy

import pytest
from django.utils import timezone

from accounts.models import Profile
from boards.admission import task_move
from boards.models import Task
from flow.models import ServiceLevel
from flow.past_sle import sle_pass
from notifications.models import Notification, SlePassed, Watch
from tests import concurrency, factories
from tests.factories import MembershipFactory, UserFactory
from tests.notifications.test_delivery import mail_on, run_queue, smtp_inbox  # noqa: F401  (fixtures)
from workflows.models import Role

DAY = datetime.timedelta(days=1)


@pytest.fixture
def bob(workflow):
    user = UserFactory(username="bob", email="bob@example.test")
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER)
    return user


@pytest.fixture
def board(workflow):
    """Backlog -> Doing (no limit, pulls nothing) -> Done."""
    return factories.board(workflow, active={"Doing": 0}, pulls="none")


@pytest.fixture
def nine_days(workflow):
    ServiceLevel.objects.create(workflow=workflow, class_of_service="standard", days=9)


def started(task, ago):
    Task.objects.filter(pk=task.pk).update(started_at=timezone.now() - ago)
    return task


def news():
    return sorted(Notification.objects.filter(kind="past_sle").values_list("recipient__username", "task__title"))


def test_a_task_past_its_service_level_is_news_for_its_watchers_once(board, make_task, owner, bob, nine_days):
    backlog, doing, done = board
    late = started(make_task(doing, "Late"), 9 * DAY + datetime.timedelta(hours=1))
    Watch.objects.create(user=bob, task=late)
    started(make_task(doing, "Within"), 8 * DAY)
    finished = started(make_task(doing, "Finished"), 20 * DAY)
    task_move(task=finished, to_step=done, actor=owner)
    started(make_task(doing, "Urgent", class_of_service="expedite"), 20 * DAY)  # no expedite level
    started(make_task(backlog, "Waiting"), 20 * DAY)  # not in an active step

    assert sle_pass() == 1
    assert sle_pass() == 0  # told once
    assert news() == [("bob", "Late")]
    (told,) = SlePassed.objects.all()
    assert (told.task_id, told.days) == (late.pk, 9)
    detail = Notification.objects.filter(kind="past_sle").first().detail
    assert (detail["title"], detail["days"]) == ("Late", 9)


def test_a_level_passed_long_ago_is_recorded_not_told(board, make_task, nine_days):
    backlog, doing, done = board
    old = started(make_task(doing, "Forgotten"), 30 * DAY)
    assert sle_pass() == 0
    assert news() == []
    assert SlePassed.objects.get().task_id == old.pk  # and not looked at again


def test_a_board_without_a_level_tells_nothing(board, make_task):
    backlog, doing, done = board
    started(make_task(doing, "Nothing finished yet"), 30 * DAY)
    assert sle_pass() == 0 and SlePassed.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_racing_passes_tell_each_task_once(board, make_task, nine_days):
    backlog, doing, done = board
    late = [started(make_task(doing, f"Late {i}"), 10 * DAY) for i in range(2)]
    outcomes = concurrency.race(4, lambda _: sle_pass())  # their author watches them (after commit)
    assert not [o for o in outcomes if isinstance(o, Exception)]
    assert sum(outcomes) == 2
    assert news() == sorted(("olivia", t.title) for t in late)


@pytest.mark.django_db(transaction=True)
def test_the_news_goes_through_a_real_smtp_server(board, make_task, bob, nine_days, mail_on, smtp_inbox):  # noqa: F811
    backlog, doing, done = board
    Profile.objects.create(user=bob, notify={"past_sle": "email"})
    late = started(make_task(doing, "Ship the installer"), 10 * DAY)
    Watch.objects.create(user=bob, task=late)
    assert sle_pass() == 1
    run_queue()
    assert smtp_inbox.arrived.wait(10)
    (envelope,) = [e for e in smtp_inbox.messages if e.rcpt_tos == ["bob@example.test"]]
    message = email.message_from_bytes(envelope.content, policy=email.policy.default)
    assert "“Ship the installer” is past its service level expectation" in message.get_content()
