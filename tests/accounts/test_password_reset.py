"""Password reset by e-mail: the page says so when this server cannot send mail; otherwise
the mail carries a working link, and a server configured by EMAIL_URL delivers it through a
real SMTP server (aiosmtpd on loopback)."""

import re
import threading
from email import message_from_bytes

import httpx
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.cache import cache
from django.test import Client

from tests.factories import UserFactory
from tests.servers import Server, free_port, serving_test_database

CANNOT_SEND = "This server cannot send e-mail"
RESET = "/accounts/password_reset/"
LINK = re.compile(r"https?://[^/\s]+(/accounts/reset/[^/\s]+/[^/\s]+/)")


@pytest.fixture(autouse=True)
def fresh_throttle():
    cache.clear()  # password reset requests are throttled per address
    yield
    cache.clear()


def test_without_mail_the_reset_page_says_so_and_sends_nothing(db, settings, pages):
    settings.KANDEV_CAN_SEND_EMAIL = False
    UserFactory(username="rita", email="rita@example.com")
    client = Client()

    page = client.get(RESET)
    asked = client.post(RESET, {"email": "rita@example.com"})

    assert page.status_code == 200
    assert CANNOT_SEND in page.text and "ask your administrator" in page.text
    assert 'name="email"' not in page.text  # no form that pretends to send a link
    assert asked.status_code == 503 and CANNOT_SEND in asked.text
    assert mail.outbox == []


def test_the_reset_mail_carries_a_link_that_sets_a_new_password(db, settings, pages):
    settings.KANDEV_CAN_SEND_EMAIL = True
    settings.DEFAULT_FROM_EMAIL = "kandev <noreply@kandev.test>"
    UserFactory(username="rita", email="rita@example.com")
    client = Client()

    assert client.get(RESET).status_code == 200
    asked = client.post(RESET, {"email": "rita@example.com"})

    assert asked.status_code == 302 and asked.url == "/accounts/password_reset/done/"
    [sent] = mail.outbox
    assert sent.to == ["rita@example.com"] and sent.from_email == "kandev <noreply@kandev.test>"
    assert "rita" in sent.body
    link = LINK.search(sent.body).group(1)
    form = client.get(link, follow=True)
    assert form.status_code == 200 and "new_password1" in form.text
    new = "a-new-and-long-password-42"
    done = client.post(form.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert done.status_code == 302 and done.url == "/accounts/reset/done/"
    assert get_user_model().objects.get(username="rita").check_password(new)


class Inbox:
    """aiosmtpd's handler: keeps what arrives and who signed in to send it."""

    def __init__(self):
        self.arrived = threading.Event()
        self.envelopes = []
        self.logins = []

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        self.arrived.set()
        return "250 Message accepted for delivery"

    def authenticate(self, server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (b"kandev", b"s3cret")
        self.logins.append((mechanism, ok))
        return AuthResult(success=ok)


@pytest.mark.slow  # a server process
@pytest.mark.django_db(transaction=True)
def test_a_server_configured_by_email_url_sends_the_reset_mail_over_smtp():
    UserFactory(username="rita", email="rita@example.com")
    inbox = Inbox()
    smtp = Controller(
        inbox,
        hostname="127.0.0.1",
        port=free_port(),
        authenticator=inbox.authenticate,
        auth_require_tls=False,  # loopback only
    )
    smtp.start()
    env = {
        "EMAIL_URL": f"smtp://kandev:s3cret@127.0.0.1:{smtp.port}/",
        "DEFAULT_FROM_EMAIL": "kandev <noreply@kandev.test>",
    }
    try:
        with Server(serving_test_database(**env)) as server, httpx.Client(base_url=server.url, timeout=30) as client:
            form = client.get(RESET)
            token = client.cookies["csrftoken"]
            asked = client.post(RESET, data={"email": "rita@example.com", "csrfmiddlewaretoken": token})
            assert inbox.arrived.wait(timeout=30), server.log()
    finally:
        smtp.stop()

    assert form.status_code == 200 and CANNOT_SEND not in form.text
    assert asked.status_code == 302 and asked.headers["location"] == "/accounts/password_reset/done/"
    assert [ok for _, ok in inbox.logins] == [True]
    [envelope] = inbox.envelopes
    assert envelope.mail_from == "noreply@kandev.test" and envelope.rcpt_tos == ["rita@example.com"]
    message = message_from_bytes(envelope.original_content)
    assert message["To"] == "rita@example.com"
    assert LINK.search(message.get_payload(decode=True).decode())
