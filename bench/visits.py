"""How a write reads: the project modules one API task create and one move pass through.

    .venv/bin/python bench/visits.py          (DATABASE_URL / REDIS_URL as for bench/run.py)

In-process, through Django's test client, on a 20-task board (Backlog -> In Progress, limit
5, pulling from Backlog -> Review, limit 3, pulling from In Progress -> Done), after one
untraced create and move (imports, caches): a create into Backlog, then a move of an
In Progress task to Done, which In Progress fills from Backlog in the same change.

Only the board change is traced: the calls made while the service (`task_create`,
`task_move`) runs, into functions of the project's own modules (the ORM, Django and the
libraries are not counted). It prints the modules in the order they are visited, each run
of consecutive calls in one module as `module ×calls`, then per module its visits (times
control came into it from another module) and calls. A last line reads the same path
without the leaves every rule is written in (`common.*` and the models: a `Q`, a
`WorkflowStep.is_active`), runs merged again: the board change's own hops.
"""

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.run import prepare  # noqa: E402

SERVICES = ("task_create", "task_move")
LEAVES = ("common.",)
OWN = tuple(str(ROOT / app) + "/" for app in ("accounts", "agents", "boards", "common", "flow", "teams", "workflows"))


def _module(filename: str) -> str | None:
    if not filename.startswith(OWN):
        return None
    return str(Path(filename).relative_to(ROOT).with_suffix("")).replace("/", ".")


class Trace:
    """Calls into project modules while a service named in SERVICES is on the stack."""

    def __init__(self):
        self.runs: list[list] = []  # [module, calls] in order
        self.depth = 0  # service frames on the stack

    def __call__(self, frame, event, arg):
        if event == "call":
            code = frame.f_code
            module = _module(code.co_filename)
            if module is None:
                return
            if module == "boards.admission" and code.co_name in SERVICES:
                self.depth += 1
                if self.depth > 1:  # board_transaction's wrapper calls the service itself
                    return
            elif self.depth:
                if self.runs and self.runs[-1][0] == module:
                    self.runs[-1][1] += 1
                else:
                    self.runs.append([module, 1])
        elif event == "return" and frame.f_code.co_name in SERVICES:
            if _module(frame.f_code.co_filename) == "boards.admission":
                self.depth -= 1

    def report(self, title: str) -> None:
        visits, calls = Counter(), Counter()
        for module, n in self.runs:
            visits[module] += 1
            calls[module] += n
        print(f"\n{title}: {len(calls)} modules, {sum(calls.values())} calls, {len(self.runs)} visits")
        print("  " + " → ".join(f"{module.split('.', 1)[-1]} ×{n}" for module, n in self.runs))
        for module in calls:  # in order of first visit
            print(f"  {module:<28} visits {visits[module]:>2}  calls {calls[module]:>3}")
        hops = []
        for module, n in self.runs:
            if module.startswith(LEAVES) or module.endswith(".models"):
                continue
            if hops and hops[-1][0] == module:
                hops[-1][1] += n
            else:
                hops.append([module, n])
        own = {module for module, _ in hops}
        print(f"  without the leaves: {len(own)} modules, {sum(n for _, n in hops)} calls, {len(hops)} visits")


def traced(request) -> Trace:
    trace = Trace()
    sys.setprofile(trace)
    try:
        response = request()
    finally:
        sys.setprofile(None)
    assert response.status_code in (200, 201), response.content
    return trace


def main() -> int:
    prepare()
    from django.test import Client

    from bench.fixtures import bulk_tasks, kanban, owner_with_token
    from boards.changes import reconcile_board
    from boards.models import Task

    user, workspace, key = owner_with_token()
    workflow, (backlog, in_progress, _review, done) = kanban(workspace, "Visits")
    bulk_tasks(backlog, 20)
    reconcile_board(workflow_id=workflow.pk)  # In Progress and Review fill from Backlog
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")

    def create():
        body = {"step_id": str(backlog.pk), "title": "traced"}
        return client.post("/api/v1/tasks/", body, content_type="application/json")

    def move():
        task = Task.objects.filter(step=in_progress).in_board_order().first()
        body = {"step_id": str(done.pk)}
        return client.post(f"/api/v1/tasks/{task.pk}/move/", body, content_type="application/json")

    create(), move()  # untraced: imports, caches
    traced(create).report("create (POST /api/v1/tasks/)")
    traced(move).report("move to Done, In Progress pulls (POST /api/v1/tasks/<id>/move/)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
