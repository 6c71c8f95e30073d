"""Which client address the sign-in throttle counts behind a reverse proxy: uvicorn takes it
from X-Forwarded-For only when the connection comes from an address in FORWARDED_ALLOW_IPS
(default: loopback). A proxy on another host must be named there, or every client shares the
proxy's address (README, "Production")."""

import httpx
import pytest

from tests.factories import UserFactory
from tests.servers import Server, serving_test_database

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]  # server processes


def failed_sign_in(base: str, forwarded_for: str) -> int:
    """A wrong password from the client a proxy names in X-Forwarded-For (the proxy is this
    process, on loopback)."""
    headers = {"X-Forwarded-For": forwarded_for}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        client.get("/accounts/login/")
        form = {"username": "staffer", "password": "wrong", "csrfmiddlewaretoken": client.cookies["csrftoken"]}
        return client.post("/accounts/login/", data=form).status_code


def statuses(trusted: str) -> list[int]:
    """Sign-in failures through a proxy on loopback, the limit being 2 per address: two from
    one client, one from another, one from a client that put the first one's address in
    front of its own (the proxy appends the real one), then the first client again."""
    env = serving_test_database(KANDEV_LOGIN_MAX_FAILURES="2", FORWARDED_ALLOW_IPS=trusted, REDIS_URL="")
    clients = ["203.0.113.1", "203.0.113.1", "203.0.113.2", "203.0.113.1, 203.0.113.3", "203.0.113.1"]
    with Server(env) as server:
        return [failed_sign_in(server.url, forwarded_for) for forwarded_for in clients]


def test_a_trusted_proxy_gives_each_client_its_own_count_and_an_untrusted_one_shares_one():
    UserFactory(username="staffer")
    # The proxy named in FORWARDED_ALLOW_IPS: each client counts apart, and only the first,
    # at its limit, is refused; a forged address in front is not the one counted.
    assert statuses(trusted="127.0.0.1") == [200, 200, 200, 200, 429]
    # The proxy not named (as one on another host is by default): every client is the
    # proxy, and once two have failed all are refused.
    assert statuses(trusted="192.0.2.1") == [200, 200, 429, 429, 429]
