"""Access control: every endpoint × every kind of caller, from ONE table.

To add an endpoint, add a row to ENDPOINTS: its name, method, path (placeholders are
filled from the world `build_world` makes), body, and the expected status for each caller in ROLES
order. `test_every_route_and_method_is_in_the_table` fails for any URL route or OpenAPI
operation that has no row, so a new endpoint cannot be forgotten.

The board WebSocket and MCP over HTTP are not request/response endpoints: they have their
own small table, CHANNELS, with one outcome per role (the WebSocket: its close code or the
first message; MCP: the HTTP status or what the tool answered).
"""

import re
from dataclasses import dataclass

import httpx
import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import override_settings
from django.urls import get_resolver, resolve
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from accounts.models import ApiToken
from agents.services import session_start
from boards.admission import task_archive, task_create
from boards.attachments import attachment_add
from boards.blocker_types import blocker_type_create
from boards.checklists import checklist_add
from boards.comments import comment_create
from boards.labels import label_create
from boards.links import link_create
from boards.models import Task
from boards.routing import websocket_urlpatterns
from boards.structure import group_create, lane_create
from integrations.intake import intake_create
from integrations.mcp_http import PATH as MCP_PATH
from integrations.watch import watch_create
from kandev.asgi import application
from notifications import mail
from notifications.webhooks import webhook_create
from teams.invitations import invitation_create
from teams.services import invite_create
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
from tests.servers import Server, serving_test_database
from workflows.models import Role
from workflows.portable import export_document

ROLES = ("anonymous", "bad_token", "non_member", "viewer", "member", "owner", "staff")


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: str
    expected: str  # one status per role, in ROLES order
    body: dict | None = None

    def status_for(self, role: str) -> int:
        statuses = self.expected.split()
        assert len(statuses) == len(ROLES), f"{self.name}: {len(statuses)} statuses"
        return int(statuses[ROLES.index(role)])


