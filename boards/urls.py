from django.urls import path

from boards import views

urlpatterns = [
    path("", views.home, name="home"),
    path("workflows/<uuid:workflow_id>/", views.board, name="board"),
    path("workflows/<uuid:workflow_id>/tasks/<uuid:task_id>/", views.task_detail, name="task-detail"),
    path("workflows/<uuid:workflow_id>/archive/", views.archive, name="archive"),
    path("workflows/<uuid:workflow_id>/settings/", views.step_settings, name="step-settings"),
    path("workflows/<uuid:workflow_id>/activity/", views.workflow_activity, name="workflow-activity-page"),
    path("workspaces/<uuid:workspace_id>/activity/", views.workspace_activity, name="workspace-activity-page"),
]
