from django.urls import include, path

from accounts import api, oidc, views

api_urlpatterns = [
    path("me/", api.MeView.as_view(), name="me"),
]

page_urlpatterns = [
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/profile/", views.profile, name="profile"),
    path("accounts/tokens/", views.tokens, name="tokens"),
    # Before Django's own: the reset page says when this server cannot send mail, and a reset
    # link that worked confirms the account's e-mail.
    path("accounts/password_reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path(
        "accounts/reset/<uidb64>/<token>/",
        views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    # mozilla-django-oidc reverses these two names.
    path("accounts/oidc/start/", oidc.SignInView.as_view(), name="oidc_authentication_init"),
    path("accounts/oidc/callback/", oidc.CallbackView.as_view(), name="oidc_authentication_callback"),
]