#                anonymous  bad_token  non_member  viewer  member  owner  staff
ENDPOINTS = [
    Endpoint("workspace list", "GET", "/api/v1/workspaces/", "401 401 200 200 200 200 200"),
    Endpoint(
        "workspace create", "POST", "/api/v1/workspaces/", "401 401 201 201 201 201 201", {"name": "Another team"}
    ),
    Endpoint("workspace read", "GET", "/api/v1/workspaces/{workspace}/", "401 401 404 200 200 200 404"),
    Endpoint(
        "workspace edit", "PATCH", "/api/v1/workspaces/{workspace}/", "401 401 404 403 403 200 404", {"name": "Renamed"}
    ),
    Endpoint("workspace delete", "DELETE", "/api/v1/workspaces/{workspace}/", "401 401 404 403 403 204 404"),
    Endpoint("workflow list", "GET", "/api/v1/workflows/?workspace={workspace}", "401 401 200 200 200 200 200"),
    Endpoint(
        "workflow create",
        "POST",
        "/api/v1/workflows/",
        "401 401 400 403 201 201 400",
        {"workspace_id": "{workspace}", "name": "New board", "template": "kanban"},
    ),
    Endpoint("workflow read", "GET", "/api/v1/workflows/{workflow}/", "401 401 404 200 200 200 404"),
    Endpoint(
        "workflow edit", "PATCH", "/api/v1/workflows/{workflow}/", "401 401 404 403 200 200 404", {"name": "Renamed"}
    ),
    # A whole board holds everyone's tasks: only an owner may delete it.
    Endpoint("workflow delete", "DELETE", "/api/v1/workflows/{workflow}/", "401 401 404 403 403 204 404"),
    Endpoint("board", "GET", "/api/v1/workflows/{workflow}/board/", "401 401 404 200 200 200 404"),
    Endpoint("workflow history", "GET", "/api/v1/workflows/{workflow}/events/", "401 401 404 200 200 200 404"),
    Endpoint("flow cfd", "GET", "/api/v1/workflows/{workflow}/flow/cfd/", "401 401 404 200 200 200 404"),
    Endpoint("flow wip", "GET", "/api/v1/workflows/{workflow}/flow/wip/", "401 401 404 200 200 200 404"),
    Endpoint(
        "flow cycle-times", "GET", "/api/v1/workflows/{workflow}/flow/cycle-times/", "401 401 404 200 200 200 404"
    ),
    Endpoint("flow throughput", "GET", "/api/v1/workflows/{workflow}/flow/throughput/", "401 401 404 200 200 200 404"),
    Endpoint("flow aging", "GET", "/api/v1/workflows/{workflow}/flow/aging/", "401 401 404 200 200 200 404"),
    Endpoint("flow limits", "GET", "/api/v1/workflows/{workflow}/flow/limits/", "401 401 404 200 200 200 404"),
    Endpoint("flow queues", "GET", "/api/v1/workflows/{workflow}/flow/queues/", "401 401 404 200 200 200 404"),
    Endpoint("flow sle", "GET", "/api/v1/workflows/{workflow}/flow/sle/", "401 401 404 200 200 200 404"),
    Endpoint("flow advice", "GET", "/api/v1/workflows/{workflow}/flow/advice/", "401 401 404 200 200 200 404"),
    Endpoint(
        "flow experiments", "GET", "/api/v1/workflows/{workflow}/flow/experiments/", "401 401 404 200 200 200 404"
    ),
    Endpoint(
        "flow limit changes", "GET", "/api/v1/workflows/{workflow}/flow/limit-changes/", "401 401 404 200 200 200 404"
    ),
    # A service level is the owners' to set.
    Endpoint(
        "flow sle set",
        "PUT",
        "/api/v1/workflows/{workflow}/flow/sle/",
        "401 401 404 403 403 200 404",
        {"class_of_service": "standard", "days": 5},
    ),
    Endpoint("flow blockers", "GET", "/api/v1/workflows/{workflow}/flow/blockers/", "401 401 404 200 200 200 404"),
    Endpoint("flow efficiency", "GET", "/api/v1/workflows/{workflow}/flow/efficiency/", "401 401 404 200 200 200 404"),
    Endpoint(
        "flow forecast", "GET", "/api/v1/workflows/{workflow}/flow/forecast/?items=5", "401 401 404 200 200 200 404"
    ),
    Endpoint("templates", "GET", "/api/v1/workflow-templates/", "401 401 200 200 200 200 200"),
    Endpoint("step list", "GET", "/api/v1/steps/?workflow={workflow}", "401 401 200 200 200 200 200"),
    Endpoint(
        "step create",
        "POST",
        "/api/v1/steps/",
        "401 401 400 403 201 201 400",
        {"workflow_id": "{workflow}", "name": "QA", "wip_limit": 3},
    ),
    Endpoint("step read", "GET", "/api/v1/steps/{doing}/", "401 401 404 200 200 200 404"),
    Endpoint("step edit", "PATCH", "/api/v1/steps/{doing}/", "401 401 404 403 200 200 404", {"wip_limit": 5}),
    Endpoint("step delete", "DELETE", "/api/v1/steps/{spare}/", "401 401 404 403 204 204 404"),
    Endpoint(
        "step delete moving tasks",
        "DELETE",
        "/api/v1/steps/{done}/?move_tasks_to={backlog}",
        "401 401 404 403 204 204 404",
    ),
    Endpoint("group list", "GET", "/api/v1/step-groups/?workflow={workflow}", "401 401 200 200 200 200 200"),
    Endpoint(
        "group create",
        "POST",
        "/api/v1/step-groups/",
        "401 401 400 403 201 201 400",
        {"workflow_id": "{workflow}", "name": "Start", "wip_limit": 3, "step_ids": ["{backlog}", "{doing}"]},
    ),
    Endpoint("group read", "GET", "/api/v1/step-groups/{group}/", "401 401 404 200 200 200 404"),
    Endpoint("group edit", "PATCH", "/api/v1/step-groups/{group}/", "401 401 404 403 200 200 404", {"wip_limit": 5}),
    Endpoint("group delete", "DELETE", "/api/v1/step-groups/{group}/", "401 401 404 403 204 204 404"),
    Endpoint("task list", "GET", "/api/v1/tasks/?workflow={workflow}", "401 401 200 200 200 200 200"),
    Endpoint(
        "task create", "POST", "/api/v1/tasks/", "401 401 400 403 201 201 400", {"step_id": "{backlog}", "title": "New"}
    ),
    Endpoint("task read", "GET", "/api/v1/tasks/{task}/", "401 401 404 200 200 200 404"),
    Endpoint("task edit", "PATCH", "/api/v1/tasks/{task}/", "401 401 404 403 200 200 404", {"title": "Edited"}),
    Endpoint("task delete", "DELETE", "/api/v1/tasks/{task}/", "401 401 404 403 204 204 404"),
    Endpoint("task move", "POST", "/api/v1/tasks/{task}/move/", "401 401 404 403 200 200 404", {"step_id": "{done}"}),
    Endpoint(
        "task forced move",
        "POST",
        "/api/v1/tasks/{task}/move/",
        "401 401 404 403 403 200 404",
        {"step_id": "{doing}", "force": True, "reason": "hotfix"},
    ),
    Endpoint(
        "bulk move",
        "POST",
        "/api/v1/tasks/bulk-move/",
        "401 401 400 403 200 200 400",
        {"task_ids": ["{task}"], "step_id": "{done}"},
    ),
    Endpoint("task archive", "POST", "/api/v1/tasks/{task}/archive/", "401 401 404 403 200 200 404"),
    Endpoint("task restore", "POST", "/api/v1/tasks/{archived}/restore/", "401 401 404 403 200 200 404", {}),
    Endpoint(
        "task make permanent", "POST", "/api/v1/tasks/{scratch}/make-permanent/", "401 401 404 403 200 200 404", {}
    ),
    Endpoint(
        "task block", "POST", "/api/v1/tasks/{task}/block/", "401 401 404 403 200 200 404", {"reason": "waiting on ops"}
    ),
    Endpoint("task unblock", "POST", "/api/v1/tasks/{task}/unblock/", "401 401 404 403 200 200 404", {}),
    Endpoint("task links", "GET", "/api/v1/tasks/{task}/links/", "401 401 404 200 200 200 404"),
    Endpoint(
        "task link",
        "POST",
        "/api/v1/tasks/{task}/links/",
        "401 401 404 403 201 201 404",
        {"blocks_task_id": "{shipped}"},
    ),
    Endpoint("link delete", "DELETE", "/api/v1/links/{link}/", "401 401 404 403 204 204 404"),
    Endpoint("task history", "GET", "/api/v1/tasks/{task}/events/", "401 401 404 200 200 200 404"),
    Endpoint("member list", "GET", "/api/v1/workspaces/{workspace}/members/", "401 401 404 200 200 200 404"),
    Endpoint(
        "member add",
        "POST",
        "/api/v1/workspaces/{workspace}/members/",
        "401 401 404 403 403 202 404",
        {"username": "root", "role": "viewer"},
    ),
    Endpoint(
        "member edit",
        "PATCH",
        "/api/v1/workspaces/{workspace}/members/{member_user}/",
        "401 401 404 403 403 200 404",
        {"role": "viewer"},
    ),
    # Anyone may leave (the viewer removes themselves); only owners remove others.
    Endpoint(
        "member remove",
        "DELETE",
        "/api/v1/workspaces/{workspace}/members/{viewer_user}/",
        "401 401 404 204 403 204 404",
    ),
    # The signed-in person's own invitations: the world's one is addressed to the non-member.
    Endpoint("my invitations", "GET", "/api/v1/me/invitations/", "401 401 200 200 200 200 200"),
    Endpoint(
        "invitation accept", "POST", "/api/v1/me/invitations/{invitation}/accept/", "401 401 200 404 404 404 404", {}
    ),
    Endpoint(
        "invitation decline", "POST", "/api/v1/me/invitations/{invitation}/decline/", "401 401 200 404 404 404 404", {}
    ),
    Endpoint("invite list", "GET", "/api/v1/workspaces/{workspace}/invites/", "401 401 404 403 403 200 404"),
    Endpoint(
        "invite create",
        "POST",
        "/api/v1/workspaces/{workspace}/invites/",
        "401 401 404 403 403 201 404",
        {"role": "viewer"},
    ),
    Endpoint(
        "invite revoke", "DELETE", "/api/v1/workspaces/{workspace}/invites/{invite}/", "401 401 404 403 403 204 404"
    ),
    Endpoint("my account", "GET", "/api/v1/me/", "401 401 200 200 200 200 200"),
    Endpoint("my account edit", "PATCH", "/api/v1/me/", "401 401 200 200 200 200 200", {"name": "A. Person"}),
    Endpoint("token list", "GET", "/api/v1/tokens/", "401 401 200 200 200 200 200"),
    Endpoint("token create", "POST", "/api/v1/tokens/", "401 401 201 201 201 201 201", {"name": "ci"}),
    Endpoint("token revoke (the owner's)", "DELETE", "/api/v1/tokens/{owner_token}/", "401 401 404 404 404 204 404"),
    Endpoint("workflow export", "GET", "/api/v1/workflows/{workflow}/export/", "401 401 404 200 200 200 404"),
    Endpoint("workspace export", "GET", "/api/v1/workspaces/{workspace}/export/", "401 401 404 200 200 200 404"),
    Endpoint(
        "workflow import",
        "POST",
        "/api/v1/workspaces/{workspace}/workflows/import/",
        "401 401 404 403 201 201 404",
        "{export}",
    ),
    Endpoint(
        "trello import",
        "POST",
        "/api/v1/workspaces/{workspace}/import/trello/",
        "401 401 404 403 201 201 404",
        {"name": "From Trello", "lists": [{"id": "l1", "name": "To Do"}], "cards": [{"idList": "l1", "name": "Card"}]},
    ),
    # The matrix sends JSON: a member's CSV upload is then refused for its type (415), after
    # the access checks; tests/boards/test_imports.py sends real CSV.
    Endpoint("csv import", "POST", "/api/v1/workspaces/{workspace}/import/csv/", "401 401 404 403 415 415 404", {}),
    Endpoint("intake list", "GET", "/api/v1/intakes/?workflow={workflow}", "401 401 200 200 200 200 200"),
    Endpoint(
        "intake create",
        "POST",
        "/api/v1/intakes/",
        "401 401 400 403 201 201 400",
        {"workflow_id": "{workflow}", "name": "GitHub"},
    ),
    Endpoint("intake read", "GET", "/api/v1/intakes/{intake}/", "401 401 404 200 200 200 404"),
    Endpoint("intake take over", "POST", "/api/v1/intakes/{intake}/take-over/", "401 401 404 403 403 200 404"),
    # The owner made it: a member who is not its creator may not rotate its secret.
    Endpoint("intake secret", "POST", "/api/v1/intakes/{intake}/rotate-secret/", "401 401 404 403 403 200 404"),
    Endpoint("intake delete", "DELETE", "/api/v1/intakes/{intake}/", "401 401 404 403 204 204 404"),
    Endpoint("review watch list", "GET", "/api/v1/review-watches/?workflow={workflow}", "401 401 200 200 200 200 200"),
    Endpoint(
        "review watch create",
        "POST",
        "/api/v1/review-watches/",
        "401 401 400 403 201 201 400",
        {"workflow_id": "{workflow}", "repositories": ["acme/api"], "reviewer_login": "bot"},
    ),
    Endpoint("review watch read", "GET", "/api/v1/review-watches/{watch}/", "401 401 404 200 200 200 404"),
    Endpoint(
        "review watch edit",
        "PATCH",
        "/api/v1/review-watches/{watch}/",
        "401 401 404 403 200 200 404",
        {"enabled": False},
    ),
    Endpoint(
        "review watch take over",
        "POST",
        "/api/v1/review-watches/{watch}/take-over/",
        "401 401 404 403 403 200 404",
        {"token": "ghp-new-owner"},
    ),
    Endpoint("review watch delete", "DELETE", "/api/v1/review-watches/{watch}/", "401 401 404 403 204 204 404"),
    Endpoint("session list", "GET", "/api/v1/sessions/?workflow={workflow}", "401 401 200 200 200 200 200"),
    Endpoint("session read", "GET", "/api/v1/sessions/{session}/", "401 401 404 200 200 200 404"),
    Endpoint("session start", "POST", "/api/v1/tasks/{task}/sessions/", "401 401 404 403 201 201 404", {}),
    Endpoint("attachment list", "GET", "/api/v1/tasks/{task}/attachments/", "401 401 404 200 200 200 404"),
    # No file: past the access check, a field error (nothing is written).
    Endpoint("attachment upload", "POST", "/api/v1/tasks/{task}/attachments/", "401 401 404 403 400 400 404"),
    Endpoint("attachment download", "GET", "/api/v1/attachments/{attachment}/download/", "401 401 404 200 200 200 404"),
    # The owner attached it: another member may not delete it, an owner may.
    Endpoint("attachment delete", "DELETE", "/api/v1/attachments/{attachment}/", "401 401 404 403 403 204 404"),
    Endpoint("session claim", "POST", "/api/v1/sessions/claim/", "401 401 204 204 200 200 204", {}),
    Endpoint(
        "session event",
        "POST",
        "/api/v1/sessions/{session}/events/",
        "401 401 404 403 200 200 404",
        {"type": "heartbeat"},
    ),
    Endpoint("session cancel", "POST", "/api/v1/sessions/{session}/cancel/", "401 401 404 403 200 200 404", {}),
    # Signed by the intake's secret, not by a user: no user credential stands in for it.
    Endpoint(
        "webhook without signature",
        "POST",
        "/hooks/{intake}/",
        "403 403 403 403 403 403 403",
        {"title": "x", "external_ref": "gh:1"},
    ),
    Endpoint("metrics", "GET", "/metrics", "401 401 403 403 403 403 200"),
    # The browser pages: sign-in first (API tokens do not sign a browser in).
    # Card content: labels are the workspace's, the rest the task's.
    Endpoint("label list", "GET", "/api/v1/labels/?workspace={workspace}", "401 401 200 200 200 200 200"),
    Endpoint(
        "label create",
        "POST",
        "/api/v1/labels/",
        "401 401 400 403 201 201 400",
        {"workspace_id": "{workspace}", "name": "Ops", "color": "blue"},
    ),
    Endpoint("label read", "GET", "/api/v1/labels/{label}/", "401 401 404 200 200 200 404"),
    Endpoint("label update", "PATCH", "/api/v1/labels/{label}/", "401 401 404 403 200 200 404", {"name": "Defect"}),
    Endpoint("label delete", "DELETE", "/api/v1/labels/{label}/", "401 401 404 403 204 204 404"),
    # Blocker types are the workspace's too; only owners keep the list.
    Endpoint("blocker type list", "GET", "/api/v1/blocker-types/?workspace={workspace}", "401 401 200 200 200 200 200"),
    Endpoint(
        "blocker type create",
        "POST",
        "/api/v1/blocker-types/",
        "401 401 400 403 403 201 400",
        {"workspace_id": "{workspace}", "name": "Environment"},
    ),
    Endpoint("blocker type read", "GET", "/api/v1/blocker-types/{blocker_type}/", "401 401 404 200 200 200 404"),
    Endpoint(
        "blocker type rename",
        "PATCH",
        "/api/v1/blocker-types/{blocker_type}/",
        "401 401 404 403 403 200 404",
        {"name": "Supplier"},
    ),
    Endpoint("blocker type delete", "DELETE", "/api/v1/blocker-types/{blocker_type}/", "401 401 404 403 403 204 404"),
    Endpoint("checklist", "GET", "/api/v1/tasks/{task}/checklist/", "401 401 404 200 200 200 404"),
    Endpoint(
        "checklist add", "POST", "/api/v1/tasks/{task}/checklist/", "401 401 404 403 201 201 404", {"text": "Review"}
    ),
    Endpoint(
        "checklist tick", "PATCH", "/api/v1/checklist-items/{item}/", "401 401 404 403 200 200 404", {"done": True}
    ),
    Endpoint("checklist item delete", "DELETE", "/api/v1/checklist-items/{item}/", "401 401 404 403 204 204 404"),
    Endpoint("comments", "GET", "/api/v1/tasks/{task}/comments/", "401 401 404 200 200 200 404"),
    Endpoint("comment add", "POST", "/api/v1/tasks/{task}/comments/", "401 401 404 403 201 201 404", {"body": "Yes."}),
    # The owner wrote it: only its author edits; its author or an owner deletes.
    Endpoint("comment edit", "PATCH", "/api/v1/comments/{comment}/", "401 401 404 403 403 200 404", {"body": "No."}),
    Endpoint("comment delete", "DELETE", "/api/v1/comments/{comment}/", "401 401 404 403 403 204 404"),
    Endpoint("board activity", "GET", "/api/v1/workflows/{workflow}/activity/", "401 401 404 200 200 200 404"),
    Endpoint("workspace activity", "GET", "/api/v1/workspaces/{workspace}/activity/", "401 401 404 200 200 200 404"),
    # Watching and news: anyone who sees the task watches it; the inbox is your own.
    Endpoint("task watch", "POST", "/api/v1/tasks/{task}/watch/", "401 401 404 200 200 200 404", {}),
    Endpoint("task unwatch", "POST", "/api/v1/tasks/{task}/unwatch/", "401 401 404 200 200 200 404", {}),
    Endpoint("notifications", "GET", "/api/v1/notifications/", "401 401 200 200 200 200 200"),
    Endpoint("notifications read", "POST", "/api/v1/notifications/read/", "401 401 200 200 200 200 200", {"all": True}),
    # Outbound webhooks are the owners'.
    Endpoint("webhook list", "GET", "/api/v1/webhooks/?workspace={workspace}", "401 401 200 200 200 200 200"),
    Endpoint(
        "webhook create",
        "POST",
        "/api/v1/webhooks/",
        "401 401 400 403 403 201 400",
        {"workspace_id": "{workspace}", "url": "https://hooks.example.com/new", "events": ["task.created"]},
    ),
    Endpoint("webhook read", "GET", "/api/v1/webhooks/{webhook}/", "401 401 404 403 403 200 404"),
    Endpoint(
        "webhook update",
        "PATCH",
        "/api/v1/webhooks/{webhook}/",
        "401 401 404 403 403 200 404",
        {"events": ["task.created"]},
    ),
    Endpoint("webhook delete", "DELETE", "/api/v1/webhooks/{webhook}/", "401 401 404 403 403 204 404"),
    # Lanes are the board's, written like its steps.
    Endpoint("lane list", "GET", "/api/v1/lanes/?workflow={workflow}", "401 401 200 200 200 200 200"),
    Endpoint(
        "lane create",
        "POST",
        "/api/v1/lanes/",
        "401 401 400 403 201 201 400",
        {"workflow_id": "{workflow}", "name": "Support"},
    ),
    Endpoint("lane read", "GET", "/api/v1/lanes/{lane}/", "401 401 404 200 200 200 404"),
    Endpoint("lane update", "PATCH", "/api/v1/lanes/{lane}/", "401 401 404 403 200 200 404", {"wip_limit": 3}),
    Endpoint("lane delete", "DELETE", "/api/v1/lanes/{lane}/", "401 401 404 403 204 204 404"),
    Endpoint("lane cells", "GET", "/api/v1/lanes/{lane}/cells/", "401 401 404 200 200 200 404"),
    Endpoint(
        "lane cells set",
        "PUT",
        "/api/v1/lanes/{lane}/cells/",
        "401 401 404 403 200 200 404",
        [{"step_id": "{doing}", "wip_limit": 1}],
    ),
    Endpoint("board activity page", "GET", "/workflows/{workflow}/activity/", "302 302 404 200 200 200 404"),
    Endpoint("workspace activity page", "GET", "/workspaces/{workspace}/activity/", "302 302 404 200 200 200 404"),
    Endpoint("inbox page", "GET", "/inbox/", "302 302 200 200 200 200 200"),
    Endpoint("webhooks page", "GET", "/workspaces/{workspace}/webhooks/", "302 302 404 403 403 200 404"),
    # The e-mail's link works without signing in: the signed token is the authority.
    Endpoint("unsubscribe page", "GET", "/unsubscribe/{unsubscribe}/", "200 200 200 200 200 200 200"),
    Endpoint("home page", "GET", "/", "302 302 200 200 200 200 200"),
    Endpoint("board page", "GET", "/workflows/{workflow}/", "302 302 404 200 200 200 404"),
    Endpoint("task detail page", "GET", "/workflows/{workflow}/tasks/{task}/", "302 302 404 200 200 200 404"),
    Endpoint("flow page", "GET", "/workflows/{workflow}/flow/", "302 302 404 200 200 200 404"),
    Endpoint("archive page", "GET", "/workflows/{workflow}/archive/", "302 302 404 200 200 200 404"),
    Endpoint("step settings page", "GET", "/workflows/{workflow}/settings/", "302 302 404 403 200 200 404"),
    Endpoint("members page", "GET", "/workspaces/{workspace}/members/", "302 302 404 200 200 200 404"),
    # The link moves its token into the session and goes on to the invite page; that page
    # without an opened link is not found.
    Endpoint("invite link", "GET", "/invites/{invite_token}/", "302 302 302 302 302 302 302"),
    Endpoint("invite page", "GET", "/invites/accept/", "404 404 404 404 404 404 404"),
    Endpoint("sign-in page", "GET", "/accounts/login/", "200 200 200 200 200 200 200"),
    Endpoint("sign out", "POST", "/accounts/logout/", "302 302 302 302 302 302 302", {}),
    Endpoint("profile page", "GET", "/accounts/profile/", "302 302 200 200 200 200 200"),
    Endpoint("API tokens page", "GET", "/accounts/tokens/", "302 302 200 200 200 200 200"),
    # Off unless the operator turns them on (KANDEV_OPEN_SIGNUP, KANDEV_OIDC_ISSUER).
    Endpoint("sign-up page", "GET", "/accounts/signup/", "404 404 404 404 404 404 404"),
    Endpoint("OpenID sign-in", "GET", "/accounts/oidc/start/", "404 404 404 404 404 404 404"),
    Endpoint("OpenID callback", "GET", "/accounts/oidc/callback/", "404 404 404 404 404 404 404"),
    Endpoint("password change", "GET", "/accounts/password_change/", "302 302 200 200 200 200 200"),
    Endpoint("password changed", "GET", "/accounts/password_change/done/", "302 302 200 200 200 200 200"),
    Endpoint("password reset", "GET", "/accounts/password_reset/", "200 200 200 200 200 200 200"),
    Endpoint("password reset sent", "GET", "/accounts/password_reset/done/", "200 200 200 200 200 200 200"),
    Endpoint("password reset link", "GET", "/accounts/reset/MQ/bad-token/", "200 200 200 200 200 200 200"),
    Endpoint("password reset done", "GET", "/accounts/reset/done/", "200 200 200 200 200 200 200"),
    # Public documentation of the API (no data), and the probes.
    Endpoint("OpenAPI schema", "GET", "/api/schema/", "200 401 200 200 200 200 200"),
    Endpoint("API docs", "GET", "/api/docs/", "200 401 200 200 200 200 200"),
    Endpoint("liveness", "GET", "/healthz", "200 200 200 200 200 200 200"),
    Endpoint("readiness", "GET", "/readyz", "200 200 200 200 200 200 200"),
    # Django's admin: staff only, by session (API tokens are not admin credentials).
    Endpoint("admin", "GET", "/admin/", "302 302 302 302 302 302 200"),
]


