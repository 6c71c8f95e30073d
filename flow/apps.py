from django.apps import AppConfig


class FlowConfig(AppConfig):
    name = "flow"
    verbose_name = "Flow analytics"

    def ready(self):
        from boards import outlook
        from flow import receivers  # noqa: F401  (connects the cycle-time observation)
        from flow.outlook import task_outlook

        outlook.register(task_outlook)
