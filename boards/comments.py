"""Comments on tasks: Markdown notes with `@username` mentions of the workspace's members.

A comment's write is a change of its task's board (`task_change`): the task's
`comment_count` moves in the same transaction, the board's version advances and the one live
message (`comment.created`, `comment.updated` or `comment.deleted`) carries the task with its
new count and the comment. The body is stored as written; every viewer renders it through the
sanitizer the task descriptions use (static/board/detail.js `markdownFragment`).

Who may comment is the door's question (workflows/access.py: members and owners); who may
edit or delete a comment is this module's: its author edits it, its author or a workspace
owner deletes it. After commit, `boards.signals.comment_posted` tells who was mentioned.
"""

import re
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.functions import Lower

from boards.changes import board_change, task_change
from boards.locking import board_transaction
from boards.models import Comment, Task
from boards.signals import comment_posted
from common.errors import Forbidden
from workflows.models import Role

# `@` then a username's characters (Django's: letters, digits and @.+-_), not inside a word or
# an e-mail address; a sentence's full stop after the name is not part of it.
MENTION = re.compile(r"(?<![\w@.+-])@([\w.@+-]+)")
MENTIONS_MAX = 50  # names looked up per comment: a body cannot make the lookup unbounded


def mentioned_names(body: str) -> list[str]:
    """The distinct names a body mentions, in order, folded to lower case."""
    names = []
    for match in MENTION.finditer(body):
        name = match.group(1).rstrip(".").lower()
        if name and name not in names:
            names.append(name)
    return names[:MENTIONS_MAX]


def members_named(workspace_id, names):
    """The workspace's members (any role) of these lower-cased usernames."""
    users = get_user_model().objects.annotate(folded=Lower("username"))
    return users.filter(folded__in=names, memberships__workspace_id=workspace_id)


def members_mentioned(workspace_id, body: str) -> list:
    """The workspace's members that `body` mentions by username, by username; a name that
    is nobody's here is plain text."""
    names = mentioned_names(body)
    return list(members_named(workspace_id, names).order_by("username")) if names else []


def comment_data(comment: Comment, mentions) -> dict:
    """A comment as the API, the feed and live messages show it; `mentions` its mentioned users."""
    return {
        "id": str(comment.pk),
        "task_id": str(comment.task_id),
        "author": comment.author.username if comment.author_id else None,
        "body": comment.body,
        "created_at": comment.created_at.isoformat(),
        "edited_at": comment.edited_at.isoformat() if comment.edited_at else None,
        "mentions": [user.username for user in mentions],
    }


def comments_of(task: Task):
    """A task's comments, oldest first, with what their JSON reads."""
    return (
        Comment.objects.filter(task_id=task.pk, workflow_id=task.workflow_id)
        .select_related("author")
        .prefetch_related("mentions")
        .order_by("created_at", "id")
    )


@dataclass
class ImportedComment:
    """A comment brought by an import (boards/imports.py): its author a member's id or None."""

    author_id: int | None
    body: str
    created_at: datetime | None = None
    edited_at: datetime | None = None


def insert_imported(change, tasks: list) -> None:
    """The comments of imported tasks [(task, [ImportedComment])], written with them (their
    `comment_count` already counts them), mentions resolved against the workspace's members
    in one query."""
    rows = [
        (
            Comment(
                task=task,
                workflow_id=task.workflow_id,
                author_id=c.author_id,
                body=c.body,
                created_at=c.created_at or change.now,
                edited_at=c.edited_at,
            ),
            mentioned_names(c.body),
        )
        for task, comments in tasks
        for c in comments
    ]
    if not rows:
        return
    Comment.objects.bulk_create([comment for comment, _ in rows])
    wanted = {name for _, names in rows for name in names}
    members = dict(members_named(change.workflow.workspace_id, wanted).values_list("folded", "pk")) if wanted else {}
    Comment.mentions.through.objects.bulk_create(
        [
            Comment.mentions.through(comment_id=comment.pk, user_id=members[name])
            for comment, names in rows
            for name in names
            if name in members
        ]
    )


@board_transaction
def comment_create(*, task: Task, author, body: str) -> dict:
    """Comment on a task; the people it mentions are told after commit."""
    with task_change(task, actor=author) as (change, task):
        comment = Comment.objects.create(
            task=task, workflow_id=task.workflow_id, author=author, body=body, created_at=change.now
        )
        mentioned = members_mentioned(change.workflow.workspace_id, body)
        comment.mentions.set(mentioned)
        data = comment_data(comment, mentioned)
        _count(change, task, +1, "comment.created", data)
        _tell(comment, mentioned)
        return data


@board_transaction
def comment_edit(*, comment: Comment, actor, body: str) -> dict:
    """Its author rewrites a comment; only people it newly mentions are told."""
    if comment.author_id != actor.pk:
        raise Forbidden("Only its author may edit a comment.")
    with _comment_change(comment, actor) as (change, task):
        comment = Comment.objects.select_related("author").get(pk=comment.pk)
        before = list(comment.mentions.order_by("username"))
        if body == comment.body:
            return comment_data(comment, before)
        mentioned = members_mentioned(change.workflow.workspace_id, body)
        comment.body, comment.edited_at = body, change.now
        comment.save(update_fields=["body", "edited_at"])
        comment.mentions.set(mentioned)
        data = comment_data(comment, mentioned)
        change.record.changed(task, change.steps[task.step_id])
        change.record.announce("comment.updated", task=task, comment=data)
        newly = [user for user in mentioned if user not in before]
        if newly:
            _tell(comment, newly)
        return data


@board_transaction
def comment_delete(*, comment: Comment, actor) -> None:
    """Its author, or an owner of the workspace, deletes a comment."""
    if comment.author_id != actor.pk and comment.member_role != Role.OWNER:
        raise Forbidden("Only its author or a workspace owner may delete a comment.")
    with _comment_change(comment, actor) as (change, task):
        deleted, _ = Comment.objects.filter(pk=comment.pk).delete()
        if deleted:
            _count(change, task, -1, "comment.deleted", {"id": str(comment.pk), "task_id": str(task.pk)})


@contextmanager
def _comment_change(comment: Comment, actor):
    """A change of the comment's board, its task locked (the comment is written under that lock)."""
    with board_change(comment.workflow_id, actor=actor, task_id=comment.task_id) as change:
        yield change, change.board.lock_task(comment.task_id)


def _count(change, task: Task, delta: int, type_: str, data: dict) -> None:
    """The task's count follows its comments in the same transaction; the message carries both."""
    task.comment_count += delta
    Task.objects.filter(pk=task.pk).update(comment_count=task.comment_count)
    change.record.changed(task, change.steps[task.step_id])
    change.record.announce(type_, task=task, comment=data)


def _tell(comment: Comment, mentioned: list) -> None:
    transaction.on_commit(
        lambda: comment_posted.send(sender=Comment, comment=comment, mentioned=mentioned), robust=True
    )
