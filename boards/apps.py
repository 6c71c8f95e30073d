from django.apps import AppConfig


class BoardsConfig(AppConfig):
    name = "boards"

    def ready(self):
        from boards import pull  # noqa: F401  connects the pull to the post-move signal
        from kandev import db  # noqa: F401  timestamps parsed in C on PostgreSQL
