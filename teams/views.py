"""The invite link's page: a signed-in person joins with one click; a new person signs up
(username, password) and joins in the same step."""

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from teams import services
from teams.models import Invite, InviteState


def _landing(workspace):
    """Where a new member lands: the workspace's first board, else the home page."""
    board = workspace.workflows.order_by("created_at", "id").first()
    return reverse("board", args=[board.pk]) if board else reverse("home")


@require_http_methods(["GET", "POST"])
def invite(request, token):
    found = services.invite_for_token(token)
    if found is None:
        raise Http404
    state = found.state(timezone.now())
    form = UserCreationForm(request.POST or None) if not request.user.is_authenticated else None
    error = None
    if state is InviteState.OPEN and request.method == "POST":
        try:
            if form is None:
                services.invite_accept(token=token, user=request.user)
                return redirect(_landing(found.workspace))
            if form.is_valid():
                with transaction.atomic():  # no account is left behind by a link used meanwhile
                    user = form.save()
                    services.invite_accept(token=token, user=user)
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
                return redirect(_landing(found.workspace))
        except services.InviteUnusable as refused:
            state, error = refused.state, refused.detail
        except Invite.DoesNotExist:
            raise Http404 from None
    status = 200 if state is InviteState.OPEN else 410
    context = {"invite": found, "state": state, "form": form, "error": error, "token": token}
    return render(request, "teams/invite.html", context, status=status)
