"""Review watches send their token only where its owner pointed it:
changing the destination needs the token again from the creator or an owner, and requests
go only to https on public addresses unless KANDEV_OUTBOUND_ALLOW names more."""

import socket

import pytest

from integrations.models import ReviewWatch
from integrations.watch import poll_watch, watch_create
from tests.conftest import member_client
from tests.factories import UserFactory
from tests.integrations.fake_github import FakeGitHub, Scripted
from workflows.models import Membership, Role

REPO = "acme/api"


def operator_watch(step, api_base_url, repositories=(REPO,)):
    """A watch an operator made (no actor), holding the creator's token for `api_base_url`."""
    return watch_create(
        workflow=step.workflow,
        step=step,
        actor=None,
        repositories=list(repositories),
        reviewer_login="rita",
        token="ghp-creator",
        api_base_url=api_base_url,
    )


@pytest.fixture
def github():
    with FakeGitHub(token="ghp-creator") as fake:
        yield fake


@pytest.fixture
def attacker():
    """The member's own server, where the stolen token would arrive."""
    with FakeGitHub() as fake:
        yield fake


def created_by(client, github, step, **extra):
    body = {
        "workflow_id": str(step.workflow_id),
        "step_id": str(step.pk),
        "repositories": [REPO],
        "reviewer_login": "rita",
        "token": github.token,
        "api_base_url": github.base_url,
        **extra,
    }
    response = client.post("/api/v1/review-watches/", body, format="json")
    assert response.status_code == 201, response.json()
    return ReviewWatch.objects.get(pk=response.json()["id"])


def patch(client, watch, body):
    return client.patch(f"/api/v1/review-watches/{watch.pk}/", body, format="json")


class TestChangingWhereTheTokenGoes:
    def test_a_member_cannot_send_the_creators_token_to_their_own_server(self, api, board, github, attacker):
        _, doing, _ = board
        watch = created_by(api, github, doing)
        member = member_client(doing.workflow.workspace, Role.MEMBER)
        for body in (
            {"api_base_url": attacker.base_url},
            {"api_base_url": attacker.base_url, "token": "anything"},
            {"repositories": ["evil/loot"]},
        ):
            response = patch(member, watch, body)
            assert response.status_code == 403, body
            assert "creator or a workspace owner" in response.json()["detail"]
        poll_watch(watch=watch)
        assert attacker.requests == []
        assert {r.authorization for r in github.requests} == {"Bearer ghp-creator"}
        watch.refresh_from_db()
        assert (watch.api_base_url, watch.repositories) == (github.base_url, [REPO])

    def test_other_fields_and_unchanged_destinations_stay_open_to_members(self, api, board, github):
        _, doing, _ = board
        watch = created_by(api, github, doing)
        member = member_client(doing.workflow.workspace, Role.MEMBER)
        body = {"enabled": False, "repositories": [REPO], "api_base_url": github.base_url + "/"}
        assert patch(member, watch, body).status_code == 200

    def test_the_creator_and_owners_must_supply_the_token_again(self, board, github, attacker):
        _, doing, _ = board
        workspace = doing.workflow.workspace
        creator = member_client(workspace, Role.MEMBER)
        watch = created_by(creator, github, doing)
        refused = patch(creator, watch, {"api_base_url": attacker.base_url})
        assert refused.status_code == 400
        assert refused.json()["errors"] == {"token": ["Supply the token again to change api_base_url."]}
        assert patch(creator, watch, {"repositories": ["acme/web"], "token": "ghp-new"}).status_code == 200
        owner = member_client(workspace, Role.OWNER)
        assert patch(owner, watch, {"api_base_url": attacker.base_url}).status_code == 400
        moved = patch(owner, watch, {"api_base_url": attacker.base_url, "token": "ghp-owner"})
        assert moved.status_code == 200
        poll_watch(watch=watch)
        assert {r.authorization for r in attacker.requests} == {"Bearer ghp-owner"}
        assert github.requests == []


