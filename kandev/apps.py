from django.apps import AppConfig


class KandevConfig(AppConfig):
    """The project's own start-up: database tweaks that belong to no app."""

    name = "kandev"

    def ready(self):
        from kandev import db  # noqa: F401  timestamps parsed in C on PostgreSQL