def build_world():
    owner = UserFactory(username="olivia")
    workflow = WorkflowFactory(name="Delivery")
    workspace = workflow.workspace
    MembershipFactory(workspace=workspace, user=owner, role=Role.OWNER)
    users = {"owner": owner, "staff": UserFactory(username="root", is_staff=True)}
    for role in (Role.MEMBER, Role.VIEWER):
        users[role.value] = MembershipFactory(workspace=workspace, role=role).user
    # A non-member is an owner elsewhere: their own workspace gives them nothing here.
    users["non_member"] = MembershipFactory(role=Role.OWNER).user
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
    doing = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=2, pull_from_step=backlog)
    done = StepFactory(workflow=workflow, name="Done", position=2)
    spare = StepFactory(workflow=workflow, name="Spare", position=3)
    group = group_create(workflow=workflow, actor=owner, name="Finish", wip_limit=10, step_ids=[done.pk, spare.pk])

    def create(step, title, **kw):
        return task_create(workflow=workflow, step=step, actor=owner, title=title, **kw).task

    task = create(backlog, "Write the brief")
    shipped = create(done, "Shipped")
    archived = create(done, "Old")  # restored into Done, which has no limit
    task_archive(task=archived, actor=owner)
    link = link_create(blocker=archived, dependent=shipped, actor=owner, field="blocks_task_id")  # blocks nothing
    scratch = create(backlog, "Scratch", is_ephemeral=True)
    owner_token, _ = ApiToken.issue(user=owner)
    intake, _ = intake_create(workflow=workflow, step=None, actor=owner, name="hooks")
    watch = watch_create(
        workflow=workflow, step=None, actor=owner, repositories=["acme/web"], reviewer_login="reviewer"
    )
    session = session_start(task=create(backlog, "Agent work"), actor=owner)
    attachment = attachment_add(task=task, actor=owner, upload=SimpleUploadedFile("brief.txt", b"brief", "text/plain"))
    label = label_create(workspace_id=workspace.pk, actor=owner, name="Bug", color="red")
    blocker_type = blocker_type_create(workspace_id=workspace.pk, actor=owner, name="Vendor")
    item = checklist_add(task=task, actor=owner, text="Outline")
    comment = comment_create(task=task, author=owner, body="A first draft by Friday?")
    webhook, _ = webhook_create(
        workspace=workspace, url="https://hooks.example.com/k", events=["task.moved"], actor=owner
    )
    lane = lane_create(workflow=workflow, actor=owner, name="Ops")
    invite, invite_token = invite_create(workspace=workspace, role=Role.MEMBER, actor=owner)
    invitation = invitation_create(
        workspace=workspace, actor=owner, role=Role.MEMBER, username=users["non_member"].username
    )
    ids = {
        "workspace": workspace.pk,
        "workflow": workflow.pk,
        "backlog": backlog.pk,
        "doing": doing.pk,
        "done": done.pk,
        "spare": spare.pk,
        "group": group.pk,
        "task": task.pk,
        "shipped": shipped.pk,
        "link": link.pk,
        "archived": archived.pk,
        "scratch": scratch.pk,
        "owner_token": owner_token.pk,
        "intake": intake.pk,
        "watch": watch.pk,
        "session": session.pk,
        "attachment": attachment.pk,
        "label": label.pk,
        "blocker_type": blocker_type.pk,
        "item": item.pk,
        "comment": comment["id"],
        "webhook": webhook.pk,
        "lane": lane.pk,
        "unsubscribe": mail.unsubscribe_token(users["member"].pk, mail.ALL_KINDS),
        "member_user": users["member"].pk,
        "viewer_user": users["viewer"].pk,
        "invite": invite.pk,
        "invite_token": invite_token,
        "invitation": invitation.pk,
    }
    ids = {k: str(v) for k, v in ids.items()}
    ids["export"] = export_document([workflow])
    return users, ids


