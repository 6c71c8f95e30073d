"""A deterministic race (Saleor's RunBefore/RunAfter idea): a competing admission is run at
the exact moment the first one has written but not committed, and must wait for it."""

import threading

import pytest
from django.db import connection

from boards import admission
from boards.models import Task
from boards.signals import task_admitted
from common.errors import WipLimitReached
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
from workflows.models import Role


@pytest.mark.django_db(transaction=True)
def test_a_competing_admission_waits_for_the_lock_holder_then_sees_its_write():
    user = UserFactory()
    workflow = WorkflowFactory()
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.OWNER)
    step = StepFactory(workflow=workflow, name="Deploy", position=0, is_start_step=True, wip_limit=1)
    competitor_result = {}

    def competitor():
        try:
            admission.task_create(workflow=workflow, step=step, actor=user, title="second")
        except WipLimitReached as exc:
            competitor_result["refused"] = exc
        finally:
            connection.close()

    competitor_thread = threading.Thread(target=competitor)

    def between_write_and_commit(sender, *, task, **kwargs):
        if task.title != "first":
            return
        competitor_thread.start()
        competitor_thread.join(timeout=1.0)
        # Still blocked on the board's lock: it cannot have counted yet.
        competitor_result["waited"] = competitor_thread.is_alive()

    task_admitted.connect(between_write_and_commit)
    try:
        admission.task_create(workflow=workflow, step=step, actor=user, title="first")
    finally:
        task_admitted.disconnect(between_write_and_commit)
    competitor_thread.join(timeout=30)
    assert competitor_result["waited"] is True
    assert "refused" in competitor_result
    assert list(Task.objects.filter(step=step).values_list("title", flat=True)) == ["first"]
