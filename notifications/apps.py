from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = "Notifications and outbound webhooks"

    def ready(self):
        from boards import watching as task_watching
        from integrations import credentials
        from notifications import receivers  # noqa: F401  the board's news, after commit
        from notifications.models import Webhook
        from notifications.watching import is_watching

        task_watching.register(is_watching)
        credentials.register(Webhook, workspace="workspace_id", owner=True)
