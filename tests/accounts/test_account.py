"""A person runs their own account: GET/PATCH /api/v1/me/, API tokens by the API and by the
page, the profile page, open sign-up, and the 404 page (never Django's URL list)."""

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

from accounts.models import NOTIFY_KINDS, ApiToken, Profile
from accounts.profiles import profile_of
from common.errors import server_error
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_throttle():
    cache.clear()  # token creation and sign-ups are throttled
    yield
    cache.clear()


@pytest.fixture
def ana():
    return UserFactory(username="ana", email="ana@example.com")


@pytest.fixture
def api(ana):
    client = APIClient()
    client.force_authenticate(ana)
    return client


@pytest.fixture
def browser(ana, pages):
    client = Client()
    client.force_login(ana)
    return client


class TestMe:
    def test_reads_the_account_with_every_kind_of_news_at_its_default(self, api):
        body = api.get("/api/v1/me/").json()

        assert body == {
            "username": "ana",
            "name": "",
            "email": "ana@example.com",
            "time_zone": "UTC",
            "theme": "system",
            "notify": dict.fromkeys(NOTIFY_KINDS, "inbox"),
        }

    def test_a_patch_changes_what_it_names_and_keeps_the_rest(self, api, ana):
        api.patch("/api/v1/me/", {"notify": {"mentioned": "both"}}, format="json")
        changed = api.patch(
            "/api/v1/me/",
            {"name": "Ana Lima", "time_zone": "Europe/Lisbon", "notify": {"due": "off"}, "theme": "dark"},
            format="json",
        )

        assert changed.status_code == 200
        body = changed.json()
        assert body["name"] == "Ana Lima" and body["time_zone"] == "Europe/Lisbon" and body["theme"] == "dark"
        assert body["notify"]["mentioned"] == "both" and body["notify"]["due"] == "off"
        assert body["notify"]["assigned"] == "inbox"
        assert api.get("/api/v1/me/").json() == body

    def test_a_new_email_is_unconfirmed_and_one_in_use_is_refused(self, api, ana):
        Profile.objects.create(user=ana, email_verified=True)
        UserFactory(username="bo", email="bo@example.com")

        taken = api.patch("/api/v1/me/", {"email": "BO@example.com"}, format="json")
        moved = api.patch("/api/v1/me/", {"email": "ana@elsewhere.example"}, format="json")

        assert taken.status_code == 400
        assert taken.json()["errors"]["email"] == ["Another account already uses this e-mail address."]
        assert moved.status_code == 200
        assert not profile_of(ana).email_verified

    def test_no_email_reads_as_null_and_null_clears_it(self, api, ana):
        cleared = api.patch("/api/v1/me/", {"email": None}, format="json")

        assert cleared.status_code == 200 and cleared.json()["email"] is None
        ana.refresh_from_db()
        assert ana.email == ""

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"notify": {"mentioned": "loudly"}}, "notify"),
            ({"notify": {"gossip": "email"}}, "notify"),
            ({"notify": ["mentioned"]}, "notify"),
            ({"notify": {f"kind{i}": "off" for i in range(50)}}, "notify"),
            ({"time_zone": "Mars/Olympus_Mons"}, "time_zone"),
            ({"name": "x" * 151}, "name"),
            ({"email": "not an address"}, "email"),
            ({"theme": "sepia"}, "theme"),
        ],
    )
    def test_bad_values_are_400_with_field_errors(self, api, body, field):
        answer = api.patch("/api/v1/me/", body, format="json")

        assert answer.status_code == 400
        assert field in answer.json()["errors"]

    def test_the_username_cannot_be_changed_here(self, api, ana):
        api.patch("/api/v1/me/", {"username": "queen"}, format="json")

        ana.refresh_from_db()
        assert ana.username == "ana"

    def test_it_needs_a_signed_in_person(self, db):
        assert APIClient().get("/api/v1/me/").status_code in (401, 403)


class TestTokensApi:
    def test_create_shows_the_key_once_list_never_and_delete_revokes(self, api, ana):
        made = api.post("/api/v1/tokens/", {"name": "CI"}, format="json")
        key = made.json()["key"]

        listed = api.get("/api/v1/tokens/").json()["results"]
        with_key = APIClient(HTTP_AUTHORIZATION=f"Token {key}")
        works = with_key.get("/api/v1/me/")
        revoked = api.delete(f"/api/v1/tokens/{made.json()['id']}/")

        assert made.status_code == 201
        assert [t["name"] for t in listed] == ["CI"] and "key" not in listed[0]
        assert works.status_code == 200 and works.json()["username"] == "ana"
        assert revoked.status_code == 204
        assert with_key.get("/api/v1/me/").status_code == 401

    def test_another_persons_token_is_not_found(self, api):
        theirs, _ = ApiToken.issue(user=UserFactory(username="bo"), name="bo's")

        assert api.delete(f"/api/v1/tokens/{theirs.pk}/").status_code == 404
        theirs.refresh_from_db()
        assert theirs.revoked_at is None


