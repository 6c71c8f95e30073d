"""A person runs their own account in headless Chromium, against a server of its own with
open sign-up and a real SMTP server on loopback: signs up with an e-mail, fills in the
profile, picks dark mode, makes an API token and revokes it, changes the password, forgets
it and resets it from the mail. Driven by roles and accessible names; axe on every page,
in light and dark."""

import re
import threading
from email import message_from_bytes

import httpx
import pytest
from aiosmtpd.controller import Controller
from django.contrib.auth import get_user_model
from django.core.cache import cache
from playwright.sync_api import expect

from accounts.models import ApiToken
from accounts.profiles import profile_of
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from tests.servers import Server, free_port, serving_test_database
from workflows.models import Role

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LINK = re.compile(r"https?://[^/\s]+(/accounts/reset/[^/\s]+/[^/\s]+/)")
PASSWORD, NEW_PASSWORD, RESET_PASSWORD = "a long passphrase for rosa", "rosa's second passphrase", "rosa, third time"
LIGHT_BG, DARK_BG = "rgb(244, 245, 248)", "rgb(18, 20, 25)"


class Inbox:
    def __init__(self):
        self.arrived = threading.Event()
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(message_from_bytes(envelope.original_content))
        self.arrived.set()
        return "250 Message accepted for delivery"


@pytest.fixture
def inbox():
    inbox = Inbox()
    smtp = Controller(inbox, hostname="127.0.0.1", port=free_port())
    smtp.start()
    inbox.port = smtp.port
    yield inbox
    smtp.stop()


@pytest.fixture
def server(inbox, transactional_db):
    env = serving_test_database(
        DEBUG="1",
        KANDEV_OPEN_SIGNUP="1",
        EMAIL_URL=f"smtp://127.0.0.1:{inbox.port}/",
        DEFAULT_FROM_EMAIL="kandev <noreply@kandev.test>",
    )
    cache.clear()  # sign-ups and resets are counted per address, in the cache both processes share
    with Server(env) as running:
        yield running
    cache.clear()


def has_background(page, color: str) -> None:
    """The page's background, once its stylesheet applies (waited for, not read at once)."""
    expect(page.locator("html")).to_have_css("background-color", color)


