"""API tokens (hashed, shown once, revocable), throttled sign-in and token creation,
CSRF on session writes, and no secret in responses or logs."""

import logging

import httpx
import pytest
from django.core import mail
from django.core.cache import cache
from rest_framework.test import APIClient

from accounts.models import ApiToken, hash_token
from tests.factories import UserFactory
from tests.faults.test_redis_outage import PrivateRedis
from tests.servers import Server, serving_test_database

PASSWORD = "pw-for-tests-only"


@pytest.fixture(autouse=True)
def fresh_counters():
    cache.clear()
    yield
    cache.clear()


def token_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_token_is_shown_once_stored_hashed_and_revocable(api, owner):
    created = api.post("/api/v1/tokens/", {"name": "laptop"}, format="json")
    assert created.status_code == 201
    key = created.json()["key"]
    stored = ApiToken.objects.get(pk=created.json()["id"])
    assert stored.key_hash == hash_token(key) and stored.prefix == key[:8]
    assert token_client(key).get("/api/v1/workspaces/").status_code == 200

    listed = api.get("/api/v1/tokens/").json()["results"]
    assert [t["name"] for t in listed] == ["laptop"]
    assert set(listed[0]) == {"id", "name", "prefix", "workspace_id", "created_at", "last_used_at", "revoked_at"}
    assert key not in str(listed)

    assert api.delete(f"/api/v1/tokens/{stored.pk}/").status_code == 204
    refused = token_client(key).get("/api/v1/workspaces/")
    assert refused.status_code == 401
    assert refused.json() == {"code": "authentication_failed", "detail": "Invalid or revoked token."}
    assert api.get("/api/v1/tokens/").json()["results"][0]["revoked_at"] is not None


def test_tokens_of_others_are_invisible_and_cannot_be_revoked(api):
    other, key = ApiToken.issue(user=UserFactory(), name="theirs")
    assert api.get("/api/v1/tokens/").json()["count"] == 0
    assert api.delete(f"/api/v1/tokens/{other.pk}/").status_code == 404
    assert api.delete("/api/v1/tokens/not-an-id/").status_code == 404
    assert token_client(key).get("/api/v1/workspaces/").status_code == 200


def test_a_revoked_token_cannot_revoke_or_mint(owner):
    token, key = ApiToken.issue(user=owner)
    client = token_client(key)
    assert client.delete(f"/api/v1/tokens/{token.pk}/").status_code == 204
    assert client.post("/api/v1/tokens/", {"name": "again"}, format="json").status_code == 401
    assert ApiToken.objects.active().count() == 0


def test_token_creation_is_throttled(api, owner, settings):
    settings.KANDEV_TOKEN_CREATE_RATE = "3/hour"
    statuses = [api.post("/api/v1/tokens/", {}, format="json").status_code for _ in range(4)]
    assert statuses == [201, 201, 201, 429]
    refused = api.post("/api/v1/tokens/", {}, format="json")
    assert refused.json()["code"] == "throttled"
    assert int(refused.headers["Retry-After"]) > 0
    assert ApiToken.objects.filter(user=owner).count() == 3
    assert api.get("/api/v1/tokens/").status_code == 200  # only creation is throttled


def sign_in(client, username, password):
    return client.post("/admin/login/", {"username": username, "password": password})


def test_an_address_that_keeps_failing_is_refused_for_every_account(db, settings, pages):
    settings.KANDEV_LOGIN_MAX_FAILURES = 3
    UserFactory(username="staffer", is_staff=True)
    UserFactory(username="boss", is_staff=True)
    attacker = APIClient(REMOTE_ADDR="10.9.9.9")
    failures = [sign_in(attacker, "staffer", "wrong").status_code for _ in range(3)]
    assert failures == [200, 200, 200]  # the form again, with its error
    blocked = sign_in(attacker, "boss", PASSWORD)
    assert blocked.status_code == 429
    assert int(blocked.headers["Retry-After"]) == settings.KANDEV_LOGIN_WINDOW_SECONDS
    cache.clear()  # the window passed
    assert sign_in(attacker, "boss", PASSWORD).status_code == 302


@pytest.mark.parametrize("path", ["/admin/login/", "/accounts/login/"])
def test_nobody_can_lock_a_person_out_of_their_account(db, settings, pages, path):
    settings.KANDEV_LOGIN_MAX_FAILURES = 3
    UserFactory(username="staffer", is_staff=True)
    for n in range(20):  # many addresses, each below its own limit, all on one account
        attacker = APIClient(REMOTE_ADDR=f"10.0.0.{n}")
        for _ in range(2):
            attacker.post(path, {"username": "staffer", "password": "wrong"})
    owner = APIClient(REMOTE_ADDR="192.0.2.7")
    assert owner.post(path, {"username": "staffer", "password": PASSWORD}).status_code == 302


