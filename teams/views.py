"""The teams pages: a workspace's members and invites, and the invite link's page (a
signed-in person joins with one click; a new person signs up and joins in the same step)."""

import uuid

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from accounts.forms import SignUpForm
from boards.selectors import with_occupied
from common.errors import Conflict, Invalid
from teams import invitations, services
from teams.models import Invitation, Invite, InviteState
from workflows.access import role_in
from workflows.models import Membership, Role, Workspace
from workflows.step_rules import MAX_WIP_LIMIT


def _landing(workspace):
    """Where a new member lands: the workspace's first board, else the home page."""
    board = workspace.workflows.order_by("created_at", "id").first()
    return reverse("board", args=[board.pk]) if board else reverse("home")


# The invite link's token, once opened: kept in the session, as Django's password reset keeps
# its token, so the page's address (and so the access log, a Referer, a sign-in link's
# `next=`) carries none.
INVITE_TOKEN = "invite_token"


@require_GET
def invite_link(request, token):
    """The link itself: its token moves into the session and the browser goes on to the
    invite page, so the token reaches at most this one request's log line."""
    if services.invite_for_token(token) is None:
        raise Http404
    request.session[INVITE_TOKEN] = token
    return redirect("invite-accept")


@require_http_methods(["GET", "POST"])
def invite(request):
    token = request.session.get(INVITE_TOKEN)
    found = services.invite_for_token(token) if token else None
    if found is None:
        raise Http404
    refusal = services.invite_refusal(found, timezone.now())
    state, error = (refusal.state, refusal.detail) if refusal else (InviteState.OPEN, None)
    form = SignUpForm(request.POST or None) if not request.user.is_authenticated else None
    if state is InviteState.OPEN and request.method == "POST":
        try:
            if form is None:
                services.invite_accept(token=token, user=request.user)
                request.session.pop(INVITE_TOKEN, None)
                return redirect(_landing(found.workspace))
            if form.is_valid():
                with transaction.atomic():  # no account is left behind by a link used meanwhile
                    user = form.save()
                    services.invite_accept(token=token, user=user)
                login(request, user, backend="django.contrib.auth.backends.ModelBackend")
                request.session.pop(INVITE_TOKEN, None)
                return redirect(_landing(found.workspace))
        except services.InviteUnusable as refused:
            state, error = refused.state, refused.detail
        except Invite.DoesNotExist:
            raise Http404 from None
    status = 200 if state is InviteState.OPEN else 410
    if status == 200 and form is not None and form.is_bound and form.errors:
        status = 400  # the sign-up's field errors, shown beside the fields
    context = {"invite": found, "state": state, "form": form, "error": error}
    return render(request, "teams/invite.html", context, status=status)


class AddMemberForm(forms.Form):
    who = forms.CharField(label="Username or e-mail", max_length=254)
    role = forms.ChoiceField(label="Role", choices=Role.choices, initial=Role.MEMBER)

    def clean_who(self):
        who = self.cleaned_data["who"].strip()
        if "@" in who:
            forms.EmailField().clean(who)
            return {"email": who}
        if len(who) > 150:
            raise forms.ValidationError("A username has at most 150 characters.")
        return {"username": who}


class WipLimitForm(forms.Form):
    wip_limit = forms.IntegerField(label="WIP limit", min_value=0, max_value=MAX_WIP_LIMIT)


class InviteForm(forms.Form):
    role = forms.ChoiceField(label="Role", choices=Role.choices, initial=Role.MEMBER)
    expires_in_days = forms.IntegerField(
        label="Expires in (days)", min_value=1, max_value=services.INVITE_DAYS_MAX, initial=services.INVITE_DAYS_DEFAULT
    )


