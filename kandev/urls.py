import re

from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from accounts.api import ApiTokenViewSet
from accounts.urls import api_urlpatterns as accounts_api
from accounts.urls import page_urlpatterns as accounts_pages
from agents.api import SessionViewSet, TaskSessionsView
from boards.activity_api import WorkflowActivityView, WorkspaceActivityView
from boards.api import TaskViewSet
from boards.attachment_api import AttachmentViewSet, TaskAttachmentsView
from boards.card_api import BlockerTypeViewSet, ChecklistItemViewSet, LabelViewSet, TaskChecklistView
from boards.comment_api import CommentView, TaskCommentsView
from boards.links_api import LinkView, TaskLinksView
from boards.workflow_api import (
    LaneViewSet,
    StepGroupViewSet,
    StepViewSet,
    TemplateListView,
    WorkflowViewSet,
    WorkspaceViewSet,
)
from flow.urls import api_urlpatterns as flow_api
from flow.urls import page_urlpatterns as flow_pages
from integrations.api import IntakeViewSet, ReviewWatchViewSet
from integrations.webhooks import hook
from kandev import views
from kandev.metrics_view import metrics_view
from notifications.urls import api_urlpatterns as notifications_api
from notifications.urls import page_urlpatterns as notifications_pages
from teams.urls import api_urlpatterns as teams_api
from teams.urls import page_urlpatterns as teams_pages

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("workspaces", WorkspaceViewSet, basename="workspace")
router.register("workflows", WorkflowViewSet, basename="workflow")
router.register("steps", StepViewSet, basename="step")
router.register("step-groups", StepGroupViewSet, basename="step-group")
router.register("lanes", LaneViewSet, basename="lane")
router.register("tasks", TaskViewSet, basename="task")
router.register("labels", LabelViewSet, basename="label")
router.register("blocker-types", BlockerTypeViewSet, basename="blocker-type")
router.register("checklist-items", ChecklistItemViewSet, basename="checklist-item")
router.register("attachments", AttachmentViewSet, basename="attachment")
router.register("intakes", IntakeViewSet, basename="intake")
router.register("review-watches", ReviewWatchViewSet, basename="review-watch")
router.register("sessions", SessionViewSet, basename="session")
router.register("tokens", ApiTokenViewSet, basename="token")

# The flow figures' paths (flow_api under api/v1/): kandev/asgi.py serves them on the
# analytics lane of kandev/requests.py, apart from the board reads.
ANALYTICS_PATH = re.compile(r"/api/v1/workflows/[^/]+/flow/")

urlpatterns = [
    path("api/v1/", include(router.urls)),
    path("api/v1/", include(accounts_api)),
    path("api/v1/", include(teams_api)),
    path("api/v1/", include(flow_api)),
    path("api/v1/", include(notifications_api)),
    path("api/v1/tasks/<uuid:task_id>/attachments/", TaskAttachmentsView.as_view(), name="task-attachments"),
    path("api/v1/tasks/<uuid:task_id>/sessions/", TaskSessionsView.as_view(), name="task-sessions"),
    path("api/v1/tasks/<uuid:task_id>/checklist/", TaskChecklistView.as_view(), name="task-checklist"),
    path("api/v1/tasks/<uuid:task_id>/links/", TaskLinksView.as_view(), name="task-links"),
    path("api/v1/links/<uuid:pk>/", LinkView.as_view(), name="link"),
    path("api/v1/workflow-templates/", TemplateListView.as_view(), name="workflow-templates"),
    path("api/v1/tasks/<uuid:task_id>/comments/", TaskCommentsView.as_view(), name="task-comments"),
    path("api/v1/comments/<uuid:pk>/", CommentView.as_view(), name="comment"),
    path("api/v1/workflows/<uuid:pk>/activity/", WorkflowActivityView.as_view(), name="workflow-activity"),
    path("api/v1/workspaces/<uuid:pk>/activity/", WorkspaceActivityView.as_view(), name="workspace-activity"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file (no inline script); its
    # page keeps one small <style> element, so only its styles may be inline.
    path(
        "api/docs/",
        csp_update({"style-src": [UNSAFE_INLINE]})(SpectacularSwaggerSplitView.as_view(url_name="schema")),
        name="api-docs",
    ),
    path("hooks/<uuid:intake_id>/", hook, name="hook"),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
]

urlpatterns += [
    path("", include(accounts_pages)),
    path("", include(teams_pages)),
    path("", include(flow_pages)),
    path("", include(notifications_pages)),
    path("", include("boards.urls")),
]

# A database outage anywhere answers 503 with the API's error body (common.errors);
# unknown /api/ paths answer the API's 404 body.
handler500 = "common.errors.server_error"
handler404 = "common.errors.not_found"
