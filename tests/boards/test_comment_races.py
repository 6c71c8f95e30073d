"""People commenting and deleting comments on one task at the same moment, on real threads
against PostgreSQL: the card's count always equals its comments."""

import pytest

from boards.admission import task_create
from boards.comments import comment_create, comment_delete
from boards.models import Comment, Task
from tests.concurrency import race_ok, rounds
from tests.factories import MembershipFactory, WorkflowFactory, board
from workflows.models import Role

pytestmark = pytest.mark.django_db(transaction=True)


@rounds(3)
def test_simultaneous_comments_and_deletes_keep_the_count(owner):
    workflow = WorkflowFactory()
    MembershipFactory(workspace=workflow.workspace, user=owner, role=Role.OWNER)
    backlog = board(workflow, pulls="none")[0]
    task = task_create(workflow=workflow, step=backlog, actor=owner, title="Busy").task
    doomed = [comment_create(task=task, author=owner, body=f"old {n}")["id"] for n in range(3)]

    def act(i):
        if i < 3:
            comment = Comment.objects.get(pk=doomed[i])
            comment.member_role = Role.OWNER
            return comment_delete(comment=comment, actor=owner)
        return comment_create(task=task, author=owner, body=f"new {i}")

    race_ok(8, act)

    assert Comment.objects.filter(task=task).count() == 5
    assert Task.objects.get(pk=task.pk).comment_count == 5
