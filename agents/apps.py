from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"

    def ready(self):
        from agents import receivers  # noqa: F401  archive/delete end a task's sessions
        from agents.services import admit_session
        from boards import step_events

        step_events.register_action("auto_start_agent", admit_session)
