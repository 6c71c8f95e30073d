"""Sign-in with OpenID Connect against a real provider on loopback (oidc_provider.py):
mozilla-django-oidc's code flow with PKCE, the ID token's signature checked on the provider's
JWKS. An account is made, or found by a confirmed e-mail, never by an unconfirmed one."""

import re
from urllib.parse import urlsplit

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.cache import cache
from django.test import Client

from accounts import oidc
from accounts.profiles import profile_of
from tests.accounts.oidc_provider import Provider
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
LINK = re.compile(r"https?://[^/\s]+(/accounts/reset/[^/\s]+/[^/\s]+/)")


@pytest.fixture
def provider(settings, pages):
    cache.clear()
    with Provider(client_id="kandev", client_secret="s3cret") as running:
        settings.KANDEV_OIDC_ISSUER = running.url
        settings.KANDEV_OIDC_NAME = "Acme SSO"
        settings.OIDC_RP_CLIENT_ID, settings.OIDC_RP_CLIENT_SECRET = "kandev", "s3cret"
        oidc._discovered.clear()
        yield running
    oidc._discovered.clear()
    cache.clear()


def sign_in(client: Client, provider: Provider, **person) -> httpx.Response:
    """The browser's round trip: kandev → the provider (which approves at once) → kandev."""
    provider.person = {"sub": "sub-1", "email_verified": True, **person}
    to_provider = client.get("/accounts/oidc/start/")
    assert to_provider.status_code == 302 and to_provider.url.startswith(f"{provider.url}/authorize?")
    back = httpx.get(to_provider.url, follow_redirects=False)
    callback = urlsplit(back.headers["location"])
    return client.get(f"{callback.path}?{callback.query}", follow=True)


def test_a_new_person_gets_an_account_with_their_confirmed_email(provider):
    client = Client()

    landed = sign_in(client, provider, email="dee@acme.example", preferred_username="dee", name="Dee Ode")

    assert landed.status_code == 200
    user = get_user_model().objects.get(email="dee@acme.example")
    assert user.username == "dee" and not user.has_usable_password()
    assert profile_of(user).name == "Dee Ode" and profile_of(user).email_verified
    assert client.get("/api/v1/me/").json()["username"] == "dee"


def test_the_login_page_offers_it_and_an_unconfigured_server_does_not(provider, settings):
    assert "Log in with Acme SSO" in Client().get("/accounts/login/").text

    settings.KANDEV_OIDC_ISSUER = ""

    assert "Log in with" not in Client().get("/accounts/login/").text
    assert Client().get("/accounts/oidc/start/").status_code == 404


def test_an_unconfirmed_account_is_not_handed_over_until_its_email_is_proven(provider, settings):
    """Whoever signed up with dee's address first does not get her sign-ins; once the address
    is proven (a reset link from its mailbox), her provider sign-in reaches that account."""
    settings.KANDEV_CAN_SEND_EMAIL = True
    existing = UserFactory(username="dee-local", email="Dee@acme.example")
    client = Client()

    refused = sign_in(client, provider, email="dee@acme.example")

    assert "has not confirmed it" in refused.text
    assert client.get("/api/v1/me/").status_code in (401, 403)

    client.post("/accounts/password_reset/", {"email": "dee@acme.example"})
    link = LINK.search(mail.outbox[-1].body).group(1)
    form = client.get(link, follow=True)
    new = "a-new-and-long-password-42"
    client.post(form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert profile_of(existing).email_verified

    linked = sign_in(Client(), provider, email="dee@acme.example")
    assert linked.wsgi_request.user == existing


def test_an_email_the_provider_has_not_verified_signs_nobody_in(provider):
    client = Client()

    refused = sign_in(client, provider, email="eve@acme.example", email_verified=False)

    assert "no confirmed e-mail address" in refused.text
    assert not get_user_model().objects.filter(email="eve@acme.example").exists()


def test_an_id_token_meant_for_another_client_is_refused(provider):
    provider.audience = "another-client"
    client = Client()

    refused = sign_in(client, provider, email="dee@acme.example")

    assert "could not be verified" in refused.text
    assert client.get("/api/v1/me/").status_code in (401, 403)
    assert not get_user_model().objects.filter(email="dee@acme.example").exists()
