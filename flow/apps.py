from django.apps import AppConfig


class FlowConfig(AppConfig):
    name = "flow"
    verbose_name = "Flow analytics"

    def ready(self):
        from flow import receivers  # noqa: F401  (connects the cycle-time observation)
