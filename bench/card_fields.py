"""2c. Board read with card fields: a 1,000-task board whose every card carries two labels,
a due date and a three-item checklist, read as JSON beside the same board without them.

The card fields live on the task row (`label_ids`, `due_at`, `checklist`), so the read's
query count is the plain board's (one more query, the workspace's labels, for both) and
its cost grows only with the bytes. Each timed sample reads a new version (a fresh build).
"""

import asyncio
import datetime

from django.db.models import F
from django.test import Client

from bench.board_read import _queries, _times, build, bumper
from bench.common import spread
from boards.models import ChecklistItem, Label, LabelColor, Task

TASKS = 1000
ITEMS = ("Write it", "Review it", "Ship it")


def decorate(workflow) -> None:
    """Every task of `workflow` gets two labels, a due date and a checklist (one item done),
    in a few bulk statements: a fixture shortcut, the rows the services would write."""
    labels = Label.objects.bulk_create(
        [
            Label(workspace_id=workflow.workspace_id, name=f"{workflow.name} {color}", color=color)
            for color in (LabelColor.RED, LabelColor.BLUE)
        ]
    )
    ids = sorted(str(label.pk) for label in labels)
    tasks = list(Task.objects.filter(workflow=workflow).only("pk"))
    Task.labels.through.objects.bulk_create(
        [Task.labels.through(task_id=task.pk, label_id=pk) for task in tasks for pk in ids], batch_size=5000
    )
    ChecklistItem.objects.bulk_create(
        [
            ChecklistItem(task_id=task.pk, text=text, done=i == 0, position=i)
            for task in tasks
            for i, text in enumerate(ITEMS)
        ],
        batch_size=5000,
    )
    due = datetime.datetime(2026, 12, 5, tzinfo=datetime.UTC)
    Task.objects.filter(workflow=workflow).update(
        label_ids=ids, due_at=due, due_all_day=True, checklist={"done": 1, "total": len(ITEMS)}
    )


def _read(client, port, workflow, key, samples) -> dict:
    path, token = f"/api/v1/workflows/{workflow.pk}/board/", {"Authorization": f"Token {key}"}
    status, queries, size = _queries(client, path, bumper(workflow), HTTP_AUTHORIZATION=f"Token {key}")
    assert status == 200, f"board JSON answered {status}"
    _, times = asyncio.run(_times(port, path, token, samples, bumper(workflow)))
    return {"queries": queries, "bytes": size, "ms": spread(times)}


def run(*, workspace, key: str, port: int, samples: int) -> dict:
    client = Client()
    plain = build(workspace, TASKS)
    carded = build(workspace, TASKS)
    decorate(carded)
    result = {
        "tasks": TASKS,
        "samples": samples,
        "plain": _read(client, port, plain, key, samples),
        "with_card_fields": _read(client, port, carded, key, samples),
    }
    for workflow in (plain, carded):  # a new version: whatever reads next builds again
        type(workflow).objects.filter(pk=workflow.pk).update(version=F("version") + 1)
    p, c = result["plain"], result["with_card_fields"]
    print(
        f"[bench] cards: {TASKS:,} tasks, each with 2 labels, a due date and {len(ITEMS)} checklist items: "
        f"{c['queries']} queries, {c['bytes'] / 1024:,.0f} KB, {c['ms']['median']:.1f} ms median "
        f"(without them: {p['queries']} queries, {p['bytes'] / 1024:,.0f} KB, {p['ms']['median']:.1f} ms)",
        flush=True,
    )
    return result
