"""Account pages kandev changes from Django's own."""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.shortcuts import render


class PasswordResetView(auth_views.PasswordResetView):
    """Django's password reset by e-mail, unless this server cannot send mail: then the page
    says so, and who can help, instead of pretending that a link is on its way."""

    def dispatch(self, request, *args, **kwargs):
        if not settings.KANDEV_CAN_SEND_EMAIL:
            status = 200 if request.method in ("GET", "HEAD") else 503
            return render(request, "registration/password_reset_unavailable.html", status=status)
        return super().dispatch(request, *args, **kwargs)
