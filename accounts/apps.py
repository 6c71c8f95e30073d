from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self):
        from accounts import schema  # noqa: F401  the OpenAPI auth scheme
