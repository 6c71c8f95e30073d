"""The invariant checker of a stress run: from the database (plain SQL, no ORM), the API,
the live messages a viewer received, and what the clients were told.

Each check appends human-readable violations; a clean run has none.
"""

from collections import Counter
from dataclasses import dataclass, field

import psycopg

ADMITTING = {"created", "moved", "pulled", "promoted", "restored", "forced"}
WIP_BODY_KEYS = {"code", "scope", "detail", "step", "limit", "occupied"}  # the stress board limits steps only


@dataclass
class Ledger:
    """What the clients saw: the workflow, acknowledged creations, limit changes, statuses."""

    workflow_id: str
    fixed_limit_steps: dict  # step id -> its limit, never changed during the run
    created: set = field(default_factory=set)  # task ids returned by 201/202 creations
    limit_changed: set = field(default_factory=set)  # steps whose limit a client changed
    statuses: Counter = field(default_factory=Counter)
    operations: Counter = field(default_factory=Counter)
    dropped: int = 0  # requests whose response was lost (killed worker)
    violations: list = field(default_factory=list)

    def check_response(self, op: str, response) -> None:
        self.operations[op] += 1
        self.statuses[response.status_code] += 1
        if response.status_code >= 500:
            self.violations.append(f"{op}: {response.status_code} {response.text[:300]}")
            return
        if response.status_code == 409:
            body = response.json()
            if body.get("code") == "wip_limit_reached":
                if set(body) != WIP_BODY_KEYS or body["scope"] != "step" or set(body["step"]) != {"id", "name"}:
                    self.violations.append(f"{op}: WIP refusal body {body}")
                elif not (
                    body["detail"].startswith(f'Step "{body["step"]["name"]}" ')
                    and isinstance(body["limit"], int)
                    and isinstance(body["occupied"], int)
                ):
                    self.violations.append(f"{op}: WIP refusal body {body}")
            elif set(body) < {"code", "detail"}:
                self.violations.append(f"{op}: conflict body without code/detail {body}")


class BoardView:
    """What a live viewer knows: a snapshot, then each message with
    a newer version applied. Tasks as {id: (step_id, admitted)}, steps as counts."""

    def __init__(self):
        self.version = 0
        self.tasks: dict[str, tuple] = {}
        self.steps: dict[str, tuple] = {}

    def snapshot(self, version: int, board: dict) -> None:
        self.version = version
        self.tasks = {t["id"]: (s["id"], t["admitted"]) for s in board["steps"] for t in s["tasks"]}
        self.steps = {s["id"]: (s["occupied"], s["queued"], s["wip_limit"]) for s in board["steps"]}

    def apply(self, message: dict) -> None:
        if message["version"] <= self.version:
            return
        self.version = message["version"]
        for t in message["tasks"]:
            if t["archived_at"]:
                self.tasks.pop(t["id"], None)
            else:
                self.tasks[t["id"]] = (t["step_id"], t["admitted"])
        for task_id in message["deleted_task_ids"]:
            self.tasks.pop(task_id, None)
        for s in message["steps"]:
            self.steps[s["id"]] = (s["occupied"], s["queued"], s["wip_limit"])
        if message["type"] == "step.deleted":
            self.steps.pop(message["step_id"], None)


@dataclass
class TaskState:
    step: str
    admitted: bool
    archived: bool = False
    deleted: bool = False


def load(dsn: str, workflow_id: str) -> dict:
    with psycopg.connect(dsn) as conn:
        version = conn.execute("SELECT version FROM workflows_workflow WHERE id = %s", (workflow_id,)).fetchone()[0]
        steps = {
            str(row[0]): {"name": row[1], "wip_limit": row[2]}
            for row in conn.execute(
                "SELECT id, name, wip_limit FROM workflows_workflowstep WHERE workflow_id = %s",
                (workflow_id,),
            )
        }
        tasks = {
            str(row[0]): {
                "step": str(row[1]),
                "admitted": row[2],
                "archived": row[3] is not None,
                "ephemeral": row[4],
            }
            for row in conn.execute(
                "SELECT id, step_id, admitted, archived_at, is_ephemeral FROM boards_task WHERE workflow_id = %s",
                (workflow_id,),
            )
        }
        events = [
            {
                "id": row[0],
                "task": str(row[1]),
                "kind": row[2],
                "from": str(row[3]) if row[3] else None,
                "to": str(row[4]) if row[4] else None,
                "detail": row[5],
            }
            for row in conn.execute(
                "SELECT id, task_id, kind, from_step_id, to_step_id, detail FROM boards_taskevent"
                " WHERE workflow_id = %s ORDER BY id",
                (workflow_id,),
            )
        ]
    return {"version": version, "steps": steps, "tasks": tasks, "events": events}