@pytest.fixture(scope="module", autouse=True)
def media(tmp_path_factory):
    """The worlds' attachments are kept in a folder of this module."""
    location = str(tmp_path_factory.mktemp("media"))
    with override_settings(
        STORAGES={**settings.STORAGES, "default": {**settings.STORAGES["default"], "OPTIONS": {"location": location}}}
    ):
        yield


@pytest.fixture
def world(db):
    """The world, committed where a test needs it so (its server or consumer reads it)."""
    return build_world()


@pytest.fixture(scope="class")
def one_world(django_db_setup, django_db_blocker):
    """The world built once for a whole class of cases, in a transaction rolled back after
    the last: each case runs in a savepoint of it (pytest-django's `db`, set up after this
    fixture), so what one case writes (an edit, a delete) is gone before the next."""
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer._from_testcase = True  # as TestCase's own: the services' durable blocks nest in it
        outer.__enter__()
        made = build_world()
    yield made
    with django_db_blocker.unblock():
        transaction.set_rollback(True)
        outer.__exit__(None, None, None)


def caller(role: str, users: dict) -> APIClient:
    """Each member role signs in by session and carries an API token, as real clients do."""
    client = APIClient()
    if role == "bad_token":
        client.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    elif role != "anonymous":
        user = users[role]
        client.force_login(user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.issue(user=user)[1]}")
    return client


