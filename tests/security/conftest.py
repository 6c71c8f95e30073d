import pytest


@pytest.fixture
def pages(settings):
    """Render Django's HTML pages (admin, sign-in) without a collectstatic manifest."""
    plain = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    settings.STORAGES = {**settings.STORAGES, "staticfiles": plain}


@pytest.fixture(autouse=True)
def quick_passwords(settings):
    """Hundreds of users are made here; password hashing strength is not under test."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