def replay(events: list, ledger: Ledger) -> dict:
    """Rebuild every task's state from the history alone, checking each event on the way."""
    bad = ledger.violations.append
    tasks: dict[str, TaskState] = {}
    occupied: Counter = Counter()
    for e in events:
        action, task_id, kind = e["detail"].get("action"), e["task"], e["kind"]
        state = tasks.get(task_id)
        where = f"event {e['id']} ({kind}/{action}) of task {task_id}"
        if action == "create":
            if state is not None:
                bad(f"{where}: created twice")
                continue
            state = tasks[task_id] = TaskState(step=e["to"], admitted=False)
        elif state is None:
            bad(f"{where}: no creation before it")
            continue
        elif state.deleted:
            bad(f"{where}: after the task was deleted")
            continue
        elif action == "restore":
            if not state.archived:
                bad(f"{where}: restores a live task")
            state.archived = False
            state.step = e["to"]
        elif state.archived and action != "delete":
            bad(f"{where}: touches an archived task")
            continue
        elif e["from"] is not None and e["from"] != state.step and not state.archived:
            # (An archived task is re-homed without an event when its step is deleted.)
            bad(f"{where}: leaves {e['from']} but the task is in {state.step}")
            continue

        if state.admitted and not state.archived and action not in {"create", "restore"}:
            # the task leaves its step's occupancy (it re-enters below unless archived/deleted)
            occupied[state.step] -= 1
        if action == "archive":
            state.archived = True
            continue
        if action == "delete":
            state.deleted = True
            continue
        if action == "promote":
            if state.admitted or e["to"] != state.step:
                bad(f"{where}: promotes a task that was not queued in that step")
        if action == "pull" and not state.admitted:
            bad(f"{where}: pulls a queued task")
        state.step = e["to"]
        if action != "reorder":  # a reorder keeps a queued task queued
            state.admitted = kind != "queued"
        if state.admitted:
            limit = ledger.fixed_limit_steps.get(state.step)
            if (
                limit
                and kind in ADMITTING
                and kind != "forced"
                and action != "reorder"
                and occupied[state.step] >= limit
            ):
                bad(f"{where}: admitted into a full step ({occupied[state.step]} of {limit})")
            occupied[state.step] += 1
    return tasks


