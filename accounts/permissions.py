from rest_framework.permissions import BasePermission

from accounts.models import ApiToken


class ScopedTokenLimits(BasePermission):
    """A workspace-scoped token is a runner's credential: it may use the runner endpoints
    (views marked `runner_endpoint = True`) and nothing else."""

    message = "This token is scoped to one workspace's runner endpoints."

    def has_permission(self, request, view):
        token = request.auth
        if isinstance(token, ApiToken) and token.workspace_id is not None:
            return getattr(view, "runner_endpoint", False)
        return True