def filled(value, ids):
    if isinstance(value, str) and value.strip("{}") in ids and isinstance(ids[value.strip("{}")], dict):
        return ids[value.strip("{}")]  # a whole document from the world
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, list):
        return [filled(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: filled(v, ids) for k, v in value.items()}
    return value


def _routes(patterns, prefix=""):
    """Every route as ResolverMatch.route spells it (an included regex loses its "^")."""
    for pattern in patterns:
        route = prefix + str(pattern.pattern).removeprefix("^")
        if hasattr(pattern, "url_patterns"):
            yield from _routes(pattern.url_patterns, route)
        else:
            yield route


class TestEndpoints:
    """ENDPOINTS, every row for every role, against one world (`one_world`)."""

    @pytest.mark.parametrize("role", ROLES)
    @pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.name for e in ENDPOINTS])
    def test_access(self, endpoint, role, one_world, db, pages):
        users, ids = one_world
        client = caller(role, users)
        path, body = filled(endpoint.path, ids), filled(endpoint.body, ids)
        if body is None:
            response = client.generic(endpoint.method, path)
        else:
            response = getattr(client, endpoint.method.lower())(path, body, format="json")
        assert response.status_code == endpoint.status_for(role), response.content[:300]
        if response.status_code in (401, 403, 404) and path.startswith("/api/v1/"):
            body = response.json()
            assert set(body) == {"code", "detail"}, body
            # A refusal names nothing of what it guards.
            for secret in ("Write the brief", "Delivery", ids["task"]):
                assert secret not in response.content.decode()

    def test_every_route_and_method_is_in_the_table(self, one_world, db):
        _, ids = one_world
        covered = {resolve(filled(e.path, ids).split("?")[0]).route for e in ENDPOINTS}
        routes = {
            r
            for r in _routes(get_resolver().url_patterns)
            if not r.startswith("admin/") or r == "admin/"  # the admin's own pages: one row
            if "(?P<format>" not in r
        }
        assert routes - covered == set()

        schema = SchemaGenerator().get_schema(request=None, public=True)
        operations = {(method.upper(), path) for path, item in schema["paths"].items() for method in item}

        def shape(path: str) -> str:  # the world's placeholder names are not the schema's
            return re.sub(r"\{[^}]+\}", "{}", path.split("?")[0])

        rows = {(e.method, shape(e.path)) for e in ENDPOINTS}
        assert {(method, shape(path)) for method, path in operations} - rows == set()