def test_a_person_runs_their_own_account(server, chromium, axe, inbox):
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        # The login page offers sign-up and a forgotten password
        page.goto(f"{server.url}/accounts/login/")
        axe(page, "the login page")
        has_background(page, LIGHT_BG)
        page.get_by_role("link", name="Create an account").click()

        # Sign-up asks for an e-mail; its errors are worded for people
        expect(page.get_by_role("heading", name="Create an account")).to_be_visible()
        page.get_by_label("Username").fill("rosa")
        page.get_by_label("E-mail").fill("not-an-address")
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_label("Password confirmation").fill(PASSWORD)
        page.get_by_role("button", name="Create the account").click()
        expect(page.get_by_role("alert")).to_have_text("Enter an e-mail address, like ana@example.com.")
        axe(page, "the sign-up page with an error")
        page.get_by_label("E-mail").fill("rosa@example.com")
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_label("Password confirmation").fill(PASSWORD)
        page.get_by_role("button", name="Create the account").click()
        page.wait_for_url(f"{server.url}/")

        # The profile: name, time zone, dark mode, a notification choice
        page.get_by_role("link", name="rosa").click()
        expect(page.get_by_role("heading", name="Your profile")).to_be_visible()
        axe(page, "the profile page")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing overflows at 390 px
        page.get_by_label("Name").fill("Rosa Parra")
        page.get_by_label("Time zone").select_option("America/Bogota")
        page.get_by_role("group", name="Appearance").get_by_label("Dark").check()
        page.get_by_label("Someone mentions me").select_option(label="In kandev and by e-mail")
        page.get_by_role("button", name="Save the profile").click()
        expect(page.get_by_role("status")).to_have_text("Your profile was saved.")
        has_background(page, DARK_BG)
        axe(page, "the profile page in dark mode")
        rosa = get_user_model().objects.get(username="rosa")
        profile = profile_of(rosa)
        assert (rosa.email, profile.name, profile.time_zone, profile.theme) == (
            "rosa@example.com",
            "Rosa Parra",
            "America/Bogota",
            "dark",
        )
        assert profile.notify_choices()["mentioned"] == "both"

        # An API token: made with a name, its key shown once, then revoked
        page.get_by_role("navigation", name="Your account").get_by_role("link", name="API tokens").click()
        axe(page, "the tokens page")
        page.get_by_label("Name").fill("my laptop")
        page.get_by_role("button", name="Create the token").click()
        key = page.get_by_label("Key").input_value()
        with httpx.Client(base_url=server.url) as api:
            assert api.get("/api/v1/me/", headers={"Authorization": f"Token {key}"}).json()["name"] == "Rosa Parra"
            axe(page, "the tokens page with a new key")
            page.get_by_role("button", name="Revoke my laptop").click()
            expect(page.get_by_role("status")).to_contain_text("was revoked")
            assert api.get("/api/v1/me/", headers={"Authorization": f"Token {key}"}).status_code == 401
        assert ApiToken.objects.get(user=rosa).revoked_at is not None
        assert page.evaluate("document.documentElement.scrollWidth") <= 390

        # The members page of a workspace of hers fits the phone's width too
        workspace = WorkspaceFactory(name="Rosa's team")
        MembershipFactory(workspace=workspace, user=rosa, role=Role.OWNER)
        MembershipFactory(workspace=workspace, user=UserFactory(username="a-member-with-a-long-name"))
        page.goto(f"{server.url}/workspaces/{workspace.pk}/members/")
        expect(page.get_by_role("heading", name="Members of Rosa's team")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        axe(page, "the members page at 390 px, dark")
        page.goto(f"{server.url}/accounts/tokens/")

        # The password, changed in the product's own page
        page.get_by_role("link", name="Password").click()
        axe(page, "the password change page")
        page.get_by_label("Old password").fill(PASSWORD)
        page.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
        page.get_by_label("New password confirmation").fill(NEW_PASSWORD)
        page.get_by_role("button", name="Change the password").click()
        expect(page.get_by_role("heading", name="Password changed")).to_be_visible()

        # An unknown page is kandev's own, even on this development (DEBUG) server
        page.goto(f"{server.url}/no/such/page/")
        expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
        assert "URLconf" not in page.content()
        axe(page, "the 404 page")

        # Forgotten: a reset link arrives by mail (a real SMTP server) and sets a new one
        page.get_by_role("button", name="Log out").click()
        page.goto(f"{server.url}/accounts/login/")
        page.get_by_role("link", name="Forgot your password?").click()
        axe(page, "the password reset page")
        page.get_by_label("E-mail").fill("rosa@example.com")
        page.get_by_role("button", name="Send the link").click()
        expect(page.get_by_role("heading", name="Check your e-mail")).to_be_visible()
        assert inbox.arrived.wait(timeout=30), server.log()
        [mail] = inbox.messages
        assert mail["To"] == "rosa@example.com" and mail["Subject"] == "Reset your kandev password"
        page.goto(server.url + LINK.search(mail.get_payload(decode=True).decode()).group(1))
        expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
        axe(page, "the new password page")
        page.get_by_label("New password", exact=True).fill(RESET_PASSWORD)
        page.get_by_label("New password confirmation").fill(RESET_PASSWORD)
        page.get_by_role("button", name="Set the password").click()
        expect(page.get_by_role("status")).to_contain_text("your e-mail address is confirmed")
        page.get_by_role("link", name="Log in").click()
        page.get_by_label("Username").fill("rosa")
        page.get_by_label("Password").fill(RESET_PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(f"{server.url}/")
        has_background(page, DARK_BG)  # the account's choice, from any browser
        assert profile_of(rosa).email_verified
    finally:
        context.close()


def test_the_system_dark_preference_darkens_every_page(server, chromium, axe):
    context = chromium.new_context(color_scheme="dark")
    page = context.new_page()
    try:
        for path, what in [("/accounts/login/", "the login page"), ("/accounts/signup/", "the sign-up page")]:
            page.goto(f"{server.url}{path}")
            has_background(page, DARK_BG)
            axe(page, f"{what}, dark")
    finally:
        context.close()
