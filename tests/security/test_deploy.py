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
    tests allow async-unsafe calls, which check --deploy rightly refuses), on kandev's own
    settings (not the test run's, which supply a SECRET_KEY)."""
    environ = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    return {**environ, "DJANGO_SETTINGS_MODULE": "kandev.settings"}


def check_deploy(**env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**deployment_environ(), **env},
        capture_output=True,
        text=True,
    )


def test_production_settings_pass_check_deploy_without_warnings():
    result = check_deploy(**PRODUCTION, SECRET_KEY=secrets.token_urlsafe(50))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_names_what_is_missing_without_https_and_a_secret_key():
    insecure = {**PRODUCTION, "HTTPS": "0", "SECRET_KEY": "too-short"}
    result = check_deploy(**insecure)
    assert result.returncode != 0
    for check in ("W004", "W008", "W009", "W012", "W016"):
        assert f"security.{check}" in result.stderr + result.stdout


def without_secret_key() -> dict:
    return {k: v for k, v in deployment_environ().items() if k != "SECRET_KEY"}


def test_production_mode_refuses_to_start_on_the_public_development_key():
    for command in (["check", "--deploy"], ["seed_demo"], ["migrate", "--check"]):
        result = subprocess.run(
            [sys.executable, "manage.py", *command],
            cwd=ROOT,
            env={**without_secret_key(), **PRODUCTION},
            capture_output=True,
            text=True,
        )
        assert result.returncode != 0, command
        assert "ImproperlyConfigured" in result.stderr
        assert "public development key" in result.stderr and "set SECRET_KEY" in result.stderr


def test_the_asgi_server_refuses_to_start_on_the_public_development_key():
    result = subprocess.run(
        [sys.executable, "-c", "import kandev.asgi"],
        cwd=ROOT,
        env={**without_secret_key(), **PRODUCTION},
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "set SECRET_KEY" in result.stderr


def test_development_mode_still_runs_on_the_development_key():
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**without_secret_key(), "DEBUG": "1"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_commands_in_a_development_checkout_need_no_debug_setting():
    """Once `bin/dev` made the checkout's development key, commands run as the README writes
    them (no DEBUG=1, no SECRET_KEY); DEBUG=0 still asks for a real key (above)."""
    environ = {k: v for k, v in without_secret_key().items() if k != "DEBUG"}
    made = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env={**environ, "DEBUG": "1"})
    assert made.returncode == 0 and (ROOT / ".secret_key").exists()
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=environ, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
