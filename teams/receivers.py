"""Authority ends with the account too: a user deactivated or deleted anywhere (the admin, a
command, the ORM) loses what they handed on, in the transaction that saves or deletes them."""

from django.contrib.auth import get_user_model
from django.db.models.signals import post_save, pre_delete
from django.dispatch import receiver

from teams import services


@receiver(post_save, sender=get_user_model())
def account_saved(sender, instance, created, **kwargs):
    if not created and not instance.is_active:
        services.account_authority_ends(user_id=instance.pk)


@receiver(pre_delete, sender=get_user_model())
def account_deleted(sender, instance, **kwargs):
    services.account_authority_ends(user_id=instance.pk)
