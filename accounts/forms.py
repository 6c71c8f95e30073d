"""The account pages' forms, worded for the person filling them in."""

from django import forms
from django.contrib.auth.forms import PasswordResetForm, UserCreationForm

from accounts import profiles
from accounts.models import NOTIFY_KINDS, Notify, Theme


def _too_long(what: str, limit: int) -> dict:
    return {"max_length": f"{what} can be at most {limit} characters long.", "required": f"Enter {what.lower()}."}


class SignUpForm(UserCreationForm):
    """A new account: a username, the e-mail that password resets reach, a password."""

    email = forms.EmailField(
        label="E-mail",
        max_length=254,
        help_text="Password reset links are sent here.",
        error_messages={**_too_long("Your e-mail", 254), "invalid": "Enter an e-mail address, like ana@example.com."},
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].error_messages["max_length"] = "A username can be at most 150 characters long."
        self.fields["email"].widget.attrs["autocomplete"] = "email"

    def clean_email(self):
        email = self.cleaned_data["email"].strip()
        if profiles.email_in_use(email):
            raise forms.ValidationError("An account with this e-mail already exists. Log in, or reset its password.")
        return email


class ProfileForm(forms.Form):
    name = forms.CharField(label="Name", max_length=150, required=False, error_messages=_too_long("Your name", 150))
    email = forms.EmailField(
        label="E-mail",
        max_length=254,
        error_messages={**_too_long("Your e-mail", 254), "invalid": "Enter an e-mail address, like ana@example.com."},
    )
    time_zone = forms.ChoiceField(
        label="Time zone",
        error_messages={"invalid_choice": "Choose a time zone from the list.", "required": "Choose a time zone."},
    )
    theme = forms.ChoiceField(
        label="Appearance",
        choices=Theme.choices,
        widget=forms.RadioSelect,
        error_messages={"invalid_choice": "Choose system, light or dark.", "required": "Choose an appearance."},
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["time_zone"].choices = [(zone, zone) for zone in profiles.time_zones()]
        for kind, label in NOTIFY_KINDS.items():
            self.fields[f"notify_{kind}"] = forms.ChoiceField(
                label=label,
                choices=Notify.choices,
                error_messages={"invalid_choice": "Choose one of the listed ways.", "required": "Choose one."},
            )

    def notify_fields(self):
        return [self[f"notify_{kind}"] for kind in NOTIFY_KINDS]

    def clean_email(self):
        email = self.cleaned_data["email"].strip()
        if profiles.email_in_use(email, besides=self.user):
            raise forms.ValidationError("Another account already uses this e-mail address.")
        return email

    def changes(self) -> dict:
        data = self.cleaned_data
        return {
            "name": data["name"],
            "email": data["email"],
            "time_zone": data["time_zone"],
            "theme": data["theme"],
            "notify": {kind: data[f"notify_{kind}"] for kind in NOTIFY_KINDS},
        }


class TokenForm(forms.Form):
    name = forms.CharField(
        label="Name",
        max_length=100,
        help_text="What the token is for, e.g. “CI deploys” or “my laptop”.",
        error_messages=_too_long("A token's name", 100),
    )


class ResetForm(PasswordResetForm):
    email = forms.EmailField(
        label="E-mail",
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
        error_messages={**_too_long("Your e-mail", 254), "invalid": "Enter an e-mail address, like ana@example.com."},
    )
