from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self):
        from django.contrib.auth import get_user_model

        from accounts import profiles, schema  # noqa: F401  the OpenAPI auth scheme; the sign-in receiver
        from accounts.usernames import DistinctUsernameValidator

        # On the field itself, so every form and command that makes an account runs it.
        get_user_model()._meta.get_field("username").validators.append(DistinctUsernameValidator())
