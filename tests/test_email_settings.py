"""Mail settings, read by kandev's own settings module in a fresh process per environment
(as a deployment starts): EMAIL_URL or the EMAIL_HOST family, and a clear refusal at
startup of whatever is malformed."""

import json
import os
import subprocess
import sys

import pytest

from tests.servers import ROOT

READ = (
    "import json; from django.conf import settings; print(json.dumps({name: getattr(settings, name) for name in ["
    "'KANDEV_CAN_SEND_EMAIL', 'EMAIL_BACKEND', 'EMAIL_HOST', 'EMAIL_PORT', 'EMAIL_HOST_USER', "
    "'EMAIL_HOST_PASSWORD', 'EMAIL_USE_TLS', 'EMAIL_USE_SSL', 'EMAIL_TIMEOUT', 'DEFAULT_FROM_EMAIL']}))"
)
SMTP = "django.core.mail.backends.smtp.EmailBackend"


def settings_with(**env) -> subprocess.CompletedProcess:
    """kandev.settings loaded with this environment: only `env`'s mail variables."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("EMAIL_", "DEFAULT_FROM_EMAIL"))}
    environ |= {"DJANGO_SETTINGS_MODULE": "kandev.settings", "DEBUG": "0", "SECRET_KEY": "x" * 50, **env}
    return subprocess.run([sys.executable, "-c", READ], cwd=ROOT, env=environ, capture_output=True, text=True)


def mail_settings(**env) -> dict:
    result = settings_with(**env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_without_mail_settings_the_server_knows_it_cannot_send_mail():
    read = mail_settings()
    assert read["KANDEV_CAN_SEND_EMAIL"] is False
    assert read["EMAIL_BACKEND"] != SMTP  # nothing tries localhost:25 behind the operator's back


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "smtp://mailer:p%40ss%3Aword@mail.example.com:587/?tls=1",
            {"EMAIL_HOST": "mail.example.com", "EMAIL_PORT": 587, "EMAIL_HOST_USER": "mailer"}
            | {"EMAIL_HOST_PASSWORD": "p@ss:word", "EMAIL_USE_TLS": True, "EMAIL_USE_SSL": False},
        ),
        (
            "smtp+ssl://mailer:secret@mail.example.com",
            {"EMAIL_HOST": "mail.example.com", "EMAIL_PORT": 465, "EMAIL_HOST_USER": "mailer"}
            | {"EMAIL_HOST_PASSWORD": "secret", "EMAIL_USE_TLS": False, "EMAIL_USE_SSL": True},
        ),
        (
            "smtp+tls://relay.internal",
            {"EMAIL_HOST": "relay.internal", "EMAIL_PORT": 587, "EMAIL_USE_TLS": True, "EMAIL_USE_SSL": False},
        ),
        (
            "smtp://127.0.0.1:2525",
            {"EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": 2525, "EMAIL_HOST_USER": "", "EMAIL_USE_TLS": False},
        ),
    ],
)
def test_an_email_url_configures_smtp(url, expected):
    read = mail_settings(EMAIL_URL=url, DEFAULT_FROM_EMAIL="kandev <noreply@example.com>")
    assert read["KANDEV_CAN_SEND_EMAIL"] is True
    assert read["EMAIL_BACKEND"] == SMTP
    assert {name: read[name] for name in expected} == expected
    assert read["DEFAULT_FROM_EMAIL"] == "kandev <noreply@example.com>"
    assert read["EMAIL_TIMEOUT"] == 10  # a dead mail server never holds a request for long


def test_console_prints_mail_instead_of_sending_it():
    read = mail_settings(EMAIL_URL="console://")
    assert read["KANDEV_CAN_SEND_EMAIL"] is True
    assert read["EMAIL_BACKEND"] == "django.core.mail.backends.console.EmailBackend"


def test_the_email_host_family_configures_smtp():
    read = mail_settings(
        EMAIL_HOST="mail.example.com",
        EMAIL_PORT="2587",
        EMAIL_HOST_USER="mailer",
        EMAIL_HOST_PASSWORD="secret",
        EMAIL_USE_TLS="1",
        EMAIL_TIMEOUT="3",
    )
    assert read["KANDEV_CAN_SEND_EMAIL"] is True
    assert read["EMAIL_BACKEND"] == SMTP
    assert (read["EMAIL_HOST"], read["EMAIL_PORT"], read["EMAIL_HOST_USER"]) == ("mail.example.com", 2587, "mailer")
    assert (read["EMAIL_USE_TLS"], read["EMAIL_USE_SSL"], read["EMAIL_TIMEOUT"]) == (True, False, 3)


def test_the_port_follows_the_kind_of_tls_unless_given():
    assert mail_settings(EMAIL_HOST="mail.example.com")["EMAIL_PORT"] == 25
    assert mail_settings(EMAIL_HOST="mail.example.com", EMAIL_USE_TLS="yes")["EMAIL_PORT"] == 587
    assert mail_settings(EMAIL_HOST="mail.example.com", EMAIL_USE_SSL="true")["EMAIL_PORT"] == 465


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"EMAIL_URL": "smtps//mail.example.com"}, "EMAIL_URL"),
        ({"EMAIL_URL": "imap://mail.example.com"}, "smtp://, smtp+tls://, smtp+ssl:// or console://"),
        ({"EMAIL_URL": "smtp://"}, "host"),
        ({"EMAIL_URL": "smtp://mail.example.com:port"}, "port"),
        ({"EMAIL_URL": "smtp://mail.example.com:99999"}, "port"),
        ({"EMAIL_URL": "smtp://mail.example.com/?starttls=1"}, "starttls"),
        ({"EMAIL_URL": "smtp://mail.example.com/?tls=maybe"}, "tls"),
        ({"EMAIL_URL": "smtp://mail.example.com/?tls=1&ssl=1"}, "both"),
        ({"EMAIL_URL": "smtp://mail.example.com", "EMAIL_HOST": "mail.example.com"}, "not both"),
        ({"EMAIL_HOST": "mail.example.com", "EMAIL_PORT": "twenty-five"}, "EMAIL_PORT"),
        ({"EMAIL_HOST": "mail.example.com", "EMAIL_USE_TLS": "1", "EMAIL_USE_SSL": "1"}, "both"),
        ({"EMAIL_HOST": "mail.example.com", "EMAIL_USE_TLS": "sure"}, "EMAIL_USE_TLS"),
        ({"EMAIL_HOST_USER": "mailer"}, "EMAIL_HOST"),
        ({"EMAIL_HOST": "mail.example.com", "EMAIL_TIMEOUT": "0"}, "EMAIL_TIMEOUT"),
        ({"EMAIL_URL": "console://", "DEFAULT_FROM_EMAIL": "not an address"}, "DEFAULT_FROM_EMAIL"),
    ],
)
def test_a_malformed_mail_setting_stops_startup_with_a_clear_message(env, message):
    result = settings_with(**env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr.strip().splitlines()[-1]
