from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"

    def ready(self):
        from agents import receivers  # noqa: F401  archive/delete end a task's sessions
