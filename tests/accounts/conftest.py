import pytest


@pytest.fixture
def pages(settings):
    """Render Django's HTML pages (the password reset's are the admin's) without a
    collectstatic manifest."""
    plain = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    settings.STORAGES = {**settings.STORAGES, "staticfiles": plain}
