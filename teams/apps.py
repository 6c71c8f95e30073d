from django.apps import AppConfig


class TeamsConfig(AppConfig):
    name = "teams"

    def ready(self):
        from teams import receivers  # noqa: F401  a deactivated account's links stop
