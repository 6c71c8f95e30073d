import pytest
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.management import call_command
from rest_framework.test import APIClient

from boards.admission import task_create
from boards.models import Task, TaskEvent
from tests import factories
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from tests.live.browser import SHARED_CHROMIUM
from workflows.models import Role, Workflow


def pytest_configure(config):
    # Hashing test users' passwords with the real hasher costs seconds per suite; this is no login test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# The SQLite lane (`pytest -m sqlite`, bin/test's second pass): the tests whose outcome
# depends on the database's locking and SQL: the admission rule at every door, the pull and
# the settled board, the real-thread races (IMMEDIATE transactions there, row locks on
# PostgreSQL), the hand-written SQL (the flow figures' too, written for both databases:
# their replays of random histories, people's and lanes' limits), and the embedded server.
# Everything else reads the same on both and runs once, on PostgreSQL.
SQLITE_LANE = (
    "tests/boards/test_admission.py",
    "tests/boards/test_pull.py",
    "tests/boards/test_pull_queries.py",
    "tests/boards/test_settled.py",
    "tests/boards/test_groups.py",
    "tests/boards/test_races.py",
    "tests/boards/test_limit_races.py",
    "tests/boards/test_blocked.py::test_a_task_blocked_before_the_pull_commits_is_never_pulled",
    "tests/boards/test_locking.py",
    "tests/boards/test_sql.py",
    "tests/flow/test_properties.py",
    "tests/flow/test_person_advice.py",
    "tests/flow/test_lanes.py",
    "tests/test_embedded_server.py",
)


def pytest_runtest_setup(item):
    """The shared browser of tests/live stops before a test that does not use it."""
    if "chromium" not in item.fixturenames:
        SHARED_CHROMIUM.stop()


def pytest_sessionfinish(session):
    SHARED_CHROMIUM.stop()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SQLITE_LANE):
            item.add_marker(pytest.mark.sqlite)


@pytest.fixture(scope="session", autouse=True)
def collected_static():
    """Tests run with DEBUG off, as in production: the manifest storage needs collectstatic."""
    call_command("collectstatic", "--noinput", verbosity=0)
    return settings.STATIC_ROOT


@pytest.fixture(autouse=True)
def fresh_local_cache():
    """Without Redis the cache is this process's memory, and SQLite hands a rolled-back
    test's ids to the next test: one test's throttle history would count against the next
    one's user. (Redis, shared by the workers, is left alone: ids never repeat there.)"""
    if isinstance(caches["default"], LocMemCache):
        caches["default"].clear()


@pytest.fixture
def owner(db):
    return UserFactory(username="olivia")


@pytest.fixture
def workflow(owner):
    workflow = WorkflowFactory(name="Delivery")
    MembershipFactory(workspace=workflow.workspace, user=owner, role=Role.OWNER)
    return workflow


@pytest.fixture
def board(workflow):
    """Backlog (start) -> In Progress (limit 2, pulls from Backlog) -> Done, kinds as named."""
    return factories.board(workflow)


@pytest.fixture
def make_task(owner):
    def make(step, title="Task", **kwargs):
        actor = kwargs.pop("actor", owner)
        return task_create(workflow=step.workflow, step=step, actor=actor, title=title, **kwargs).task

    return make


@pytest.fixture
def api(owner):
    client = APIClient()
    client.force_authenticate(owner)
    return client


def member_client(workspace, role):
    user = UserFactory()
    MembershipFactory(workspace=workspace, user=user, role=role)
    client = APIClient()
    client.force_authenticate(user)
    return client


def board_state(workflow):
    """(tasks, history events, version) of a board: equal before and after means nothing persisted."""
    return (
        Task.objects.filter(workflow=workflow).count(),
        TaskEvent.objects.filter(workflow=workflow).count(),
        Workflow.objects.get(pk=workflow.pk).version,
    )
