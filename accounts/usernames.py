"""Usernames that read alike (Unicode TR39 confusable detection): `аlice` with a Cyrillic а,
`aIice` with a capital I, beside `alice`. A new name whose skeleton matches an existing
name's is refused, wherever an account is made (the validator sits on the user model's
username field, so sign-up forms, the admin and createsuperuser all run it).

The skeleton is disarm's `skeleton_key` with TR39's digit classes (1 ≡ l, 0 ≡ O): it
folds confusables before case, so a name is compared by the skeletons of both its own
spelling and its case-folded one — `ALICE` and `alice` meet through the latter.
"""

from disarm import skeleton_key
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.utils.deconstruct import deconstructible


def skeletons(name: str) -> set[str]:
    return {skeleton_key(spelling, digit_policy="tr39") for spelling in (name, name.casefold())} - {""}


def lookalike_of(name: str) -> str | None:
    """An existing username that reads like `name` (the same name itself does not count:
    the model's own uniqueness check is the judge of that)."""
    wanted = skeletons(name)
    # Every name is compared: a skeleton is not a column the database can index here.
    for existing in get_user_model().objects.exclude(username=name).values_list("username", flat=True).iterator():
        if skeletons(existing) & wanted:
            return existing
    return None


@deconstructible
class DistinctUsernameValidator:
    """Refuses a username that looks like an existing one (without naming it)."""

    message = "This username looks too much like an existing username; choose one that reads differently."
    code = "lookalike_username"

    def __call__(self, value):
        if isinstance(value, str) and lookalike_of(value) is not None:
            raise ValidationError(self.message, code=self.code)

    def __eq__(self, other):
        return isinstance(other, DistinctUsernameValidator)
