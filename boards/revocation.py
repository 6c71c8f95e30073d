"""Access lost reaches open board sockets: a revoked token, Django's logout,
and memberships and users changed anywhere (services, the admin, the ORM) each ask the
user's sockets to re-check their access after commit (boards.events)."""

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_out
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from accounts.signals import token_revoked
from accounts.websocket import session_digest
from boards.events import access_changed_on_commit


@receiver(token_revoked)
def token_was_revoked(sender, *, user_id, **kwargs):
    access_changed_on_commit(user_id)


@receiver(user_logged_out)
def logged_out(sender, request, user, **kwargs):
    if user is not None:
        access_changed_on_commit(user.pk, ended_session=session_digest(request.session.session_key))


@receiver(post_save, sender="workflows.Membership")
@receiver(post_delete, sender="workflows.Membership")
def membership_changed(sender, instance, created=False, **kwargs):
    if not created:  # a new membership takes nothing away
        access_changed_on_commit(instance.user_id)


@receiver(post_save, sender=get_user_model())
def user_changed(sender, instance, created, update_fields=None, **kwargs):
    # Deactivation or a new password (which signs sessions out); a sign-in's last_login is neither.
    if not created and set(update_fields or ()) != {"last_login"}:
        access_changed_on_commit(instance.pk)
