from django.apps import AppConfig


class BoardsConfig(AppConfig):
    name = "boards"

    def ready(self):
        from kandev import db  # noqa: F401  timestamps parsed in C on PostgreSQL