def test_on_an_attacked_account_an_address_that_failed_must_wait_between_tries(db, settings, pages):
    settings.KANDEV_LOGIN_MAX_FAILURES = 3
    UserFactory(username="staffer", is_staff=True)
    for n in range(3):
        assert sign_in(APIClient(REMOTE_ADDR=f"10.0.0.{n}"), "staffer", "wrong").status_code == 200
    again = sign_in(APIClient(REMOTE_ADDR="10.0.0.2"), "staffer", PASSWORD)  # failed at the limit
    assert again.status_code == 429
    assert int(again.headers["Retry-After"]) == settings.KANDEV_LOGIN_ACCOUNT_BACKOFF_SECONDS
    earlier = APIClient(REMOTE_ADDR="10.0.0.1")
    assert [sign_in(earlier, "staffer", "wrong").status_code for _ in range(2)] == [200, 429]
    assert sign_in(APIClient(REMOTE_ADDR="10.0.0.9"), "staffer", PASSWORD).status_code == 302


def request_reset(client, email):
    return client.post("/accounts/password_reset/", {"email": email})


def test_password_reset_requests_are_throttled_per_address_and_per_email(db, settings, pages):
    settings.KANDEV_PASSWORD_RESET_MAX = 2
    settings.KANDEV_CAN_SEND_EMAIL = True  # the outbox (pytest-django's locmem backend)
    UserFactory(username="staffer", email="staffer@example.com")
    asker = APIClient(REMOTE_ADDR="10.9.9.9")
    assert [request_reset(asker, "staffer@example.com").status_code for _ in range(2)] == [302, 302]
    refused = request_reset(asker, "other@example.com")
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) == settings.KANDEV_PASSWORD_RESET_WINDOW_SECONDS
    elsewhere = APIClient(REMOTE_ADDR="10.1.1.1")
    assert request_reset(elsewhere, "staffer@example.com").status_code == 429  # no mail-bombing
    assert request_reset(elsewhere, "other@example.com").status_code == 302
    assert len(mail.outbox) == 2


@pytest.mark.django_db(transaction=True)
def test_sign_in_failures_count_across_server_processes(pages):
    """Two servers, one process each, sharing Redis: together they allow only the limit."""
    UserFactory(username="staffer")
    redis = PrivateRedis()
    redis.start()
    try:
        env = {"REDIS_URL": redis.url, "KANDEV_LOGIN_MAX_FAILURES": "4"}
        with Server(serving_test_database(**env)) as first, Server(serving_test_database(**env)) as second:
            statuses = [login_over_http(server.url, "wrong") for server in (first, second) * 3]
    finally:
        redis.stop()
    assert statuses == [200, 200, 200, 200, 429, 429]


def login_over_http(base: str, password: str) -> int:
    with httpx.Client(base_url=base, timeout=30) as client:
        client.get("/accounts/login/")
        form = {"username": "staffer", "password": password, "csrfmiddlewaretoken": client.cookies["csrftoken"]}
        return client.post("/accounts/login/", data=form).status_code


def test_session_writes_need_the_csrf_token(board, pages):
    backlog, _, _ = board
    client = APIClient(enforce_csrf_checks=True)
    client.login(username="olivia", password=PASSWORD)
    body = {"step_id": str(backlog.pk), "title": "via session"}
    refused = client.post("/api/v1/tasks/", body, format="json")
    assert refused.status_code == 403
    assert refused.json()["code"] == "permission_denied"
    assert "CSRF" in refused.json()["detail"]
    client.get("/admin/login/")  # any page that sets the cookie
    token = client.cookies["csrftoken"].value
    accepted = client.post("/api/v1/tasks/", body, format="json", HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 201
    # API tokens are not ambient credentials: no CSRF token needed.
    _, key = ApiToken.issue(user=backlog.workflow.workspace.memberships.get().user)
    assert token_client(key).post("/api/v1/tasks/", body, format="json").status_code == 201


def test_keys_never_reach_logs_or_error_bodies(board, owner, caplog):
    backlog, doing, _ = board
    _, key = ApiToken.issue(user=owner)
    caplog.set_level(logging.DEBUG)
    client = token_client(key)
    for _ in range(3):
        client.post("/api/v1/tasks/", {"step_id": str(doing.pk), "title": "x"}, format="json")
    bad = token_client(key[:-1] + ("0" if key[-1] != "0" else "1"))
    responses = [
        client.post("/api/v1/tasks/", {"step_id": "nope"}, format="json"),
        bad.get("/api/v1/workspaces/"),
        client.get("/api/v1/tokens/"),
        client.get("/api/v1/tokens/999999/"),
    ]
    assert [r.status_code for r in responses] == [400, 401, 200, 405]
    for response in responses:
        assert key[:12] not in response.content.decode()
    assert key[:12] not in caplog.text
