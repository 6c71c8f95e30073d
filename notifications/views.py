"""The inbox page, a workspace's outbound webhooks (owners), and the e-mails' unsubscribe
link (no sign-in needed: the signed token is the authority; a mail program's one-click
unsubscribe POSTs it without a CSRF token)."""

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from accounts.models import NOTIFY_KINDS
from common.errors import Forbidden
from common.outbound import url_errors
from notifications import mail, news, webhooks
from notifications.models import Notification, Webhook
from workflows.access import require_role
from workflows.models import Workspace

PAGE_SIZE = 50


@login_required
@require_http_methods(["GET", "POST"])
def inbox(request):
    if request.method == "POST":
        if request.POST.get("action") == "read-all":
            news.mark_read(request.user)
            messages.success(request, "All notifications are marked read.")
        else:
            ids = [int(v) for v in request.POST.getlist("id")[:PAGE_SIZE] if v.isascii() and v.isdigit()]
            news.mark_read(request.user, ids=ids)
        return redirect("inbox")
    found = (
        Notification.objects.filter(recipient=request.user, in_inbox=True)
        .select_related("actor")
        .order_by("-at", "-id")
    )
    page = Paginator(found, PAGE_SIZE).get_page(request.GET.get("page"))
    items = [{"item": item, "text": mail.describe(item)} for item in page]
    context = {"page": page, "items": items, "unread": news.unread_count(request.user)}
    return render(request, "notifications/inbox.html", context)


@csrf_exempt
@require_http_methods(["GET", "POST"])
def unsubscribe(request, token):
    target = mail.unsubscribe_target(token)
    if target is None:
        return render(request, "notifications/unsubscribe.html", {"invalid": True}, status=404)
    user_id, kind = target
    what = "all e-mails from kandev" if kind == mail.ALL_KINDS else f"e-mails when: {NOTIFY_KINDS[kind].lower()}"
    if request.method == "POST":
        mail.unsubscribe(user_id, kind)
        return render(request, "notifications/unsubscribe.html", {"done": True, "what": what})
    return render(request, "notifications/unsubscribe.html", {"what": what})


@login_required
@require_http_methods(["GET", "POST"])
def webhook_settings(request, workspace_id):
    """Owners subscribe URLs to the workspace's events (the secret shown on this one
    response), see how each last delivery went, and delete them."""
    try:
        require_role(request.user, workspace_id, owner=True)  # a stranger: 404
    except Forbidden:
        raise PermissionDenied("Only a workspace owner may manage its webhooks.") from None
    workspace = Workspace.objects.get(pk=workspace_id)
    issued, errors, chosen, url = None, [], [], ""
    if request.method == "POST" and request.POST.get("action") == "delete":
        webhook = Webhook.objects.filter(workspace=workspace, pk=_uuid_or_none(request.POST.get("webhook_id"))).first()
        if webhook is None:
            raise Http404
        webhooks.webhook_delete(webhook=webhook, actor=request.user)
        messages.success(request, f"The webhook to {webhook.url} was deleted.")
        return redirect("webhooks", workspace_id=workspace.pk)
    if request.method == "POST":
        url = request.POST.get("url", "").strip()[:2000]
        chosen = [e for e in request.POST.getlist("events") if e in webhooks.EVENT_TYPES]
        errors = (url_errors(url) if url else ["Enter the URL to send events to."]) + webhooks.events_errors(chosen)
        if not errors:
            webhook, secret = webhooks.webhook_create(workspace=workspace, url=url, events=chosen, actor=request.user)
            issued, chosen, url = {"webhook": webhook, "secret": secret}, [], ""
    context = {
        "workspace": workspace,
        "issued": issued,
        "errors": errors,
        "url": url,
        "event_types": [(e, e in chosen) for e in webhooks.EVENT_TYPES],
        "webhooks": Webhook.objects.filter(workspace=workspace).select_related("created_by"),
    }
    return render(request, "notifications/webhooks.html", context, status=400 if errors else 200)


def _uuid_or_none(value):
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None
