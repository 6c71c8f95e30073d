"""`history`: one board's history with explicit timestamps for the flow figures' tests:
tasks that go back and forth, re-enter done, are archived and restored, are forced over a
limit, pass through a step later deleted, and are deleted.

Board: Backlog (backlog) -> Doing (limit 2) -> Review (limit 1) -> Done (limit 10, done).
Hours after T0 (the task letters are the tasks):
  0  A, C created in Backlog          5    A -> Review
  1  A -> Doing; D created in Backlog 5.5  B forced Doing -> Review ("hotfix")
  2  B, E created in Doing; C -> X    6    A -> Done        7  A -> Review
  3  A -> Review; D deleted           8    A -> Done        9  B archived
  4  A -> Doing; C: X -> Done         10   B restored       11 B -> Done
X is a step that was deleted afterwards.
"""

import uuid

import pytest

from tests.factories import StepFactory
from tests.flow.factories import TaskEventFactory, TaskFactory
from tests.flow.history import hours


@pytest.fixture
def history(workflow, owner):
    bl = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True, kind="backlog")
    do = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=2)
    rv = StepFactory(workflow=workflow, name="Review", position=2, wip_limit=1)
    dn = StepFactory(workflow=workflow, name="Done", position=3, wip_limit=10, kind="done")
    gone = uuid.uuid4()  # the deleted step X
    tasks = {
        "A": TaskFactory(step=dn, title="A"),
        "B": TaskFactory(step=dn, title="B"),
        "C": TaskFactory(step=dn, title="C"),
        "E": TaskFactory(step=do, title="E"),
    }
    ids = {**{k: t.pk for k, t in tasks.items()}, "D": uuid.uuid4()}
    ev = {}

    def event(task, kind, at, src=None, dst=None, **kwargs):
        ev[(task, at)] = TaskEventFactory(
            workflow=workflow,
            task_id=ids[task],
            kind=kind,
            at=hours(at),
            from_step_id=getattr(src, "pk", src),
            to_step_id=getattr(dst, "pk", dst),
            **kwargs,
        )

    event("A", "created", 0, dst=bl)
    event("C", "created", 0, dst=bl)
    event("A", "moved", 1, bl, do)
    event("D", "created", 1, dst=bl)
    event("B", "created", 2, dst=do)
    event("C", "moved", 2, bl, gone)
    event("E", "created", 2, dst=do)
    event("A", "moved", 3, do, rv)
    event("D", "deleted", 3, src=bl, detail={"title": "D"})
    event("A", "moved", 4, rv, do)
    event("C", "moved", 4, gone, dn)
    event("A", "moved", 5, do, rv)
    event("B", "forced", 5.5, do, rv, actor=owner, reason="hotfix")
    event("A", "moved", 6, rv, dn)
    event("A", "moved", 6.5, dn, dn)  # a reorder inside Done: no change of state
    event("A", "moved", 7, dn, rv)
    event("A", "moved", 8, rv, dn)
    event("B", "archived", 9, src=rv)
    event("B", "restored", 10, dst=rv)
    event("B", "moved", 11, rv, dn)
    return {"steps": (bl, do, rv, dn), "tasks": ids, "events": ev}
