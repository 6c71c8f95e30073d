from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from accounts.api import ApiTokenViewSet
from boards.api import TaskViewSet
from kandev import views
from workflows.api import StepViewSet, TemplateListView, WorkflowViewSet, WorkspaceViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("workspaces", WorkspaceViewSet, basename="workspace")
router.register("workflows", WorkflowViewSet, basename="workflow")
router.register("steps", StepViewSet, basename="step")
router.register("tasks", TaskViewSet, basename="task")
router.register("tokens", ApiTokenViewSet, basename="token")

urlpatterns = [
    path("api/v1/", include(router.urls)),
    path("api/v1/workflow-templates/", TemplateListView.as_view(), name="workflow-templates"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("admin/", admin.site.urls),
]

# A database outage anywhere answers 503 with the API's error body (kandev.errors);
# unknown /api/ paths answer the API's 404 body.
handler500 = "kandev.errors.server_error"
handler404 = "kandev.errors.not_found"
