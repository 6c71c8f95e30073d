"""Admin pages of integrations: tokens and secrets are write-only there too."""

from django.test import Client

from integrations.models import ReviewWatch
from tests.factories import UserFactory


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