def check(
    dsn: str, ledger: Ledger, *, api_board: dict, messages: list, socket_view: BoardView, lost_messages_allowed: int = 0
) -> dict:
    """All invariants; returns the figures of the run. A worker SIGKILLed between a commit
    and its broadcast loses that live message (broadcast is best effort; viewers resync):
    up to `lost_messages_allowed` missing versions are then reported, not violations."""
    bad = ledger.violations.append
    db = load(dsn, ledger.workflow_id)
    events, tasks, steps = db["events"], db["tasks"], db["steps"]
    replayed = replay(events, ledger)

    # Every task accounted for: live or archived in the database, or deleted by an event.
    for task_id in ledger.created - set(replayed):
        bad(f"task {task_id} was acknowledged to a client but has no history")
    for task_id, state in replayed.items():
        row = tasks.get(task_id)
        if state.deleted:
            if row is not None:
                bad(f"task {task_id} has a deleted event but still exists")
            continue
        if row is None:
            bad(f"task {task_id} vanished without a deleted event")
            continue
        if row["archived"] != state.archived:
            bad(f"task {task_id}: archived is {row['archived']}, history says {state.archived}")
        elif not state.archived and (row["step"], row["admitted"]) != (state.step, state.admitted):
            bad(f"task {task_id}: is {row['step']}/{row['admitted']}, history says {state.step}/{state.admitted}")
    for task_id in set(tasks) - set(replayed):
        bad(f"task {task_id} exists without a creation event")

    # Limits: over only when forced or lowered.
    occupancy = Counter(t["step"] for t in tasks.values() if t["admitted"] and not t["archived"] and not t["ephemeral"])
    forced_into = {e["to"] for e in events if e["kind"] == "forced"}
    for step_id, step in steps.items():
        if step["wip_limit"] and occupancy[step_id] > step["wip_limit"]:
            if step_id not in forced_into and step_id not in ledger.limit_changed:
                bad(f'step "{step["name"]}" holds {occupancy[step_id]} over its limit {step["wip_limit"]} unexplained')

    # Versions: one per committed change, each broadcast once, events tied to their change.
    versions = sorted(m["version"] for m in messages)
    missing = sorted(set(range(1, db["version"] + 1)) - set(versions))
    dupes = [v for v, n in Counter(versions).items() if n > 1]
    extra = [v for v in versions if not 1 <= v <= db["version"]]
    if dupes or extra or len(missing) > lost_messages_allowed:
        bad(
            f"version {db['version']}: live messages missing {missing[:10]}, "
            f"duplicated {dupes[:10]}, beyond it {extra[:10]}"
        )
    event_versions = {e["detail"].get("version") for e in events}
    if not event_versions <= set(range(1, db["version"] + 1)):
        bad(f"events name versions outside 1..{db['version']}")
    by_version = {m["version"]: m for m in messages}
    for e in events:
        message = by_version.get(e["detail"].get("version"))
        if message is None:
            continue
        touched = {t["id"] for t in message["tasks"]} | set(message["deleted_task_ids"])
        if e["task"] not in touched:
            bad(f"event {e['id']} is not in the live message of version {message['version']}")

    # A viewer applying the live messages in order ends with the database's board; so does
    # the WebSocket viewer connected throughout (snapshot, messages, resync on reconnect).
    live = {k: (t["step"], t["admitted"]) for k, t in tasks.items() if not t["archived"]}
    queued = Counter(
        t["step"] for t in tasks.values() if not t["admitted"] and not t["archived"] and not t["ephemeral"]
    )
    db_steps = {k: (occupancy[k], queued[k], s["wip_limit"]) for k, s in steps.items()}
    layer_view = BoardView()
    for message in sorted(messages, key=lambda m: m["version"]):
        layer_view.apply(message)
    views = {"WebSocket viewer": socket_view}
    if not missing:  # with a lost message the viewer would resync from a snapshot
        views["channel-layer viewer"] = layer_view
    for name, view in views.items():
        if view.version != db["version"]:
            bad(f"{name} ends at version {view.version}, the board is at {db['version']}")
        if view.tasks != live:
            diff = set(view.tasks.items()) ^ set(live.items())
            bad(f"{name} differs from the database on {len(diff)} tasks")
        if view.steps != db_steps:
            bad(f"{name}'s step counts differ from the database")

    # The API's board is the database's board.
    api_tasks = {t["id"]: (s["id"], t["admitted"]) for s in api_board["steps"] for t in s["tasks"]}
    if api_tasks != live:
        bad("the API's board differs from the database")
    if api_board["workflow"]["version"] != db["version"]:
        bad("the API's board version differs from the database")
    for s in api_board["steps"]:
        if (s["occupied"], s["queued"], s["wip_limit"]) != db_steps[s["id"]]:
            bad(f'the API\'s counts of "{s["name"]}" differ from the database')

    return {
        "version": db["version"],
        "events": len(events),
        "tasks_created": len(replayed),
        "tasks_live": len(live),
        "tasks_archived": sum(t["archived"] for t in tasks.values()),
        "tasks_deleted": sum(s.deleted for s in replayed.values()),
        "forced_events": sum(e["kind"] == "forced" for e in events),
        "live_messages": len(messages),
        "live_messages_lost": len(missing),
    }
