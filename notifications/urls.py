from django.urls import path
from rest_framework.routers import DefaultRouter

from notifications import api, views

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("notifications", api.NotificationViewSet, basename="notification")
router.register("webhooks", api.WebhookViewSet, basename="webhook")

api_urlpatterns = [
    path("notifications/read/", api.MarkReadView.as_view(), name="notifications-read"),
    path("tasks/<uuid:task_id>/watch/", api.WatchView.as_view(), name="task-watch"),
    path("tasks/<uuid:task_id>/unwatch/", api.UnwatchView.as_view(), name="task-unwatch"),
    *router.urls,
]

page_urlpatterns = [
    path("inbox/", views.inbox, name="inbox"),
    path("unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
    path("workspaces/<uuid:workspace_id>/webhooks/", views.webhook_settings, name="webhooks"),
]
