from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = "Notifications and outbound webhooks"

    def ready(self):
        from boards import watching as task_watching
        from notifications import receivers  # noqa: F401  the board's news, after commit
        from notifications.watching import is_watching

        task_watching.register(is_watching)
