"""Seed a fresh database for a run: one workspace, a user per role, an API token each.

`python -m tests.stress.seed` (with DATABASE_URL) prints {"workspace_id", "tokens": {role: key}};
`seed(url)` runs it against `url` and returns that.
"""

import json
import os
import subprocess
import sys

import django

from tests.servers import ROOT, production_env


def seed(url: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "tests.stress.seed"],
        cwd=ROOT,
        env=production_env(url),
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev.settings")
    django.setup()
    from django.contrib.auth import get_user_model

    from accounts.models import ApiToken
    from workflows.models import Membership, Role
    from workflows.services import workspace_create

    users = {
        role: get_user_model().objects.create_user(username=role, password=None, is_staff=(role == "staff"))
        for role in ("owner", "member", "viewer", "outsider", "staff")
    }
    workspace = workspace_create(name="Stress", owner=users["owner"])
    Membership.objects.create(workspace=workspace, user=users["member"], role=Role.MEMBER)
    Membership.objects.create(workspace=workspace, user=users["viewer"], role=Role.VIEWER)
    tokens = {role: ApiToken.issue(user=user, name="stress")[1] for role, user in users.items()}
    print(json.dumps({"workspace_id": str(workspace.pk), "tokens": tokens}))


if __name__ == "__main__":
    main()
