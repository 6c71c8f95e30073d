"""Look-alike usernames (Unicode TR39 skeletons, case-insensitive): a new account may not take
a name that reads like an existing one, wherever accounts are made — sign-up through an
invite link, the admin, createsuperuser."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from teams.services import invite_create
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workflows.models import Role

pytestmark = pytest.mark.django_db
PASSPHRASE = "a-long-passphrase-1"
CYRILLIC_A = "\u0430"
LOOKALIKE = "looks too much like an existing username"
TAKEN = "A user with that username already exists."  # Django's own, case-insensitive


def exists(username: str) -> bool:
    return get_user_model().objects.filter(username=username).exists()


@pytest.fixture
def alice():
    return UserFactory(username="alice")


def sign_up_through_an_invite(username: str):
    workspace = WorkspaceFactory()
    owner = MembershipFactory(workspace=workspace, role=Role.OWNER).user
    _, token = invite_create(workspace=workspace, role=Role.MEMBER, actor=owner)
    browser = Client()
    browser.get(f"/invites/{token}/")
    email = f"{username.encode().hex()}@example.com"  # an address of its own for each name
    form = {"username": username, "email": email, "password1": PASSPHRASE, "password2": PASSPHRASE}
    return browser.post("/invites/accept/", form)


@pytest.mark.parametrize(
    ("username", "why"),
    [
        (f"{CYRILLIC_A}lice", LOOKALIKE),  # a Cyrillic а
        ("aIice", LOOKALIKE),  # a capital I for the l
        (f"{CYRILLIC_A}LICE", LOOKALIKE),  # both, and in capitals
        ("Alice", TAKEN),
    ],
)
def test_signing_up_as_a_lookalike_of_an_existing_name_is_refused(alice, username, why):
    page = sign_up_through_an_invite(username)
    assert page.status_code == 400
    assert why in page.content.decode()
    assert not exists(username)


def test_a_name_that_merely_resembles_one_is_fine(alice):
    assert sign_up_through_an_invite("alicia").status_code == 302
    assert exists("alicia")


def test_the_admin_refuses_a_lookalike(alice):
    admin = Client()
    admin.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    username = f"{CYRILLIC_A}lice"
    page = admin.post("/admin/auth/user/add/", {"username": username, "password1": PASSPHRASE, "password2": PASSPHRASE})
    assert LOOKALIKE in page.content.decode()
    assert not exists(username)


def test_the_admin_still_saves_an_existing_user(alice):
    admin = Client()
    admin.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    page = admin.post(
        f"/admin/auth/user/{alice.pk}/change/",
        {"username": "alice", "first_name": "Alice", "is_active": "on", "date_joined_0": "2026-01-01"}
        | {"date_joined_1": "00:00:00", "initial-date_joined_0": "2026-01-01", "initial-date_joined_1": "00:00:00"},
    )
    assert page.status_code == 302, page.content.decode()[:2000]
    alice.refresh_from_db()
    assert alice.first_name == "Alice"


def test_createsuperuser_refuses_a_lookalike(alice, monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", PASSPHRASE)
    username = f"{CYRILLIC_A}lice"
    with pytest.raises(CommandError, match=LOOKALIKE):
        call_command("createsuperuser", interactive=False, username=username, email="a@example.com", verbosity=0)
    assert not exists(username)
