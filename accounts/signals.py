"""Signals accounts sends for the apps above it (it must not know them)."""

from django.dispatch import Signal

# An API token stopped being valid (revoked through the API or the admin); sent with `user_id`.
token_revoked = Signal()