def _apply(request, workspace, role: str):
    """One POSTed action of the members page; returns a link made now, if any."""
    action, owner = request.POST.get("action"), role == Role.OWNER
    user_id = request.POST.get("user_id", "")
    leaving = action == "remove" and user_id == str(request.user.pk)
    if not owner and not leaving:
        raise PermissionDenied("Only a workspace owner may change its members.")
    if action == "add":
        form = AddMemberForm(request.POST)
        if not form.is_valid():
            raise Invalid(form.errors)
        who, role = form.cleaned_data["who"], form.cleaned_data["role"]
        invitations.invitation_create(workspace=workspace, actor=request.user, role=role, **who)
        name = who.get("username") or who.get("email")
        messages.success(request, f"{name} is invited as {role}. They join once they accept.")
    elif action in ("role", "limit", "remove") and user_id.isascii() and user_id.isdigit():
        try:
            if action == "limit":
                form = WipLimitForm(request.POST)
                if not form.is_valid():
                    raise Invalid({"wip_limit": [f"WIP limit: {e}" for e in form.errors["wip_limit"]]})
                limit = form.cleaned_data["wip_limit"]
                services.member_update(workspace=workspace, user_id=int(user_id), wip_limit=limit, actor=request.user)
                messages.success(request, "The WIP limit was changed.")
            elif action == "role":
                if request.POST.get("role") not in Role.values:
                    raise Invalid({"role": ["Choose owner, member or viewer."]})
                services.member_update(
                    workspace=workspace, user_id=int(user_id), role=request.POST.get("role"), actor=request.user
                )
                messages.success(request, "The role was changed.")
            else:
                services.member_remove(workspace=workspace, user_id=int(user_id), actor=request.user)
                messages.success(request, "You left the workspace." if leaving else "The member was removed.")
        except Membership.DoesNotExist:
            raise Http404 from None
    elif action == "invite":
        form = InviteForm(request.POST)
        if not form.is_valid():
            raise Invalid(form.errors)
        _, token = services.invite_create(workspace=workspace, actor=request.user, **form.cleaned_data)
        return request.build_absolute_uri(reverse("invite", kwargs={"token": token}))
    elif action == "withdraw":
        try:
            invitation_id = _uuid_or_none(request.POST.get("invitation_id"))
            invitations.invitation_withdraw(workspace=workspace, invitation_id=invitation_id)
        except Invitation.DoesNotExist:
            raise Http404 from None
        messages.success(request, "The invitation was withdrawn.")
    elif action == "revoke":
        invite = Invite.objects.filter(workspace=workspace, pk=_uuid_or_none(request.POST.get("invite_id"))).first()
        if invite is None:
            raise Http404
        services.invite_revoke(invite=invite)
        messages.success(request, "The invite link was revoked.")
    else:
        raise Invalid({"action": ["Unknown action."]})
    return None


def _uuid_or_none(value):
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


@login_required
@require_http_methods(["GET", "POST"])
def members(request, workspace_id):
    """The members page: everyone sees who is in and their personal WIP limits; owners invite
    people (by name or e-mail, or with a link), change roles and limits, and remove members."""
    role = role_in(request.user, workspace_id)
    if role is None:
        raise Http404
    workspace = Workspace.objects.get(pk=workspace_id)
    new_link = None
    if request.method == "POST":
        try:
            new_link = _apply(request, workspace, role)
        except (Invalid, Conflict) as refused:
            errors = refused.extra.get("errors") if isinstance(refused, Invalid) else None
            for message in [m for ms in errors.values() for m in ms] if errors else [refused.detail]:
                messages.error(request, message)
        if not Membership.objects.filter(workspace=workspace, user=request.user).exists():
            return redirect("home")  # they left
        if new_link is None:
            return redirect(request.path)
    now = timezone.now()
    invites = Invite.objects.filter(workspace=workspace).select_related("created_by", "used_by")
    return render(
        request,
        "teams/members.html",
        {
            "workspace": workspace,
            "is_owner": role == Role.OWNER,
            "members": with_occupied(Membership.objects.filter(workspace=workspace).select_related("user")).order_by(
                "user__username"
            ),
            "roles": Role.choices,
            "invites": [(invite, invite.state(now)) for invite in invites] if role == Role.OWNER else [],
            "invitations": invitations.pending_in(workspace) if role == Role.OWNER else [],
            # Ids of their own: both forms have a "Role" field, and a label must find its own.
            "add_form": AddMemberForm(auto_id="add-%s"),
            "invite_form": InviteForm(auto_id="invite-%s"),
            "new_link": new_link,
        },
    )
