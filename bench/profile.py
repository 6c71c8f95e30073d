"""Profile one hot path in-process with pyinstrument: `python bench/profile.py <target>`.

Targets: board (5,000-task board JSON through the view), page (the 2,000-task board page),
after-change (the 1,000-task board JSON just after a move, x 300; only the reads measured),
create (task_create x 300),
http-create (POST /api/v1/tasks/ through Django's test client x 300), http-move (POST
/api/v1/tasks/<id>/move/ across two 1,000-task columns x 300), cascade (k=100).
Uses the same fresh suite database as bench/run.py. `--cpu` measures instead of
profiling: wall and CPU time (time.process_time) per operation, single thread.
"""

import argparse
import contextlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import prepare  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    targets = ["board", "page", "after-change", "create", "http-create", "http-move", "cascade"]
    parser.add_argument("target", choices=targets)
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--cpu", action="store_true", help="time per operation, no profiler")
    args = parser.parse_args()
    prepare()
    from django.test import Client
    from pyinstrument import Profiler

    from bench import board_read, pull_cascade, request_cpu
    from bench.fixtures import kanban, owner_with_token
    from boards.admission import task_create

    user, workspace, key = owner_with_token()
    ops = {"board": 10, "page": 5, "cascade": 2}.get(args.target, args.repeat)
    profiler = _CpuTimer(ops) if args.cpu else Profiler(interval=0.0005)
    if args.target == "board":
        workflow = board_read.build(workspace, 5000)
        client = Client(HTTP_AUTHORIZATION=f"Token {key}")
        client.get(f"/api/v1/workflows/{workflow.pk}/board/")
        bump = board_read.bumper(workflow)  # a new version each time: build, not cache
        with profiler:
            for _ in range(ops):
                bump()
                client.get(f"/api/v1/workflows/{workflow.pk}/board/")
    elif args.target == "page":
        workflow = board_read.build(workspace, 2000)
        client = Client()
        client.force_login(user)
        client.get(f"/workflows/{workflow.pk}/")
        bump = board_read.bumper(workflow)
        with profiler:
            for _ in range(ops):
                bump()
                client.get(f"/workflows/{workflow.pk}/")
    elif args.target == "after-change":
        workflow = board_read.build(workspace, board_read.AFTER_CHANGE_TASKS)
        client = Client(HTTP_AUTHORIZATION=f"Token {key}")
        path = f"/api/v1/workflows/{workflow.pk}/board/"
        change = board_read.mover(workflow, user)
        client.get(path)
        for _ in range(ops):
            change()
            with profiler:  # the reads alone: a profiler's sessions add up
                client.get(path)
    elif args.target in ("create", "http-create"):
        workflow, steps = kanban(workspace, "Profile")
        client = Client(HTTP_AUTHORIZATION=f"Token {key}")
        with profiler:
            for i in range(args.repeat):
                if args.target == "create":
                    task_create(workflow=workflow, actor=user, step=steps[0], title=f"p{i}")
                else:
                    client.post(
                        "/api/v1/tasks/",
                        {"step_id": str(steps[0].pk), "title": f"p{i}"},
                        content_type="application/json",
                    )
    elif args.target == "http-move":
        workflow, steps = request_cpu.two_columns(workspace, "Profile", request_cpu.COLUMN)
        client = Client(HTTP_AUTHORIZATION=f"Token {key}")
        tasks = request_cpu.task_ids(workflow)
        with profiler:
            for i in range(args.repeat):  # each task over and back: the same as bench/request_cpu.py's moves
                target = steps[1 if (i // len(tasks)) % 2 == 0 else 0]
                client.post(
                    f"/api/v1/tasks/{tasks[i % len(tasks)]}/move/",
                    {"step_id": str(target.pk)},
                    content_type="application/json",
                )
    else:
        with profiler:
            pull_cascade.run(workspace=workspace, user=user, ks=(100,), reps=ops)
    print(profiler.output_text(unicode=True, color=False, show_all=False))
    return 0


class _CpuTimer(contextlib.ContextDecorator):
    """Adds up the time spent inside it, however many times it is entered."""

    def __init__(self, ops: int):
        self.ops, self.wall, self.cpu = ops, 0.0, 0.0

    def __enter__(self):
        self.wall -= time.perf_counter()
        self.cpu -= time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall += time.perf_counter()
        self.cpu += time.process_time()

    def output_text(self, **kwargs) -> str:
        return (
            f"{self.ops} operations: {self.wall / self.ops * 1000:.2f} ms wall, "
            f"{self.cpu / self.ops * 1000:.2f} ms CPU each"
        )


if __name__ == "__main__":
    sys.exit(main())
