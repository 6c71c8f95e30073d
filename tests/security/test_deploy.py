"""`manage.py check --deploy` is clean with the production settings of the README."""

import os
import secrets
import subprocess
import sys

from tests.servers import ROOT

PRODUCTION = {
    "DEBUG": "0",
    "HTTPS": "1",
    "ALLOWED_HOSTS": "kandev.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://kandev.example.com",
}


def deployment_environ() -> dict:
    """This process's environment without what test tools set for themselves (the browser
    tests allow async-unsafe calls, which check --deploy rightly refuses)."""
    return {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}


def check_deploy(**env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env={**deployment_environ(), **env}, capture_output=True, text=True,
    )


def test_production_settings_pass_check_deploy_without_warnings():
    result = check_deploy(**PRODUCTION, SECRET_KEY=secrets.token_urlsafe(50))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_names_what_is_missing_without_https_and_a_secret_key():
    insecure = {**PRODUCTION, "HTTPS": "0", "SECRET_KEY": "django-insecure-kandev-development-key"}
    result = check_deploy(**insecure)
    assert result.returncode != 0
    for check in ("W004", "W008", "W009", "W012", "W016"):
        assert f"security.{check}" in result.stderr + result.stdout
