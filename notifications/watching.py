"""Who watches a task. Assignees, authors and commenters watch on their first involvement
(`involve`); anyone who can see the task watches or unwatches it by hand (`set_watching`),
and that choice stands: involvement never overrides an unwatch."""

from django.db import transaction

from notifications.models import Watch
from notifications.news import insert_beside_tasks
from workflows.models import Membership


def involve(task_ids_by_user: dict) -> None:
    """Make each (user, task) a watch unless the person already chose (either way)."""
    rows = [Watch(user_id=u, task_id=t) for u, tasks in task_ids_by_user.items() if u for t in tasks]
    if rows:
        insert_beside_tasks(Watch, rows, ignore_conflicts=True)


def set_watching(*, user, task, watching: bool) -> None:
    with transaction.atomic():
        Watch.objects.update_or_create(user=user, task=task, defaults={"watching": watching})


def is_watching(user, task) -> bool:
    return Watch.objects.filter(user=user, task=task, watching=True).exists()


def watchers(task_ids, workspace_id) -> dict:
    """task id -> the ids of the people watching it who may still see it (members of its workspace)."""
    found: dict = {}
    members = Membership.objects.filter(workspace_id=workspace_id).values("user_id")
    for user_id, task_id in Watch.objects.filter(task_id__in=task_ids, watching=True, user_id__in=members).values_list(
        "user_id", "task_id"
    ):
        found.setdefault(task_id, set()).add(user_id)
    return found
