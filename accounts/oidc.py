"""Sign-in with OpenID Connect (mozilla-django-oidc's code flow with PKCE), off unless
KANDEV_OIDC_ISSUER is set. The provider's endpoints come from its discovery document, read
on the first sign-in (never at start-up, so a provider that is down stops nobody else).

An account is found or made by the e-mail the provider vouches for (`email_verified`):
- one account here has that e-mail, confirmed (a reset link used, or an earlier OpenID
  sign-in): that account signs in;
- one account has it, unconfirmed: refused, or whoever typed someone else's address at
  sign-up would be handed their sign-ins. Resetting the password by e-mail confirms it;
- none: a new account, named after the provider's `preferred_username` or the e-mail.
The ID token's signature (the provider's JWKS), nonce, expiry, issuer and audience are checked.
"""

import logging
import threading

import httpx
import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured, SuspiciousOperation
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect
from django.utils.crypto import get_random_string
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from accounts import profiles
from accounts.usernames import lookalike_of

logger = logging.getLogger(__name__)
# mozilla-django-oidc's endpoint settings, and where the discovery document names each one.
ENDPOINTS = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}
UNREACHABLE = "The sign-in provider could not be reached just now. Try again in a minute, or log in with a password."
_discovered: dict[str, dict] = {}
_discovering = threading.Lock()


def enabled() -> bool:
    return bool(settings.KANDEV_OIDC_ISSUER)


def provider() -> dict:
    """The issuer's discovery document, fetched once per process (a failed fetch is retried
    on the next sign-in)."""
    issuer = settings.KANDEV_OIDC_ISSUER
    with _discovering:
        if issuer not in _discovered:
            response = httpx.get(f"{issuer}/.well-known/openid-configuration", timeout=settings.OIDC_TIMEOUT)
            response.raise_for_status()
            document = response.json()
            if document.get("issuer", "").rstrip("/") != issuer:
                raise ImproperlyConfigured(f"The OpenID provider at {issuer} names another issuer.")
            _discovered[issuer] = document
        return _discovered[issuer]


def setting(attr, *default):
    if attr in ENDPOINTS:
        return provider()[ENDPOINTS[attr]]
    return import_from_settings(attr, *default)


class Refused(Exception):
    """A sign-in the provider allowed and kandev does not: its message is shown to the person."""


class OidcBackend(OIDCAuthenticationBackend):
    get_settings = staticmethod(setting)

    def __init__(self, *args, **kwargs):
        # Django builds every backend for every sign-in, passwords included: the provider is
        # asked for its endpoints only when an OpenID sign-in comes back (authenticate).
        self.UserModel = get_user_model()
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET

    def authenticate(self, request, **kwargs):
        if not enabled() or "nonce" not in kwargs:  # only the callback view passes a nonce
            return None
        self.OIDC_OP_TOKEN_ENDPOINT = setting("OIDC_OP_TOKEN_ENDPOINT")
        self.OIDC_OP_USER_ENDPOINT = setting("OIDC_OP_USER_ENDPOINT")
        self.OIDC_OP_JWKS_ENDPOINT = setting("OIDC_OP_JWKS_ENDPOINT")
        try:
            return super().authenticate(request, **kwargs)
        except Refused as refused:
            messages.error(request, str(refused))
        except (requests.RequestException, httpx.HTTPError, ImproperlyConfigured):
            messages.error(request, UNREACHABLE)
        except SuspiciousOperation as suspicious:  # a token not signed, issued or meant for us
            logger.warning("OpenID Connect sign-in refused: %s", suspicious)
            messages.error(request, "The sign-in could not be verified. Try again, or log in with a password.")
        return None

    def get_payload_data(self, token, key):
        payload = super().get_payload_data(token, key)
        audience = payload.get("aud")
        audiences = audience if isinstance(audience, list) else [audience]
        if payload.get("iss", "").rstrip("/") != settings.KANDEV_OIDC_ISSUER:
            raise SuspiciousOperation("The ID token comes from another issuer.")
        if settings.OIDC_RP_CLIENT_ID not in audiences:
            raise SuspiciousOperation("The ID token is meant for another client.")
        return payload

    def get_or_create_user(self, access_token, id_token, payload):
        claims = {**payload, **self.get_userinfo(access_token, id_token, payload)}
        if claims.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("The provider's user info is about someone else.")
        email = claims.get("email")
        if not isinstance(email, str) or not email or claims.get("email_verified") is not True:
            raise Refused(
                f"Your {settings.KANDEV_OIDC_NAME} account has no confirmed e-mail address, which kandev "
                "needs to find your account. Confirm one there and try again."
            )
        with transaction.atomic():
            found = list(self.UserModel.objects.filter(email__iexact=email).select_for_update()[:2])
            if len(found) > 1:
                raise Refused("Several accounts here use your e-mail address; ask an administrator to sort them out.")
            if found:
                user = found[0]
                if not profiles.profile_of(user).email_verified:
                    raise Refused(
                        "An account here already uses your e-mail address, but has not confirmed it. "
                        "Reset its password by e-mail (“Forgot your password?”) once to confirm it, then sign in "
                        f"with {settings.KANDEV_OIDC_NAME} again."
                    )
                return user
            return self.create_user(claims)

    def create_user(self, claims):
        user = self.UserModel(username=self.free_username(claims), email=claims["email"][:254])
        user.set_unusable_password()  # they sign in through the provider (or set one by a reset link)
        user.save()
        profiles.profile_update(user, name=str(claims.get("name") or "")[:150])
        profiles.mark_email_verified(user)
        return user

    def free_username(self, claims) -> str:
        """The provider's `preferred_username`, else the e-mail's local part, made unique."""
        wanted = str(claims.get("preferred_username") or claims["email"].split("@")[0])
        base = "".join(c for c in wanted if c.isalnum() or c in "@.+-_")[:140] or "member"
        candidate = base
        while self.UserModel.objects.filter(username__iexact=candidate).exists() or lookalike_of(candidate):
            candidate = f"{base}-{get_random_string(4, 'abcdefghjkmnpqrstuvwxyz23456789')}"
        return candidate


class SignInView(OIDCAuthenticationRequestView):
    """`/accounts/oidc/start/`: off (404) unless configured; sends the browser to the provider."""

    get_settings = staticmethod(setting)

    def __init__(self, *args, **kwargs):
        super(OIDCAuthenticationRequestView, self).__init__(*args, **kwargs)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID

    def get(self, request):
        if not enabled():
            raise Http404
        try:
            self.OIDC_OP_AUTH_ENDPOINT = setting("OIDC_OP_AUTHORIZATION_ENDPOINT")
        except (httpx.HTTPError, ValueError, KeyError, ImproperlyConfigured):
            messages.error(request, UNREACHABLE)
            return redirect("login")
        return super().get(request)


class CallbackView(OIDCAuthenticationCallbackView):
    get_settings = staticmethod(setting)

    def get(self, request):
        if not enabled():
            raise Http404
        return super().get(request)
