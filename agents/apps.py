from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"

    def ready(self):
        from agents import receivers  # noqa: F401  archive/delete end a task's sessions
        from agents.board import SESSIONS
        from agents.services import admit_session
        from boards import sessions, step_events

        step_events.register_action("auto_start_agent", admit_session)
        sessions.register(SESSIONS)