class TestDestinations:
    @pytest.mark.parametrize(
        ("url", "error"),
        [
            ("http://127.0.0.1:5432", "Must be an https URL"),
            ("http://api.github.com", "Must be an https URL"),
            ("https://127.0.0.1:6379", "Must be a public address"),
            ("https://10.0.0.8/api/v3", "Must be a public address"),
            ("https://[::1]:8443", "Must be a public address"),
            ("https://169.254.169.254/latest", "Must be a public address"),
        ],
    )
    def test_plain_http_and_private_addresses_are_refused_at_create_and_update(self, api, board, settings, url, error):
        settings.KANDEV_OUTBOUND_ALLOW = []
        _, doing, _ = board
        body = {
            "workflow_id": str(doing.workflow_id),
            "repositories": [REPO],
            "reviewer_login": "rita",
            "api_base_url": url,
        }
        response = api.post("/api/v1/review-watches/", body, format="json")
        assert response.status_code == 400
        assert error in response.json()["errors"]["api_base_url"][0]
        watch = watch_create(workflow=doing.workflow, step=None, actor=None, repositories=[REPO], reviewer_login="rita")
        response = patch(api, watch, {"api_base_url": url, "token": ""})
        assert response.status_code == 400 and list(response.json()["errors"]) == ["api_base_url"]

    def test_a_stored_loopback_url_is_refused_at_request_time_without_connecting(self, board, github, settings):
        _, doing, _ = board
        watch = operator_watch(doing, github.base_url)
        settings.KANDEV_OUTBOUND_ALLOW = []
        for base_url in (github.base_url, f"https://localhost:{github.base_url.rsplit(':', 1)[1]}"):
            ReviewWatch.objects.filter(pk=watch.pk).update(api_base_url=base_url)
            report = poll_watch(watch=watch)
            assert "Refused to contact" in report.error
        watch.refresh_from_db()
        assert watch.last_error.startswith("Refused to contact localhost: it resolves to a private")
        assert github.requests == []

    def test_allow_entries_name_a_host_a_host_and_port_or_a_network(self, board, github, settings):
        _, doing, _ = board
        port = int(github.base_url.rsplit(":", 1)[1])
        watch = operator_watch(doing, github.base_url)
        for allow, reached in (
            ([f"127.0.0.1:{port}"], True),
            ([f"127.0.0.1:{port + 1}"], False),
            (["127.0.0.0/8"], False),  # a network lifts the public rule, not the https one
            (["localhost"], False),
            (["127.0.0.1"], True),
        ):
            settings.KANDEV_OUTBOUND_ALLOW = allow
            before = len(github.requests)
            report = poll_watch(watch=watch)
            assert (len(github.requests) > before, report.error == "") == (reached, reached), allow

    def test_the_connection_goes_to_the_address_that_was_checked(self, board, github, settings, monkeypatch):
        """DNS rebinding: a second lookup answering a forbidden address is never made."""
        _, doing, _ = board
        port = github.base_url.rsplit(":", 1)[1]
        settings.KANDEV_OUTBOUND_ALLOW = ["rebind.test"]
        real, lookups = socket.getaddrinfo, []

        def rebinding(host, *args, **kwargs):
            if host == "rebind.test":
                lookups.append(host)
                # First answer: the fake GitHub; any later one: the metadata service.
                host = "127.0.0.1" if len(lookups) == 1 else "169.254.169.254"
            return real(host, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", rebinding)
        watch = operator_watch(doing, f"http://rebind.test:{port}")
        assert poll_watch(watch=watch).error == ""
        assert lookups == ["rebind.test"]
        assert [r.host for r in github.requests] == [f"rebind.test:{port}"]


class TestWhatUsersSeeOfFailures:
    def test_a_remote_body_is_never_echoed(self, board, github):
        _, doing, _ = board
        watch = operator_watch(doing, github.base_url)
        github.script.append(Scripted(418, body={"message": "redis_version:7.2 internal"}))
        assert poll_watch(watch=watch).error == "GitHub answered 418."
        watch.refresh_from_db()
        assert "redis" not in watch.last_error

    def test_open_and_closed_ports_read_alike(self, board, github):
        _, doing, _ = board
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]  # bound, never listening: refuses connections
            watch = watch_create(
                workflow=doing.workflow,
                step=doing,
                actor=None,
                repositories=[REPO],
                reviewer_login="rita",
                api_base_url=f"http://127.0.0.1:{port}",
            )
            assert poll_watch(watch=watch).error == "GitHub request connection failed."


class TestRepositoryNames:
    @pytest.mark.parametrize("name", ["../..", "acme/..", "acme/.", "-acme/api", "acme/api/x"])
    def test_names_outside_owner_repo_are_refused(self, api, board, github, name):
        _, doing, _ = board
        body = {"workflow_id": str(doing.workflow_id), "repositories": [name], "reviewer_login": "rita"}
        assert api.post("/api/v1/review-watches/", body, format="json").status_code == 400
        watch = created_by(api, github, doing)
        response = patch(api, watch, {"repositories": [name], "token": github.token})
        assert response.status_code == 400 and list(response.json()["errors"]) == ["repositories"]

    def test_a_stored_bad_name_sends_nothing(self, board, github):
        _, doing, _ = board
        watch = operator_watch(doing, github.base_url, repositories=["../.."])
        assert poll_watch(watch=watch).error == "'../..' is not an owner/repo name."
        assert github.requests == []


def test_the_creator_of_a_watch_may_lose_membership_and_owners_still_manage_it(api, board, github):
    _, doing, _ = board
    creator = UserFactory()
    Membership.objects.create(workspace=doing.workflow.workspace, user=creator, role=Role.MEMBER)
    watch = watch_create(
        workflow=doing.workflow,
        step=doing,
        actor=creator,
        repositories=[REPO],
        reviewer_login="rita",
        token="t",
        api_base_url=github.base_url,
    )
    Membership.objects.filter(user=creator).delete()
    assert patch(api, watch, {"repositories": ["acme/web"], "token": "t2"}).status_code == 200
