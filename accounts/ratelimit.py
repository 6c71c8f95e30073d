"""Sign-in throttling for every Django login view (the login page and the admin's).

Failed attempts are counted per client address and per username (the
`user_login_failed` signal, whatever view authenticated); once either reaches
KANDEV_LOGIN_MAX_FAILURES within KANDEV_LOGIN_WINDOW_SECONDS, sign-in POSTs from that
address or for that username get 429 until the window passes. The address is REMOTE_ADDR:
forwarded headers are not trusted, so behind a proxy the per-username limit is the one
that bites. Counts live in the default cache (per process unless a shared cache is set).
"""

from django.conf import settings
from django.contrib.auth.signals import user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpResponse
from django.urls import NoReverseMatch, reverse


def _keys(request, username: str) -> list[str]:
    keys = [f"login-failures:addr:{request.META.get('REMOTE_ADDR', '')}"]
    if username:
        keys.append(f"login-failures:user:{username.strip().lower()[:150]}")
    return keys


def login_paths() -> set[str]:
    paths = {settings.LOGIN_URL}
    try:
        paths.add(reverse("admin:login"))
    except NoReverseMatch:
        pass
    return paths


@receiver(user_login_failed)
def count_failed_login(sender, credentials, request=None, **kwargs):
    if request is None:
        return
    window = settings.KANDEV_LOGIN_WINDOW_SECONDS
    for key in _keys(request, credentials.get("username") or ""):
        cache.add(key, 0, window)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, window)


class LoginRateLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and request.path in login_paths():
            keys = _keys(request, request.POST.get("username", ""))
            if any((cache.get(key) or 0) >= settings.KANDEV_LOGIN_MAX_FAILURES for key in keys):
                window = settings.KANDEV_LOGIN_WINDOW_SECONDS
                minutes = max(window // 60, 1)
                return HttpResponse(
                    f"Too many failed sign-in attempts. Try again in {minutes} minute(s).",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                    headers={"Retry-After": str(window)},
                )
        return self.get_response(request)