@dataclass(frozen=True)
class Channel:
    name: str
    path: str
    expected: str  # one outcome per role, in ROLES order
    tool: str = ""  # MCP: the tool called after initialize
    arguments: dict | None = None

    def outcome_for(self, role: str) -> str:
        outcomes = self.expected.split()
        assert len(outcomes) == len(ROLES), f"{self.name}: {len(outcomes)} outcomes"
        return outcomes[ROLES.index(role)]


#                anonymous  bad_token  non_member  viewer  member  owner  staff
CHANNELS = [
    # 4403: refused at connect (a `?token=` key; none for anonymous); snapshot: accepted.
    Channel("board websocket", "/ws/workflows/{workflow}/", "4403 4403 4403 snapshot snapshot snapshot 4403"),
    Channel(
        "MCP get_board",
        MCP_PATH,
        "401 401 not_found board board board not_found",
        "get_board",
        {"workflow_id": "{workflow}"},
    ),
    # As in REST's "task create": a step the caller cannot see is invalid input, like one
    # that does not exist.
    Channel(
        "MCP create_task",
        MCP_PATH,
        "401 401 invalid permission_denied created created invalid",
        "create_task",
        {"step_id": "{backlog}", "title": "Via MCP"},
    ),
    Channel(
        "MCP update_group",
        MCP_PATH,
        "401 401 not_found permission_denied updated updated not_found",
        "update_group",
        {"group_id": "{group}", "wip_limit": 4},
    ),
]
WEBSOCKETS = [c for c in CHANNELS if c.path.startswith("/ws/")]
MCP_CALLS = [c for c in CHANNELS if c.path == MCP_PATH]


