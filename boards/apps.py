from django.apps import AppConfig


class BoardsConfig(AppConfig):
    name = "boards"

    def ready(self):
        from boards import (
            attachments,  # noqa: F401  a deleted attachment's file goes when the deletion commits
            revocation,  # noqa: F401  access lost closes open sockets
            step_events,  # noqa: F401  connects the step-event engine to admissions
        )
