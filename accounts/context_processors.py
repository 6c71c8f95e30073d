from django.conf import settings

from accounts.profiles import THEME_SESSION_KEY


def account(request):
    """What every page's frame shows of accounts: the person's theme (copied into the session
    at sign-in, so no page pays a query for it) and the ways to sign in or up."""
    session = getattr(request, "session", None)
    return {
        "theme": session.get(THEME_SESSION_KEY, "system") if session is not None else "system",
        "open_signup": settings.KANDEV_OPEN_SIGNUP,
        "oidc_name": settings.KANDEV_OIDC_NAME if settings.KANDEV_OIDC_ISSUER else "",
    }