def token_for(role: str, users: dict) -> str | None:
    if role == "anonymous":
        return None
    if role == "bad_token":
        return "0" * 40
    return ApiToken.issue(user=users[role])[1]


def assert_leaks_nothing(text: str, ids: dict) -> None:
    for secret in ("Write the brief", "Delivery", ids["task"], ids["backlog"]):
        assert secret not in text


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("channel", WEBSOCKETS, ids=[c.name for c in WEBSOCKETS])
def test_websocket_access(channel, role, world):
    users, ids = world
    key = token_for(role, users)
    path = channel.path.format(**ids) + (f"?token={key}" if key else "")
    viewer = WebsocketCommunicator(
        application, path, headers=[(b"host", b"testserver"), (b"origin", b"http://testserver")]
    )

    async def first_outcome() -> str:
        connected, code = await viewer.connect()
        if not connected:
            return str(code)
        message = await viewer.receive_json_from(timeout=5)
        await viewer.disconnect()
        assert message["board"]["workflow"]["id"] == ids["workflow"]
        return message["type"].removeprefix("board.")

    assert async_to_sync(first_outcome)() == channel.outcome_for(role)


@pytest.fixture(scope="module")
def mcp_base(django_db_setup, django_db_blocker):
    """One real uvicorn for every MCP row; it serves each test's committed world."""
    with django_db_blocker.unblock(), Server(serving_test_database()) as server:
        yield server.url


