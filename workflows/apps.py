from django.apps import AppConfig


class WorkflowsConfig(AppConfig):
    name = "workflows"

    def ready(self):
        from workflows import engine  # noqa: F401  connects the step-event engine to admissions
