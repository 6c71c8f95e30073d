"""Throttles for Django's sign-in forms (the login page and the admin's) and its password
reset form, counted in the default cache: Redis when REDIS_URL is set, so every server
process counts together (settings.CACHES).

Sign-in failures (the `user_login_failed` signal, whatever view authenticated) are counted
per client address and per username within KANDEV_LOGIN_WINDOW_SECONDS:
- an address with KANDEV_LOGIN_MAX_FAILURES failures gets 429 on every sign-in until the
  window passes (it backs off);
- an account with that many failures is never refused as such, or anyone could lock its
  owner out: it only slows down the addresses guessing at it, each of which must then wait
  KANDEV_LOGIN_ACCOUNT_BACKOFF_SECONDS after a failure before trying it again. An address
  that has not failed on it (its owner's) signs in as usual.
Password reset requests: at most KANDEV_PASSWORD_RESET_MAX per address and per e-mail
address within KANDEV_PASSWORD_RESET_WINDOW_SECONDS (no mail-bombing, no address probing).
Open sign-up: at most KANDEV_SIGNUP_MAX attempts per address an hour.

The address is REMOTE_ADDR, which uvicorn takes from X-Forwarded-For only on connections from
FORWARDED_ALLOW_IPS (default: loopback), and then the rightmost address no trusted proxy
added, so a client cannot choose its own. Behind a proxy on another host, name the proxy there
or every client shares its address (docs/reference.md, "Production"; tests/security/test_forwarded.py).
"""

import hashlib

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpResponse
from django.urls import NoReverseMatch, reverse


def _address(request) -> str:
    return request.META.get("REMOTE_ADDR", "")


def _digest(name: str) -> str:
    """Cache keys of a fixed alphabet and length, whatever a form sent."""
    return hashlib.sha256(name.strip().lower().encode()).hexdigest()


def _address_key(request) -> str:
    return f"login-failures:addr:{_address(request)}"


def _account_key(username: str) -> str:
    return f"login-failures:user:{_digest(username)}"


def _backoff_key(request, username: str) -> str:
    return f"login-backoff:{_address(request)}:{_digest(username)}"


def _count(key: str, window: int) -> int:
    """Add one to a counter that expires `window` seconds after its first count."""
    cache.add(key, 0, window)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, window)
        return 1


@receiver(user_login_failed)
def count_failed_login(sender, credentials, request=None, **kwargs):
    if request is None:
        return
    window = settings.KANDEV_LOGIN_WINDOW_SECONDS
    _count(_address_key(request), window)
    username = credentials.get("username") or ""
    if username and _count(_account_key(username), window) >= settings.KANDEV_LOGIN_MAX_FAILURES:
        cache.set(_backoff_key(request, username), 1, settings.KANDEV_LOGIN_ACCOUNT_BACKOFF_SECONDS)


def too_many(message: str, retry_after: int) -> HttpResponse:
    return HttpResponse(
        message, status=429, content_type="text/plain; charset=utf-8", headers={"Retry-After": str(retry_after)}
    )


class LoginRateLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        self.guarded = None  # the URLconf is read at the first request, not while it loads

    def __call__(self, request):
        refused = None
        if request.method == "POST":
            if self.guarded is None:
                self.guarded = self.guarded_paths()
            throttle = self.guarded.get(request.path)
            refused = throttle and throttle(request)
        return refused or self.get_response(request)

    def guarded_paths(self) -> dict:
        """path -> the throttle of a POST to it: the sign-in forms, password reset, sign-up."""
        paths = {
            settings.LOGIN_URL: self.refuse_sign_in,
            reverse("password_reset"): self.refuse_password_reset,
            reverse("signup"): self.refuse_sign_up,
        }
        try:
            paths[reverse("admin:login")] = self.refuse_sign_in
        except NoReverseMatch:
            pass
        return paths

    def refuse_sign_in(self, request) -> HttpResponse | None:
        if (cache.get(_address_key(request)) or 0) >= settings.KANDEV_LOGIN_MAX_FAILURES:
            window = settings.KANDEV_LOGIN_WINDOW_SECONDS
            return too_many(f"Too many failed sign-in attempts. Try again in {max(window // 60, 1)} minute(s).", window)
        username = request.POST.get("username", "")
        if username and cache.get(_backoff_key(request, username)):
            backoff = settings.KANDEV_LOGIN_ACCOUNT_BACKOFF_SECONDS
            return too_many(f"Too many failed sign-in attempts. Try again in {backoff} second(s).", backoff)
        return None

    def refuse_password_reset(self, request) -> HttpResponse | None:
        window = settings.KANDEV_PASSWORD_RESET_WINDOW_SECONDS
        keys = [f"password-reset:addr:{_address(request)}"]
        if email := request.POST.get("email", ""):
            keys.append(f"password-reset:email:{_digest(email)}")
        counts = [_count(key, window) for key in keys]
        if max(counts) > settings.KANDEV_PASSWORD_RESET_MAX:
            return too_many(f"Too many password reset requests. Try again in {max(window // 60, 1)} minute(s).", window)
        return None

    def refuse_sign_up(self, request) -> HttpResponse | None:
        if _count(f"sign-up:addr:{_address(request)}", 3600) > settings.KANDEV_SIGNUP_MAX:
            return too_many("Too many sign-ups from your address. Try again in an hour.", 3600)
        return None
