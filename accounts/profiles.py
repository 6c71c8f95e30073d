"""A person's own account: their profile, e-mail and choices, changed the same way by the
profile page and `PATCH /api/v1/me/`."""

import functools
import zoneinfo

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in
from django.db import transaction
from django.dispatch import receiver

from accounts.models import NOTIFY_KINDS, Notify, Profile

THEME_SESSION_KEY = "kandev_theme"  # the account's theme, copied at sign-in so pages need no query


@functools.cache
def time_zones() -> tuple[str, ...]:
    return tuple(sorted(zoneinfo.available_timezones() - {"localtime", "Factory"}))


def profile_of(user) -> Profile:
    return Profile.objects.get_or_create(user=user)[0]


def email_in_use(email: str, *, besides=None) -> bool:
    """Another account already has this e-mail (compared without case)."""
    others = get_user_model().objects.filter(email__iexact=email.strip())
    if besides is not None:
        others = others.exclude(pk=besides.pk)
    return others.exists()


def notify_errors(notify) -> list[str]:
    """What is wrong with a notification choice sent by a person, in their words."""
    if not isinstance(notify, dict):
        return ['Send an object: a kind of news and where you hear of it, e.g. {"mentioned": "email"}.']
    if len(notify) > len(NOTIFY_KINDS):
        return [f"There are {len(NOTIFY_KINDS)} kinds of news: {', '.join(NOTIFY_KINDS)}."]
    errors = [
        f"“{str(kind)[:40]}” is not a kind of news; the kinds are {', '.join(NOTIFY_KINDS)}."
        for kind in notify
        if kind not in NOTIFY_KINDS
    ]
    errors += [
        f"{kind}: choose one of {', '.join(Notify.values)}."
        for kind, value in notify.items()
        if kind in NOTIFY_KINDS and value not in Notify.values
    ]
    return errors


@transaction.atomic
def profile_update(user, **changes) -> Profile:
    """Apply validated changes: name, email, time_zone, theme, notify (merged per kind)."""
    profile = Profile.objects.select_for_update().get(pk=profile_of(user).pk)
    if "email" in changes and changes["email"].strip().lower() != user.email.lower():
        user.email = changes["email"].strip()
        user.save(update_fields=["email"])
        profile.email_verified = False  # a new address has not been shown to reach them yet
    for field in ("name", "time_zone", "theme"):
        if field in changes:
            setattr(profile, field, changes[field])
    if "notify" in changes:
        profile.notify = {**profile.notify, **changes["notify"]}
    profile.save()
    return profile


def mark_email_verified(user) -> None:
    Profile.objects.update_or_create(user=user, defaults={"email_verified": True})


@receiver(user_logged_in)
def remember_theme(sender, request, user, **kwargs):
    if request is not None and hasattr(request, "session"):
        request.session[THEME_SESSION_KEY] = profile_of(user).theme