def mcp_outcome(base: str, key: str | None, channel: Channel, ids: dict) -> str:
    """initialize, then one tools/call, as raw JSON-RPC over streamable HTTP."""
    headers = {"Accept": "application/json, text/event-stream"}
    if key is not None:
        headers["Authorization"] = f"Token {key}"
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        initialize = client.post(
            MCP_PATH,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "matrix", "version": "1"},
                },
            },
        )
        if initialize.status_code != 200:
            assert_leaks_nothing(initialize.text, ids)
            return str(initialize.status_code)
        version = initialize.json()["result"]["protocolVersion"]
        called = client.post(
            MCP_PATH,
            headers={"MCP-Protocol-Version": version},
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": channel.tool, "arguments": filled(channel.arguments, ids)},
            },
        )
    assert called.status_code == 200, called.text[:300]
    result = called.json()["result"]
    answer = result["structuredContent"]
    if result.get("isError"):
        assert set(answer) - {"errors"} == {"code", "detail"}, answer
        assert_leaks_nothing(called.text, ids)
        return answer["code"]
    if channel.tool == "get_board":
        assert answer["workflow"]["id"] == ids["workflow"]
        return "board"
    if channel.tool == "update_group":
        assert (answer["id"], answer["wip_limit"]) == (ids["group"], 4)
        return "updated"
    assert answer["step_id"] == ids["backlog"]
    return "created"


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("channel", MCP_CALLS, ids=[c.name for c in MCP_CALLS])
def test_mcp_access(channel, role, world, mcp_base):
    users, ids = world
    outcome = mcp_outcome(mcp_base, token_for(role, users), channel, ids)
    assert outcome == channel.outcome_for(role)
    created = Task.objects.filter(title="Via MCP").exists()
    assert created == (outcome == "created")  # a refusal leaves nothing


def test_every_websocket_route_and_mcp_is_in_the_table(world):
    _, ids = world
    covered = {c.path.format(**ids) for c in CHANNELS}
    for route in websocket_urlpatterns:
        assert any(route.pattern.match(path.lstrip("/")) for path in covered), route.pattern
    assert MCP_PATH in covered
