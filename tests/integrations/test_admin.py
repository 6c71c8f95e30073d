"""Admin pages of integrations: tokens and secrets are write-only there too."""

from django.test import Client

from integrations.intake import intake_create
from integrations.models import ReviewWatch
from integrations.watch import watch_create
from teams.services import member_remove
from tests.factories import MembershipFactory, UserFactory


def test_a_review_watch_is_created_in_the_admin_with_a_write_only_token(board, settings):
    # Render pages without a collectstatic manifest.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    _, doing, _ = board
    admin = UserFactory(username="root", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(admin)
    response = client.post(
        "/admin/integrations/reviewwatch/add/",
        {
            "workflow": str(doing.workflow_id),
            "step": str(doing.pk),
            "repositories": '["acme/api"]',
            "reviewer_login": "rita",
            "poll_interval_seconds": "300",
            "enabled": "on",
            "api_base_url": "https://api.github.com",
            "token": "ghp-from-admin",
        },
    )
    assert response.status_code == 302, response.content
    watch = ReviewWatch.objects.get()
    assert watch.token() == "ghp-from-admin"
    page = client.get(f"/admin/integrations/reviewwatch/{watch.pk}/change/")
    assert page.status_code == 200
    assert b"ghp-from-admin" not in page.content
    assert client.get("/admin/integrations/intake/").status_code == 200


def test_the_admin_lists_who_made_each_intake_and_watch_and_why_one_stopped(board, owner, settings):
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    _, doing, _ = board
    mike = MembershipFactory(workspace=doing.workflow.workspace, user=UserFactory(username="mike")).user
    intake_create(workflow=doing.workflow, step=doing, actor=mike)
    watch_create(workflow=doing.workflow, step=doing, actor=mike, repositories=["acme/api"], reviewer_login="rita")
    member_remove(workspace=doing.workflow.workspace, user_id=mike.pk, actor=owner)
    client = Client()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    for page in ("/admin/integrations/intake/", "/admin/integrations/reviewwatch/"):
        listed = client.get(page).content.decode()
        assert "mike" in listed
        assert "Its creator left or was removed from the workspace." in listed