class TestProfilePage:
    def test_saving_the_profile_changes_the_account_and_confirms(self, browser, ana):
        form = {
            "name": "Ana Lima",
            "email": "ana@example.com",
            "time_zone": "America/Sao_Paulo",
            "theme": "dark",
            **{f"notify_{kind}": "email" for kind in NOTIFY_KINDS},
        }

        saved = browser.post("/accounts/profile/", form, follow=True)

        assert saved.status_code == 200 and "Your profile was saved." in saved.text
        assert 'data-theme="dark"' in saved.text  # the page wears the choice at once
        profile = profile_of(ana)
        assert (profile.name, profile.time_zone, profile.theme) == ("Ana Lima", "America/Sao_Paulo", "dark")
        assert profile.notify_choices() == dict.fromkeys(NOTIFY_KINDS, "email")

    def test_errors_are_worded_for_people(self, browser):
        answer = browser.post("/accounts/profile/", {"name": "x" * 200, "email": "nope", "time_zone": "Nowhere"})

        assert answer.status_code == 400
        text = answer.content.decode()
        assert "Your name can be at most 150 characters long." in text
        assert "Enter an e-mail address, like ana@example.com." in text
        assert "Choose a time zone from the list." in text
        assert "Ensure this" not in text and "Select a valid choice" not in text

    def test_the_page_needs_a_signed_in_person(self, pages, db):
        answer = Client().get("/accounts/profile/")

        assert answer.status_code == 302 and answer.url.startswith("/accounts/login/")


class TestTokensPage:
    def test_a_token_made_on_the_page_is_shown_once_and_revoked_there(self, browser, ana):
        made = browser.post("/accounts/tokens/", {"name": "laptop"})
        [token] = ApiToken.objects.filter(user=ana)
        key = made.context["issued"]["key"]

        again = browser.get("/accounts/tokens/")
        revoked = browser.post("/accounts/tokens/", {"action": "revoke", "token_id": token.pk}, follow=True)

        assert made.status_code == 200 and key in made.text and "shown only this once" in made.text
        assert key not in again.text and token.prefix in again.text
        assert "was revoked" in revoked.text
        token.refresh_from_db()
        assert token.revoked_at is not None

    def test_a_nameless_or_overlong_name_is_refused_in_words(self, browser):
        empty = browser.post("/accounts/tokens/", {"name": ""})
        long = browser.post("/accounts/tokens/", {"name": "n" * 101})

        assert empty.status_code == 400 and "Enter a token&#x27;s name." in empty.text
        assert long.status_code == 400 and "at most 100 characters" in long.text

    def test_someone_elses_token_is_not_found(self, browser):
        theirs, _ = ApiToken.issue(user=UserFactory(username="bo"))

        assert browser.post("/accounts/tokens/", {"action": "revoke", "token_id": theirs.pk}).status_code == 404
        assert browser.post("/accounts/tokens/", {"action": "revoke", "token_id": "x'"}).status_code == 404


class TestSignUp:
    def test_off_by_default_and_the_login_page_does_not_offer_it(self, pages, db, settings):
        settings.KANDEV_OPEN_SIGNUP = False

        assert Client().get("/accounts/signup/").status_code == 404
        login = Client().get("/accounts/login/").text
        assert "/accounts/signup/" not in login and "Forgot your password?" in login

    def test_open_sign_up_asks_for_an_email_and_signs_in(self, pages, db, settings):
        settings.KANDEV_OPEN_SIGNUP = True
        client = Client()
        assert "/accounts/signup/" in client.get("/accounts/login/").text
        password = "a-long-and-fresh-password-7"

        made = client.post(
            "/accounts/signup/",
            {"username": "cy", "email": "cy@example.com", "password1": password, "password2": password},
        )

        assert made.status_code == 302
        user = get_user_model().objects.get(username="cy")
        assert user.email == "cy@example.com" and user.check_password(password)
        assert client.get("/api/v1/me/").json()["username"] == "cy"

    def test_an_email_in_use_or_missing_is_refused(self, pages, db, settings, ana):
        settings.KANDEV_OPEN_SIGNUP = True
        password = "a-long-and-fresh-password-7"

        taken = Client().post(
            "/accounts/signup/",
            {"username": "cy", "email": "ANA@example.com", "password1": password, "password2": password},
        )
        missing = Client().post("/accounts/signup/", {"username": "cy", "password1": password, "password2": password})

        assert taken.status_code == 400 and "An account with this e-mail already exists." in taken.text
        assert missing.status_code == 400 and "Enter your e-mail." in missing.text
        assert not get_user_model().objects.filter(username="cy").exists()

    def test_sign_ups_from_one_address_are_throttled(self, pages, db, settings):
        settings.KANDEV_OPEN_SIGNUP, settings.KANDEV_SIGNUP_MAX = True, 2
        attempt = {"username": "cy", "password1": "short", "password2": "short"}  # refused, yet counted

        tries = [Client(REMOTE_ADDR="10.7.7.7").post("/accounts/signup/", attempt) for _ in range(3)]

        assert [t.status_code for t in tries] == [400, 400, 429]
        assert int(tries[-1].headers["Retry-After"]) == 3600
        assert Client(REMOTE_ADDR="10.8.8.8").post("/accounts/signup/", attempt).status_code == 400


class TestNotFound:
    @pytest.mark.parametrize("debug", [False, True])
    def test_an_unknown_page_is_kandevs_own_404_and_lists_no_urls(self, pages, db, settings, debug):
        settings.DEBUG = debug

        page = Client().get("/no/such/page/")
        api = Client().get("/api/v1/no-such-thing/")

        assert page.status_code == 404 and "Page not found" in page.text
        assert "api/v1/" not in page.text and "URLconf" not in page.text
        assert api.status_code == 404 and api.json() == {"code": "not_found", "detail": "Not found."}


def test_a_server_error_is_kandevs_own_page(pages, db):
    answer = server_error(RequestFactory().get("/workflows/"))

    assert answer.status_code == 500
    page = answer.content.decode()
    assert "Something went wrong" in page and "what you saved before is kept" in page
