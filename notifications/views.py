"""The inbox page, and the unsubscribe link of the e-mails (no sign-in needed: the signed
token is the authority; a mail program's one-click unsubscribe POSTs it without a CSRF token)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from accounts.models import NOTIFY_KINDS
from notifications import mail, news
from notifications.models import Notification

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
