"""Django's mail settings from the environment, for kandev/settings.py: `EMAIL_URL` or the
usual `EMAIL_HOST` family, never both. Whatever is malformed stops startup with an
ImproperlyConfigured that names the variable, rather than the first password reset failing.

    EMAIL_URL=smtp://user:pass@host:587/?tls=1   STARTTLS (also smtp+tls://host)
    EMAIL_URL=smtp+ssl://user:pass@host          TLS from the first byte (also smtps://)
    EMAIL_URL=console://                         print each mail to the server's output

User and password are percent-encoded in the URL (`p%40ss` for `p@ss`). The port defaults to
587 with STARTTLS, 465 with TLS, else 25. Neither set: `can_send` is false, and the pages
that would send mail say that this server cannot.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parseaddr
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

SMTP = "django.core.mail.backends.smtp.EmailBackend"
CONSOLE = "django.core.mail.backends.console.EmailBackend"
# Not configured: nothing leaves the process. Every page that sends mail asks `can_send` first.
NOWHERE = "django.core.mail.backends.dummy.EmailBackend"

SCHEMES = {"smtp": (False, False), "smtp+tls": (True, False), "smtp+ssl": (False, True), "smtps": (False, True)}
HOST_FAMILY = ("EMAIL_PORT", "EMAIL_HOST_USER", "EMAIL_HOST_PASSWORD", "EMAIL_USE_TLS", "EMAIL_USE_SSL")
TRUE, FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class MailSettings:
    can_send: bool
    backend: str
    host: str = "localhost"
    port: int = 25
    user: str = ""
    password: str = ""
    use_tls: bool = False
    use_ssl: bool = False


def _flag(name: str, value: str) -> bool:
    if value.strip().lower() in TRUE:
        return True
    if value.strip().lower() in FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be 1 or 0 (true/false, yes/no, on/off), not {value!r}.")


def _smtp(name: str, *, host: str, port: int | None, user: str, password: str, tls: bool, ssl: bool) -> MailSettings:
    if tls and ssl:
        raise ImproperlyConfigured(f"{name}: STARTTLS (tls) and TLS from the start (ssl) cannot both be on; pick one.")
    if port is None:
        port = 587 if tls else 465 if ssl else 25
    return MailSettings(True, SMTP, host, port, user, password, tls, ssl)


def from_url(url: str) -> MailSettings:
    parts = urlsplit(url)
    if parts.scheme == "console" and not parts.netloc.strip("/"):
        return MailSettings(True, CONSOLE)
    if parts.scheme not in SCHEMES or not url.startswith(f"{parts.scheme}://"):
        raise ImproperlyConfigured(
            f"EMAIL_URL must start with smtp://, smtp+tls://, smtp+ssl:// or console://, not {url.split(':')[0]!r}."
        )
    if not parts.hostname:
        raise ImproperlyConfigured("EMAIL_URL names no host, e.g. smtp://user:pass@mail.example.com:587/?tls=1.")
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured("EMAIL_URL's port must be a number from 1 to 65535.") from None
    tls, ssl = SCHEMES[parts.scheme]
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "tls":
            tls = _flag("EMAIL_URL's tls", value)
        elif key == "ssl":
            ssl = _flag("EMAIL_URL's ssl", value)
        else:
            raise ImproperlyConfigured(f"EMAIL_URL has an unknown option {key!r}: only tls and ssl are read.")
    return _smtp(
        "EMAIL_URL",
        host=parts.hostname,
        port=port,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        tls=tls,
        ssl=ssl,
    )


def from_host(environ: Mapping[str, str]) -> MailSettings:
    port = environ.get("EMAIL_PORT", "").strip()
    if port and not (port.isdigit() and 0 < int(port) < 65536):
        raise ImproperlyConfigured(f"EMAIL_PORT must be a number from 1 to 65535, not {port!r}.")
    return _smtp(
        "EMAIL_USE_TLS, EMAIL_USE_SSL",
        host=environ["EMAIL_HOST"].strip(),
        port=int(port) if port else None,
        user=environ.get("EMAIL_HOST_USER", ""),
        password=environ.get("EMAIL_HOST_PASSWORD", ""),
        tls=_flag("EMAIL_USE_TLS", environ.get("EMAIL_USE_TLS", "")),
        ssl=_flag("EMAIL_USE_SSL", environ.get("EMAIL_USE_SSL", "")),
    )


def mail_settings(environ: Mapping[str, str]) -> MailSettings:
    url, host = environ.get("EMAIL_URL", "").strip(), environ.get("EMAIL_HOST", "").strip()
    if url and host:
        raise ImproperlyConfigured("Set EMAIL_URL or EMAIL_HOST (with EMAIL_PORT, ...), not both.")
    if url:
        return from_url(url)
    if host:
        return from_host(environ)
    if stray := [name for name in HOST_FAMILY if environ.get(name, "").strip()]:
        raise ImproperlyConfigured(f"{', '.join(stray)} set without EMAIL_HOST: set EMAIL_HOST too (or EMAIL_URL).")
    return MailSettings(False, NOWHERE)


def timeout(environ: Mapping[str, str]) -> int:
    """Seconds a send may wait on the mail server (Django's default waits for ever)."""
    value = environ.get("EMAIL_TIMEOUT", "10").strip()
    if not (value.isdigit() and int(value) > 0):
        raise ImproperlyConfigured(f"EMAIL_TIMEOUT must be a whole number of seconds above 0, not {value!r}.")
    return int(value)


def from_address(environ: Mapping[str, str]) -> str:
    value = environ.get("DEFAULT_FROM_EMAIL", "").strip()
    if not value:
        return "webmaster@localhost"  # Django's default; a real relay wants the operator's own
    if "@" not in parseaddr(value)[1]:
        raise ImproperlyConfigured(
            f"DEFAULT_FROM_EMAIL must be an address, e.g. kandev@example.com or 'kandev <kandev@example.com>', "
            f"not {value!r}."
        )
    return value
