"""The account pages a person runs themselves: sign-up, profile, password, API tokens; and
the pages kandev changes from Django's own (password reset)."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts import profiles
from accounts.api import TokenCreateThrottle
from accounts.forms import ProfileForm, ResetForm, SignUpForm, TokenForm
from accounts.models import ApiToken


class PasswordResetView(auth_views.PasswordResetView):
    """Django's password reset by e-mail, unless this server cannot send mail: then the page
    says so, and who can help, instead of pretending that a link is on its way."""

    form_class = ResetForm

    def dispatch(self, request, *args, **kwargs):
        if not settings.KANDEV_CAN_SEND_EMAIL:
            status = 200 if request.method in ("GET", "HEAD") else 503
            return render(request, "registration/password_reset_unavailable.html", status=status)
        return super().dispatch(request, *args, **kwargs)


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """A reset link that worked came through the account's mailbox: its e-mail is its owner's."""

    def form_valid(self, form):
        profiles.mark_email_verified(form.user)
        return super().form_valid(form)


@require_http_methods(["GET", "POST"])
def signup(request):
    """Open sign-up, when the operator turned it on (KANDEV_OPEN_SIGNUP); invite links sign
    people up whatever it says."""
    if not settings.KANDEV_OPEN_SIGNUP:
        raise Http404
    if request.user.is_authenticated:
        return redirect("home")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.get_username()}. Create a workspace, or open an invite link.")
        return redirect("home")
    status = 400 if form.is_bound else 200
    return render(request, "registration/signup.html", {"form": form}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def profile(request):
    account = profiles.profile_of(request.user)
    initial = {
        "name": account.name,
        "email": request.user.email,
        "time_zone": account.time_zone,
        "theme": account.theme,
        **{f"notify_{kind}": choice for kind, choice in account.notify_choices().items()},
    }
    form = ProfileForm(request.POST or None, initial=initial, user=request.user)
    if request.method == "POST" and form.is_valid():
        account = profiles.profile_update(request.user, **form.changes())
        request.session[profiles.THEME_SESSION_KEY] = account.theme
        messages.success(request, "Your profile was saved.")
        return redirect("profile")
    status = 400 if form.is_bound else 200
    return render(request, "accounts/profile.html", {"form": form, "account": account}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request):
    """Create a token (its key shown on this one response, never stored), list, revoke."""
    form, issued = TokenForm(), None
    if request.method == "POST" and request.POST.get("action") == "revoke":
        token = ApiToken.objects.filter(user=request.user, pk=_int_or_none(request.POST.get("token_id"))).first()
        if token is None:
            raise Http404
        token.revoke()
        messages.success(request, f"The token “{token.name or token.prefix}” was revoked; its key no longer works.")
        return redirect("tokens")
    if request.method == "POST":
        form = TokenForm(request.POST)
        throttle = TokenCreateThrottle()
        if form.is_valid() and not throttle.allow_request(request, None):
            minutes = max(int(throttle.wait() or 60) // 60, 1)
            form.add_error(None, f"You have created many tokens lately. Try again in {minutes} minute(s).")
        if form.is_valid():
            token, key = ApiToken.issue(user=request.user, name=form.cleaned_data["name"])
            issued = {"token": token, "key": key}
            form = TokenForm()
    context = {
        "form": form,
        "issued": issued,
        "tokens": ApiToken.objects.filter(user=request.user).select_related("workspace").order_by("-created_at"),
    }
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "accounts/tokens.html", context, status=status)


def _int_or_none(value):
    return int(value) if isinstance(value, str) and value.isascii() and value.isdigit() else None
