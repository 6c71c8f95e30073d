from django.apps import AppConfig


class FlowConfig(AppConfig):
    name = "flow"
    verbose_name = "Flow analytics"

    def ready(self):
        from boards import outlook
        from flow import receivers  # noqa: F401  (connects the cycle-time observation)
        from flow.mcp import add_tools
        from flow.outlook import task_outlook
        from integrations import mcp_tools

        outlook.register(task_outlook)
        mcp_tools.register(add_tools)
