"""Who watches a task. Assignees, authors and commenters watch on their first involvement
(`involve`); anyone who can see the task watches or unwatches it by hand (`set_watching`),
and that choice stands: involvement never overrides an unwatch."""

import functools

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from boards.models import Task
from common import sql
from notifications.models import Watch
from workflows.models import Membership


def involve(task_ids_by_user: dict) -> None:
    """Make each (user, task) a watch unless the person already chose (either way)."""
    sql.fetch_together(*involvement(task_ids_by_user))


def involvement(task_ids_by_user: dict) -> list:
    """`involve()`'s statement as a `common.sql.fetch_together()` write (none when nobody
    is involved), to send with a read.

    One statement, after every create and assignment, so written by hand: a task or person
    deleted meanwhile is skipped, and on PostgreSQL their rows are locked as a foreign key
    check locks them, so a deletion under way either finishes first (and the row is skipped)
    or waits for this statement (and takes the watch with it)."""
    pairs = [(u, t) for u, tasks in task_ids_by_user.items() if u for t in tasks]
    if not pairs:
        return []
    params = [Watch._meta.get_field("created_at").get_db_prep_save(timezone.now(), connection)]
    for user_id, task_id in pairs:
        params += [user_id, sql.uuid_param(task_id)]
    return [(_involve_statement(len(pairs), connection.vendor), params, None)]


@functools.lru_cache(maxsize=64)
def _involve_statement(pairs: int, vendor: str) -> str:
    c = functools.partial(sql.column, Watch)
    user = get_user_model()
    task_id, user_id = sql.column(Task, "id"), sql.column(user, "id")
    if vendor == "postgresql":  # typed: a prepared statement's VALUES know no column's type
        pair = f"(%s::{user._meta.pk.db_type(connection)}, %s::{Task._meta.pk.db_type(connection)})"
    else:
        pair = "(%s, %s)"
    values = ", ".join([pair] * pairs)  # column1: the user, column2: the task
    lock = " FOR KEY SHARE OF t, u" if vendor == "postgresql" else ""  # SQLite writes one at a time
    return (
        f"INSERT INTO {sql.table(Watch)} ({c('user')}, {c('task')}, {c('watching')}, {c('created_at')})"
        f" SELECT u.{user_id}, t.{task_id}, TRUE, %s FROM (VALUES {values}) v"
        f" JOIN {sql.table(Task)} t ON t.{task_id} = v.column2 JOIN {sql.table(user)} u ON u.{user_id} = v.column1"
        f" WHERE TRUE{lock} ON CONFLICT DO NOTHING"
    )


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
