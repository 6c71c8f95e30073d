"""The flow figures' hand-written SQL: what the ORM cannot say (aggregates over window
functions, gaps and islands), written once for PostgreSQL and SQLite (>= 3.25).

Every statement reads TaskEvent in the database and returns rows bounded by the answer
(points x steps, finished tasks, breaches), never one row per event. Instants cross the
boundary as integer microseconds since the epoch (`epoch_us`): exact on both databases,
and bucketing is then integer arithmetic, the same on both.

A task's *state* after one of its events is (step, state): `step` is the event's
`to_step` (or `from_step` when it left the board), `state` is GONE (archived, deleted),
QUEUED or ADMITTED. Reorders inside a step (`moved` with from = to) change no state, and
kinds that leave the task where it was (deferred, session, ...) are not state events.
"""

import functools
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.db import connection

from boards.models import EventKind, Task, TaskEvent
from common import sql
from workflows.models import WorkflowStep

GONE, QUEUED, ADMITTED = 0, 1, 2

# Kinds that put a live task into a step (admitted): entries for cycle and throughput.
ENTRY_KINDS = [
    EventKind.CREATED,
    EventKind.MOVED,
    EventKind.PULLED,
    EventKind.PROMOTED,
    EventKind.RESTORED,
    EventKind.FORCED,
]
STATE_KINDS = [*ENTRY_KINDS, EventKind.QUEUED, EventKind.ARCHIVED, EventKind.DELETED]

_EPOCH_US = {
    # date_part() is float8 (EXTRACT's numeric is slower); microseconds since the epoch
    # stay below 2**53, so rounding gives them back exactly.
    "postgresql": "CAST(ROUND(date_part('epoch', {}) * 1000000) AS BIGINT)",
    # Django stores 'YYYY-MM-DD HH:MM:SS[.ffffff]' (UTC): whole seconds, then the fraction.
    "sqlite": "(CAST(strftime('%%s', {0}) AS INTEGER) * 1000000 + CAST(substr({0} || '.000000', 21, 6) AS INTEGER))",
}
_LEAST = {"postgresql": "LEAST", "sqlite": "MIN"}
# Each task's last state event before %s (`from`). PostgreSQL walks the (workflow, task,
# at, id) index backwards and keeps each task's first row: no sort, no window function
# (a LEAD over those events costs twice as much); SQLite has no DISTINCT ON.
_LAST_BEFORE = {
    "postgresql": """
        SELECT DISTINCT ON ({task}) {columns} {events} AND {at} < %s
        ORDER BY {task} DESC, {at} DESC, {id} DESC""",
    "sqlite": """
        SELECT task_id, at, id, step_id, state FROM (
            SELECT {columns}, LEAD({at}) OVER (PARTITION BY {task} ORDER BY {at}, {id}) AS next_at
            {events} AND {at} < %s
        ) WHERE next_at IS NULL""",
}
_GREATEST = {"postgresql": "GREATEST", "sqlite": "MAX"}
# A text member of TaskEvent.detail.
_DETAIL = {"postgresql": "{0} ->> '{1}'", "sqlite": "json_extract({0}, '$.{1}')"}


def _in(values) -> str:
    return ", ".join(["%s"] * len(values))


def _ids(values) -> list:
    return [sql.uuid_param(v) for v in values]


def _instant(value):
    return connection.ops.adapt_datetimefield_value(value)


@functools.cache
def _names(vendor: str) -> dict:
    e = TaskEvent
    return {
        "event": sql.table(e),
        "task": sql.column(e, "task"),
        "kind": sql.column(e, "kind"),
        "from": sql.column(e, "from_step"),
        "to": sql.column(e, "to_step"),
        "at": sql.column(e, "at"),
        "id": sql.column(e, "id"),
        "actor": sql.column(e, "actor"),
        "reason": sql.column(e, "reason"),
        "detail": sql.column(e, "detail"),
        "workflow": sql.column(e, "workflow"),
        "us_at": _EPOCH_US[vendor].format(sql.column(e, "at")),
        "least": _LEAST[vendor],
        "greatest": _GREATEST[vendor],
        "vendor": vendor,
        "step_table": sql.table(WorkflowStep),
        "step_id": sql.column(WorkflowStep, "id"),
        "step_limit": sql.column(WorkflowStep, "wip_limit"),
        "task_table": sql.table(Task),
        "task_id": sql.column(Task, "id"),
        "task_title": sql.column(Task, "title"),
        "task_lane": sql.column(Task, "lane"),
        "lane_type": Task._meta.get_field("lane").db_type(connection),
        "task_workflow": sql.column(Task, "workflow"),
        "task_assignee": sql.column(Task, "assignee"),
        "user_table": sql.table(get_user_model()),
        "user_id": sql.column(get_user_model(), "id"),
        "username": sql.column(get_user_model(), get_user_model().USERNAME_FIELD),
    }


def _kinds_list(kinds) -> str:
    return ", ".join(f"'{k}'" for k in kinds)  # enum values, never user input


def _in_lane(n: dict, task: str, lane: str) -> str:
    """The condition that the task whose id is `task` is in the lane `lane` (SQL: a column or
    a parameter). The current-lane rule: a task counts in the lane it is in now, over its
    whole history (moves across lanes are not replayed); a deleted task is in no lane."""
    return f"{task} IN (SELECT {n['task_id']} FROM {n['task_table']} WHERE {n['task_lane']} = {lane})"


def _of_lane(n: dict, task: str, lane_id) -> tuple[str, list]:
    """`_in_lane` of one lane, to follow a condition, and its parameter; nothing without a lane."""
    if lane_id is None:
        return "", []
    return f" AND {_in_lane(n, task, '%s')}", [sql.uuid_param(lane_id)]


def state_event() -> str:
    """The condition for a state event; taskevent_flow_state_by_time (flow/migrations) is
    partial on it, word for word."""
    n = _names(connection.vendor)
    return (
        f"{n['kind']} IN ({_kinds_list(STATE_KINDS)})"
        f" AND NOT ({n['kind']} = '{EventKind.MOVED}' AND {n['from']} = {n['to']})"
    )


def _transitions(n: dict, lane_id=None, following: bool = False) -> str:
    """CTEs `before`, `s` and `l`: the state events of the window [%s = `from`, %s = `to`],
    each with the task's previous state and when its own state ends (`next_at`: the task's
    next state event, null if none in the window), and each task's state at `from` (its
    last state event before, with no previous state: the history before `from` telescopes
    into it), leaving out the tasks gone by then. With a lane, its tasks only; `following`
    adds the next state (`next_step`, `next_state`)."""
    columns = f"""{n["task"]} AS task_id, {n["at"]} AS at, {n["id"]} AS id,
               COALESCE({n["to"]}, {n["from"]}) AS step_id,
               CASE WHEN {n["kind"]} IN ('{EventKind.ARCHIVED}', '{EventKind.DELETED}') THEN {GONE}
                    WHEN {n["kind"]} = '{EventKind.QUEUED}' THEN {QUEUED} ELSE {ADMITTED} END AS state"""
    lane, _ = _of_lane(n, n["task"], lane_id)
    events = f"""FROM {n["event"]}
        WHERE {n["workflow"]} = %s{lane} AND {state_event()}"""
    window = "OVER (PARTITION BY task_id ORDER BY at, id)"
    next_state = (
        f",\n               LEAD(step_id) {window} AS next_step, LEAD(state) {window} AS next_state"
        if following
        else ""
    )
    before = _LAST_BEFORE[n["vendor"]].format(columns=columns, events=events, task=n["task"], at=n["at"], id=n["id"])
    return f"""
    before AS ({before}),
    s AS (
        SELECT {columns}, 1 AS w {events} AND {n["at"]} >= %s AND {n["at"]} <= %s
        UNION ALL
        SELECT task_id, at, id, step_id, state, 0 FROM before WHERE state > {GONE}
    ),
    l AS (
        SELECT task_id, at, step_id, state, w,
               LAG(at) {window} AS prev_at, LAG(step_id) {window} AS prev_step, LAG(state) {window} AS prev_state,
               LEAD(at) {window} AS next_at{next_state}
        FROM s
    )"""


def _changes(n: dict) -> str:
    """CTE `d` after `_transitions`: each state of `l` with its instant and its previous
    state's in microseconds (the states at `from` have none)."""
    us = _EPOCH_US[n["vendor"]]
    return f"""
    d AS (
        SELECT {us.format("at")} AS u, step_id, state,
               CASE WHEN w = 1 THEN prev_step END AS prev_step,
               CASE WHEN w = 1 THEN prev_state END AS prev_state,
               CASE WHEN w = 1 THEN {us.format("prev_at")} END AS prev_u
        FROM l
    )"""


def _transitions_params(workflow_id, frm, to, lane_id=None) -> list:
    wf = sql.uuid_param(workflow_id)
    _, lane = _of_lane(_names(connection.vendor), "", lane_id)
    return [wf, *lane, _instant(frm), wf, *lane, _instant(frm), _instant(to)]


def cfd_deltas(workflow_id, *, frm, to, from_us: int, step_us: int, last: int, lane_id=None) -> list[tuple]:
    """(point index, step id, state, net change) for the points from + k*step (k < last)
    and `to` (k = last): a change at instant u counts from the first point >= u. With a
    lane, of its tasks only."""
    n = _names(connection.vendor)
    point = f"CASE WHEN u <= %s THEN 0 ELSE {n['least']}((u - %s + %s - 1) / %s, %s) END"
    statement = f"""
    WITH {_transitions(n, lane_id)},{_changes(n)},
    b AS (SELECT {point} AS point, step_id, state, prev_step, prev_state FROM d),
    -- The transitions counted first (a few per point), then split into their two changes.
    t AS (
        SELECT point, step_id, state, prev_step, prev_state, CAST(COUNT(*) AS INTEGER) AS n
        FROM b GROUP BY point, step_id, state, prev_step, prev_state
    )
    SELECT point, step_id, state, SUM(delta) FROM (
        SELECT point, step_id, state, n AS delta FROM t WHERE state > {GONE}
        UNION ALL
        SELECT point, prev_step, prev_state, -n FROM t WHERE prev_state > {GONE}
    ) x
    GROUP BY point, step_id, state
    """
    params = [*_transitions_params(workflow_id, frm, to, lane_id), from_us, from_us, step_us, step_us, last]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


def cfd_arrivals(
    workflow_id, *, lines: list, done: list, to, from_us: int, step_us: int, last: int, lane_id=None
) -> list[tuple]:
    """(line below or None, top line, point index, tasks) of the cumulative flow: that many
    tasks arrived on the lines above the first (from line 0 when None) up to the second,
    counted from that point. `lines` are the board's step ids in board order; a task
    arrives on line i when it first enters (admitted) a step at i or later, counted from the
    first point >= that instant (the points as in `cfd_deltas`).
    Arrivals only add: leaving, archiving or finishing takes nothing back. A task deleted
    without ever entering a `done` step is left out of every line; deleted steps have none.
    With a lane, of its tasks only."""
    n = _names(connection.vendor)
    us = _EPOCH_US[n["vendor"]]
    lane, lane_params = _of_lane(n, f"e.{n['task']}", lane_id)
    entry = f"{n['kind']} IN ({_kinds_list(ENTRY_KINDS)}) AND {state_event()}"  # state_event(): the partial index
    positions = ", ".join(["(%s, %s)"] * len(lines))
    point = f"CASE WHEN a <= %s THEN 0 ELSE {n['least']}((a - %s + %s - 1) / %s, %s) END"
    statement = f"""
    WITH pos(step_id, idx) AS (VALUES {positions}),
    -- Each task's first entry into each step still on the board, up to `to`.
    first AS (
        SELECT e.{n["task"]} AS task_id, p.idx, MIN(e.{n["at"]}) AS at
        FROM {n["event"]} e JOIN pos p ON p.step_id = e.{n["to"]}
        WHERE e.{n["workflow"]} = %s{lane} AND {entry} AND e.{n["at"]} <= %s
        GROUP BY e.{n["task"]}, p.idx
    ),
    gone AS (
        SELECT {n["task"]} AS task_id FROM {n["event"]}
        WHERE {n["workflow"]} = %s AND {n["kind"]} = '{EventKind.DELETED}' AND {state_event()}
        EXCEPT
        SELECT {n["task"]} FROM {n["event"]}
        WHERE {n["workflow"]} = %s AND {entry} AND {n["to"]} IN ({_in(done) if done else "NULL"})
    ),
    -- Line i: the first entry into step i or a later one. Over each task's steps from the
    -- last: the earliest entry so far is its arrival on the lines from the step below it
    -- (exclusive; null: from the first line) up to this step.
    arrival AS (
        SELECT idx,
               LEAD(idx) OVER w AS below,
               {us.format("MIN(at) OVER w")} AS a
        FROM first f
        WHERE NOT EXISTS (SELECT 1 FROM gone g WHERE g.task_id = f.task_id)
        WINDOW w AS (PARTITION BY task_id ORDER BY idx DESC)
    )
    SELECT below, idx, {point} AS point, COUNT(*) FROM arrival GROUP BY below, idx, 3
    """
    wf = sql.uuid_param(workflow_id)
    params = [
        *(v for idx, step in enumerate(lines) for v in (sql.uuid_param(step), idx)),
        wf,
        *lane_params,
        _instant(to),
        wf,
        wf,
        *_ids(done),
        from_us,
        from_us,
        step_us,
        step_us,
        last,
    ]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


def finished_tasks(workflow_id, *, done: list, not_active: list, frm, to, lane_id=None) -> list[tuple]:
    """(task id, title, created us, started us, finished us, lane id) of every task whose
    first entry into a done step lies in the window; started is its first entry into an
    active step; the lane is the task's now (None once deleted). With a lane, of its tasks
    only."""
    n = _names(connection.vendor)
    lane, lane_params = _of_lane(n, n["task"], lane_id)
    entry = (
        f"e.{n['kind']} IN ({_kinds_list(ENTRY_KINDS)})"
        f" AND NOT (e.{n['kind']} = '{EventKind.MOVED}' AND e.{n['from']} = e.{n['to']})"
    )
    # The tasks that entered a done step in the window, then each one's history through
    # the covering index; instants are compared as stored (the same order) and turned
    # into microseconds once per task.
    us = _EPOCH_US[n["vendor"]]
    statement = f"""
    SELECT f.task_id, t.{n["task_title"]},
           {us.format("f.created")}, {us.format("f.started")}, {us.format("f.finished")}, t.{n["task_lane"]}
    FROM (
        SELECT e.{n["task"]} AS task_id, MIN(e.{n["at"]}) AS created,
               MIN(CASE WHEN {entry} AND e.{n["to"]} NOT IN ({_in(not_active)}) THEN e.{n["at"]} END) AS started,
               MIN(CASE WHEN {entry} AND e.{n["to"]} IN ({_in(done)}) THEN e.{n["at"]} END) AS finished
        FROM (
            SELECT DISTINCT {n["task"]} AS task_id FROM {n["event"]}
            WHERE {n["workflow"]} = %s{lane} AND {n["to"]} IN ({_in(done)}) AND {n["at"]} >= %s AND {n["at"]} <= %s
        ) w
        JOIN {n["event"]} e ON e.{n["workflow"]} = %s AND e.{n["task"]} = w.task_id
        GROUP BY e.{n["task"]}
    ) f
    LEFT JOIN {n["task_table"]} t ON t.{n["task_id"]} = f.task_id
    WHERE f.finished >= %s AND f.finished <= %s
    ORDER BY f.finished, f.task_id
    """
    wf = sql.uuid_param(workflow_id)
    params = [
        *_ids(not_active),
        *_ids(done),
        wf,
        *lane_params,
        *_ids(done),
        _instant(frm),
        _instant(to),
        wf,
        _instant(frm),
        _instant(to),
    ]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


def throughput(workflow_id, *, done: list, to, from_us: int, to_us: int, step_us: int, lane_id=None) -> list[tuple]:
    """(bucket index, tasks) of tasks whose first entry into a done step lies in the window.
    With a lane, of its tasks only."""
    n = _names(connection.vendor)
    lane, lane_params = _of_lane(n, n["task"], lane_id)
    statement = f"""
    SELECT (finished - %s) / %s AS bucket, COUNT(*) FROM (
        SELECT MIN({n["us_at"]}) AS finished FROM {n["event"]}
        WHERE {n["workflow"]} = %s{lane} AND {n["to"]} IN ({_in(done)}) AND {n["at"]} <= %s
          AND {n["kind"]} IN ({_kinds_list(ENTRY_KINDS)})
          AND NOT ({n["kind"]} = '{EventKind.MOVED}' AND {n["from"]} = {n["to"]})
        GROUP BY {n["task"]}
    ) f
    WHERE finished >= %s AND finished <= %s
    GROUP BY (finished - %s) / %s
    """
    params = [
        from_us,
        step_us,
        sql.uuid_param(workflow_id),
        *lane_params,
        *_ids(done),
        _instant(to),
        from_us,
        to_us,
        from_us,
        step_us,
    ]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall()


# The limit ledger sorts its occupancy changes by one integer, scope * _SPAN + microseconds
# since `from`: PostgreSQL sorts one bigint key about twice as fast as (scope, instant),
# whose first column ties on nearly every row. _SPAN is longer than any window (366 days
# are under 2**45 microseconds); _AFTER stands for "after the window".
_SPAN = 2**46
_AFTER = _SPAN - 1
# A limit in force packed with its order (flow limits are below 2**31: PositiveIntegerField).
_LIMIT_PACK = 2**31


def _step_stays(n: dict, scopes: list[tuple], frm, from_us: int) -> tuple[str, list]:
    """CTEs `scope` and `step_stay` after `_transitions` (with `following`) for
    `limit_periods`, and their parameters: each admitted stay in a step of a scope (si, step
    ids, lane or None for every lane), with a lane only the tasks in it now (`_of_lane`'s
    rule), and whether it ends in a departure: the task's next state is elsewhere, queued or
    gone (a move between two of the scope's steps is none)."""
    us = _EPOCH_US[n["vendor"]]
    counted = ", ".join([f"(%s, %s, CAST(%s AS {n['lane_type']}))"] * sum(len(steps) for _, steps, _ in scopes))
    ctes = f"""
    scope(si, step_id, lane_id) AS (VALUES {counted}),
    step_stay AS (
        SELECT c.si * {_SPAN} AS base,
               CASE WHEN l.at < %s THEN 0 ELSE {us.format("l.at")} - %s END AS start_u,
               COALESCE({us.format("l.next_at")} - %s, {_AFTER}) AS end_u,
               CASE WHEN l.next_at IS NOT NULL AND (l.next_state <> {ADMITTED} OR o.si IS NULL) THEN 1 ELSE 0 END AS dep
        FROM l JOIN scope c ON c.step_id = l.step_id
        LEFT JOIN scope o ON o.si = c.si AND o.step_id = l.next_step
        WHERE l.state = {ADMITTED} AND (c.lane_id IS NULL OR {_in_lane(n, "l.task_id", "c.lane_id")})
    )"""
    params = [
        *(
            v
            for si, steps, lane_id in scopes
            for step in steps
            for v in (si, sql.uuid_param(step), None if lane_id is None else sql.uuid_param(lane_id))
        ),
        _instant(frm),
        from_us,
        from_us,
    ]
    return ctes, params


def _person_pieces(n: dict, *, workflow_id, active: list, people: list, frm, to, from_us: int) -> tuple[str, list]:
    """CTEs after `_transitions`, ending with `piece(si, task_id, s, e)`: each stretch in
    which a task counted for person `si` of `people` ((si, user id)): admitted in an `active`
    step while assigned to them, from `s` to `e` us (null: still). A task's assignee comes
    from its assignment events (detail: action "assign", assignee_id, previous): before its
    first one, that one's `previous`; without any, its assignee now."""
    us = _EPOCH_US[n["vendor"]]
    detail = functools.partial(_DETAIL[n["vendor"]].format, n["detail"])
    assigning = _kinds_list([EventKind.ASSIGNED, EventKind.EXPEDITED, EventKind.FORCED])
    ctes = f"""
    asg AS (
        SELECT {n["task"]} AS task_id, {n["at"]} AS at, {n["id"]} AS id,
               CAST({detail("assignee_id")} AS BIGINT) AS user_id,
               CAST({detail("previous")} AS BIGINT) AS previous,
               ROW_NUMBER() OVER (PARTITION BY {n["task"]} ORDER BY {n["at"]}, {n["id"]}) AS rn,
               LEAD({n["at"]}) OVER (PARTITION BY {n["task"]} ORDER BY {n["at"]}, {n["id"]}) AS next_at
        FROM {n["event"]}
        WHERE {n["workflow"]} = %s AND {n["kind"]} IN ({assigning}) AND {detail("action")} = 'assign'
          AND {n["at"]} <= %s
    ),
    span AS (
        SELECT task_id, user_id, {us.format("at")} AS s, {us.format("next_at")} AS e FROM asg
        UNION ALL
        SELECT task_id, previous, NULL, {us.format("at")} FROM asg WHERE rn = 1
        UNION ALL
        SELECT t.{n["task_id"]}, t.{n["task_assignee"]}, NULL, NULL FROM {n["task_table"]} t
        WHERE t.{n["task_workflow"]} = %s AND t.{n["task_assignee"]} IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM asg WHERE asg.task_id = t.{n["task_id"]})
    ),
    act(step_id) AS (VALUES {", ".join(["(%s)"] * len(active)) if active else "(NULL)"}),
    person(si, user_id) AS (VALUES {", ".join(["(%s, %s)"] * len(people))}),
    active_stay AS (
        SELECT l.task_id, CASE WHEN l.at < %s THEN %s ELSE {us.format("l.at")} END AS s,
               {us.format("l.next_at")} AS e
        FROM l JOIN act ON act.step_id = l.step_id
        WHERE l.state = {ADMITTED}
    ),
    piece AS (
        SELECT p.si, a.task_id, {n["greatest"]}(a.s, COALESCE(sp.s, a.s)) AS s,
               CASE WHEN a.e IS NULL THEN sp.e WHEN sp.e IS NULL THEN a.e ELSE {n["least"]}(a.e, sp.e) END AS e
        FROM active_stay a JOIN span sp ON sp.task_id = a.task_id JOIN person p ON p.user_id = sp.user_id
        WHERE (sp.e IS NULL OR sp.e > a.s) AND (a.e IS NULL OR sp.s IS NULL OR sp.s < a.e)
    )"""
    wf = sql.uuid_param(workflow_id)
    params = [
        wf,
        _instant(to),
        wf,
        *_ids(active),
        *(v for si, user_id in people for v in (si, user_id)),
        _instant(frm),
        from_us,
    ]
    return ctes, params


def _person_stays(n: dict, from_us: int) -> tuple[str, list]:
    """CTE `person_stay` from `_person_pieces`' pieces, as `step_stay`: a piece ends in a
    departure when the task stops counting for the person (the next piece does not go on
    from its end)."""
    ctes = f"""
    person_stay AS (
        SELECT si * {_SPAN} AS base, s - %s AS start_u, COALESCE(e - %s, {_AFTER}) AS end_u,
               CASE WHEN e IS NOT NULL AND (next_s IS NULL OR next_s <> e) THEN 1 ELSE 0 END AS dep
        FROM (SELECT si, s, e, LEAD(s) OVER (PARTITION BY si, task_id ORDER BY s) AS next_s FROM piece) p
    )"""
    return ctes, [from_us, from_us]


class Period(NamedTuple):
    """A stretch of one scope's time in the window over, or not over, its limit."""

    scope: int  # the index of the limit asked about
    over: bool
    started: int  # us since the epoch
    ended: int | None  # None while it lasts
    most_over: int


class Totals(NamedTuple):
    """One limit's window summed: microseconds at and over the limit in force, whether it
    reached it, and Little's law's measures (task-microseconds its stays held inside the
    window, their departures)."""

    at_limit: int = 0
    over_limit: int = 0
    reached: bool = False
    held: int = 0
    departures: int = 0


def limit_periods(
    workflow_id, *, limits: list, frm, to, from_us: int, to_us: int, periods: bool = True
) -> tuple[list[Period], list[Totals]]:
    """Each limit's time in the window as alternating periods over / not over it (gaps and
    islands), in one pass over the window's transitions, and its totals, in the order asked;
    without `periods`, the totals alone, two window passes fewer (a third of the statement at
    a million events: the limit advice needs no more). A limit (flow/config.py's `Limit`)
    counts the admitted tasks in its `steps`, only those in its `lane` now when it has one
    (`_of_lane`'s rule), only those assigned to its `person_id` when it has one (its steps are
    then the board's active steps); its `series` is [(microseconds since `from`, limit)], the
    first at 0, each in force until the next (0: no limit, never over)."""
    n = _names(connection.vendor)
    steps = [(si, limit.steps, limit.lane_id) for si, limit in enumerate(limits) if limit.person_id is None]
    people = [(si, limit.person_id) for si, limit in enumerate(limits) if limit.person_id is not None]
    parts, params, stays = [], [], []
    if steps:
        ctes, step_params = _step_stays(n, steps, frm, from_us)
        parts.append(ctes)
        params += step_params
        stays.append("SELECT base, start_u, end_u, dep FROM step_stay")
    if people:
        active = limits[people[0][0]].steps
        pieces, pieces_params = _person_pieces(
            n, workflow_id=workflow_id, active=active, people=people, frm=frm, to=to, from_us=from_us
        )
        ctes, person_params = _person_stays(n, from_us)
        parts += [pieces, ctes]
        params += [*pieces_params, *person_params]
        stays.append("SELECT base, start_u, end_u, dep FROM person_stay")
    if not stays:
        return [], [Totals() for _ in limits]
    values = ", ".join(["(%s, %s, %s)"] * sum(len(limit.series) for limit in limits))
    # A stretch of constant occupancy and limit in the window, from u to next_u (null while
    # it lasts): its time at and over the limit, and whether it reached it.
    next_u = f"CASE WHEN next_k / {_SPAN} = k / {_SPAN} AND next_k %% {_SPAN} < {_AFTER} THEN next_k %% {_SPAN} END"
    over = "lim > 0 AND occ > lim"
    at_limit = "CASE WHEN lim > 0 AND occ = lim THEN COALESCE(next_u, %s) - u ELSE 0 END"
    over_limit = f"CASE WHEN {over} THEN COALESCE(next_u, %s) - u ELSE 0 END"
    reached = "CASE WHEN lim > 0 AND occ >= lim THEN 1 ELSE 0 END"
    if periods:
        judged = f"""
    b AS (
        SELECT k, delta, occ, next_k, lim, CASE WHEN {over} THEN 1 ELSE 0 END AS over,
               LAG(lim) OVER (ORDER BY k) AS prev_lim
        FROM r
    ),
    -- Each stretch, and whether `over` changes there (the occupancy before is occ - delta,
    -- under the limit before; a scope's first row starts from nothing).
    seg AS (
        SELECT k, k / {_SPAN} AS si, k %% {_SPAN} AS u, lim, occ, over, {next_u} AS next_u,
               CASE WHEN k %% {_SPAN} = 0 THEN over
                    WHEN (CASE WHEN prev_lim > 0 AND occ - delta > prev_lim THEN 1 ELSE 0 END) <> over THEN 1
                    ELSE 0 END AS starts
        FROM b
        WHERE k %% {_SPAN} < {_AFTER}
    ),
    -- Gaps and islands: a period is a scope's run of rows with the same running count of
    -- starts (counted across scopes: the scope in the group splits them).
    isl AS (
        SELECT si, k, u, next_u, occ, lim, over, {at_limit} AS at_limit, {over_limit} AS over_limit,
               {reached} AS reached, SUM(starts) OVER (ORDER BY k ROWS UNBOUNDED PRECEDING) AS grp
        FROM seg
    )
    SELECT 0, si, MAX(over), MIN(u), MAX(COALESCE(next_u, -1)), COUNT(next_u), COUNT(*),
           SUM(at_limit), SUM(over_limit), MAX(reached), MAX(occ - lim)
    FROM isl
    GROUP BY si, grp"""
    else:
        judged = f"""
    seg AS (
        SELECT k / {_SPAN} AS si, k %% {_SPAN} AS u, lim, occ, {next_u} AS next_u
        FROM r
        WHERE k %% {_SPAN} < {_AFTER}
    )
    SELECT 0, si, NULL, NULL, NULL, NULL, NULL, SUM({at_limit}), SUM({over_limit}), MAX({reached}), NULL
    FROM seg
    GROUP BY si"""
    statement = f"""
    WITH {_transitions(n, following=bool(steps))},{",".join(parts)},
    stay AS ({" UNION ALL ".join(stays)}),
    lims(si, u, lim) AS (VALUES {values}),
    -- Each stay adds one where it starts (the state at `from`: at `from`) and takes it back
    -- where it ends (after the window if it lasts): every scope's changes sum to zero, so
    -- one running sum serves them all.
    -- A limit coming into force is a change of nothing but the limit.
    change AS (
        SELECT base + start_u AS k, CAST(NULL AS BIGINT) AS lim, 1 AS delta FROM stay
        UNION ALL
        SELECT base + end_u, NULL, -1 FROM stay
        UNION ALL
        SELECT si * {_SPAN} + u, lim, 0 FROM lims
    ),
    -- Changes at one instant are one change; an integer, so the running sum is a bigint.
    c AS (SELECT k, MAX(lim) AS lim, CAST(SUM(delta) AS INTEGER) AS delta FROM change GROUP BY k),
    -- Each row carries the limit in force: the last one that came into force (each scope
    -- has one at `from`, so it never reaches into the scope before). A limit comes as
    -- its order among the limits (in k's order) * {_LIMIT_PACK} + its value, so the running
    -- maximum is the last one.
    r AS (
        SELECT k, delta, SUM(delta) OVER w AS occ, LEAD(k) OVER w AS next_k,
               MAX(lim) OVER w %% {_LIMIT_PACK} AS lim
        FROM c
        WINDOW w AS (ORDER BY k ROWS UNBOUNDED PRECEDING)
    ),{judged}
    UNION ALL
    -- Little's law's measures of each scope: its stays' time inside the window, their departures.
    SELECT 1, base / {_SPAN}, NULL, NULL, NULL, NULL, NULL,
           SUM(CASE WHEN end_u < {_AFTER} THEN end_u ELSE %s END - start_u), SUM(dep), NULL, NULL
    FROM stay
    GROUP BY base
    ORDER BY 1, 4, 2
    """
    window_us = to_us - from_us
    in_force = [(si, u, lim) for si, limit in enumerate(limits) for u, lim in limit.series]  # in k's order
    params = [
        *_transitions_params(workflow_id, frm, to),
        *params,
        *(v for order, (si, u, lim) in enumerate(in_force) for v in (si, u, order * _LIMIT_PACK + lim)),
        window_us,
        window_us,
        window_us,
    ]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Compiling this statement (its estimated cost is over jit_above_cost) costs more
            # than the compiled code saves: ~70 of 750 ms at 1M events. SET LOCAL lasts for
            # the implicit transaction of the one query string.
            cursor.execute("SET LOCAL jit = off; " + statement, params)
            cursor.nextset()
        else:
            cursor.execute(statement, params)
        rows = cursor.fetchall()
    # A period whose last part has no end (COUNT(next_u) < COUNT(*)) is still going on; the
    # int()s: PostgreSQL sums bigints as numeric.
    stretches = [
        Period(
            int(si),
            bool(over),
            from_us + int(start),
            from_us + int(end) if ended == total else None,
            int(most),
        )
        for part, si, over, start, end, ended, total, *_, most in rows
        if part == 0 and periods
    ]
    sums = [[0, 0, False, 0, 0] for _ in limits]
    for part, si, *_, at, above, reached, _ in rows:
        if part == 0:  # a period, or without `periods` the scope's window
            sums[si][0] += int(at)
            sums[si][1] += int(above)
            sums[si][2] = sums[si][2] or bool(reached)
        else:
            sums[si][3:] = int(at), int(above)  # Little's law's: held, departures
    return stretches, [Totals(*s) for s in sums]


def forced_admissions(workflow_id, *, since, to) -> list[tuple]:
    """(event id, step id, at us, actor username, reason, the task's lane and assignee now or
    None) of forced admissions in [since, to]."""
    n = _names(connection.vendor)
    statement = f"""
    SELECT e.{n["id"]}, e.{n["to"]}, {_EPOCH_US[connection.vendor].format("e." + n["at"])},
           a.{n["username"]}, e.{n["reason"]}, t.{n["task_lane"]}, t.{n["task_assignee"]}
    FROM {n["event"]} e LEFT JOIN {n["user_table"]} a ON a.{n["user_id"]} = e.{n["actor"]}
    LEFT JOIN {n["task_table"]} t ON t.{n["task_id"]} = e.{n["task"]}
    WHERE e.{n["workflow"]} = %s AND e.{n["kind"]} = '{EventKind.FORCED}' AND e.{n["at"]} >= %s AND e.{n["at"]} <= %s
    ORDER BY e.{n["at"]}, e.{n["id"]}
    """
    with connection.cursor() as cursor:
        cursor.execute(statement, [sql.uuid_param(workflow_id), _instant(since), _instant(to)])
        return cursor.fetchall()


def queue_wait_ranks(workflow_id, *, frm, to, percentiles) -> list[tuple]:
    """(step id, waits, rank, wait us): of the waits in each step's queue that ended in the
    window, sorted, only the ranks that the percentiles interpolate between (0-based)."""
    n = _names(connection.vendor)
    wanted = " OR ".join(f"rn = (n - 1) * {int(p)} / 100 OR rn = (n - 1) * {int(p)} / 100 + 1" for p in percentiles)
    statement = f"""
    WITH {_transitions(n)},{_changes(n)},
    w AS (
        SELECT prev_step AS step_id, u - prev_u AS wait FROM d
        WHERE prev_state = {QUEUED} AND (state <> {QUEUED} OR step_id <> prev_step)
    ),
    r AS (
        SELECT step_id, wait, ROW_NUMBER() OVER (PARTITION BY step_id ORDER BY wait) - 1 AS rn,
               COUNT(*) OVER (PARTITION BY step_id) AS n
        FROM w
    )
    SELECT step_id, n, rn, wait FROM r WHERE {wanted}
    """
    with connection.cursor() as cursor:
        cursor.execute(statement, _transitions_params(workflow_id, frm, to))
        return cursor.fetchall()


def state_events_up_to(workflow_id, *, frm, to, most: int) -> int:
    """The board's state events in [frm, to], counted up to `most` + 1: the count reads at
    most that many entries of taskevent_flow_state_by_time, whatever the history holds."""
    n = _names(connection.vendor)
    statement = f"""
    SELECT COUNT(*) FROM (
        SELECT 1 FROM {n["event"]}
        WHERE {n["workflow"]} = %s AND {state_event()} AND {n["at"]} >= %s AND {n["at"]} <= %s
        LIMIT %s
    ) x
    """
    with connection.cursor() as cursor:
        cursor.execute(statement, [sql.uuid_param(workflow_id), _instant(frm), _instant(to), most + 1])
        return cursor.fetchone()[0]


# Each finishing task's state events, in its order, with when each state ends and the
# task's first finish. PostgreSQL reads each task's events through the (workflow, task, at,
# id) index already in order (LATERAL: no sort of the whole window's histories); SQLite has
# no LATERAL and windows over the join.
_HISTORIES = {
    "postgresql": """
        SELECT w.finishing AS task_id, x.* FROM w CROSS JOIN LATERAL (
            SELECT {columns},
                   LEAD({at}) OVER (ORDER BY {at}, {id}) AS next_at,
                   MIN(CASE WHEN {finish} THEN {at} END) OVER () AS finished
            FROM {event} WHERE {workflow} = %s AND {task} = w.finishing AND {state}
        ) x""",
    "sqlite": """
        SELECT {task} AS task_id, {columns},
               LEAD({at}) OVER (PARTITION BY {task} ORDER BY {at}, {id}) AS next_at,
               MIN(CASE WHEN {finish} THEN {at} END) OVER (PARTITION BY {task}) AS finished
        FROM {event} JOIN w ON {task} = w.finishing
        WHERE {workflow} = %s AND {state}""",
}


def active_time(workflow_id, *, done: list, not_active: list, frm, to) -> list[tuple]:
    """(task id, microseconds admitted in active steps before its first entry into a done
    step) of the tasks whose first entry into a done step lies in the window and that were
    admitted in an active step before it."""
    n = _names(connection.vendor)
    us = _EPOCH_US[n["vendor"]]
    entry = f"kind IN ({_kinds_list(ENTRY_KINDS)})"
    histories = _HISTORIES[n["vendor"]].format(
        columns=f"{n['at']} AS at, {n['kind']} AS kind, COALESCE({n['to']}, {n['from']}) AS step_id",
        finish=f"{n['kind']} IN ({_kinds_list(ENTRY_KINDS)}) AND {n['to']} IN ({_in(done)})",
        at=n["at"],
        id=n["id"],
        task=n["task"],
        event=n["event"],
        workflow=n["workflow"],
        state=state_event(),
    )
    until = us.format("CASE WHEN next_at < finished THEN next_at ELSE finished END")
    statement = f"""
    WITH w AS (
        SELECT DISTINCT {n["task"]} AS finishing FROM {n["event"]}
        WHERE {n["workflow"]} = %s AND {n["to"]} IN ({_in(done)}) AND {n["at"]} >= %s AND {n["at"]} <= %s
    ),
    f AS ({histories})
    SELECT task_id, SUM({until} - {us.format("at")}) FROM f
    WHERE finished >= %s AND finished <= %s AND at < finished
      AND {entry} AND step_id NOT IN ({_in(not_active)})
    GROUP BY task_id
    """
    wf = sql.uuid_param(workflow_id)
    params = [
        wf,
        *_ids(done),
        _instant(frm),
        _instant(to),
        *_ids(done),
        wf,
        _instant(frm),
        _instant(to),
        *_ids(not_active),
    ]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return [(task_id, int(held)) for task_id, held in cursor.fetchall()]


def _block_spans(n: dict) -> str:
    """A subquery of every block that overlaps the window [%s = `to`, then %s = `from`,
    after %s = the workflow]: (task_id, reason, type_id, type_name, at, next_at), a
    `blocked` event until the task's next blocked, unblocked, archived or deleted event (a
    new reason or type starts a new block). The type is the one the event recorded, with its
    name then. The board's block events up to `to` are read: a small part of its history."""
    kinds = _kinds_list([EventKind.BLOCKED, EventKind.UNBLOCKED, EventKind.ARCHIVED, EventKind.DELETED])
    typed = _DETAIL_TEXT[n["vendor"]]
    return f"""
    SELECT task_id, reason, type_id, type_name, at, next_at FROM (
        SELECT {n["task"]} AS task_id, {n["kind"]} AS kind, {n["reason"]} AS reason, {n["at"]} AS at,
               {typed.format(column=n["detail"], key="type_id")} AS type_id,
               {typed.format(column=n["detail"], key="type")} AS type_name,
               LEAD({n["at"]}) OVER (PARTITION BY {n["task"]} ORDER BY {n["at"]}, {n["id"]}) AS next_at
        FROM {n["event"]}
        WHERE {n["workflow"]} = %s AND {n["kind"]} IN ({kinds}) AND {n["at"]} <= %s
    ) b
    WHERE kind = '{EventKind.BLOCKED}' AND (next_at IS NULL OR next_at > %s)"""


def blocks(workflow_id, *, frm, to) -> list[tuple]:
    """(task id, reason, type id or None, type name or None, started us, ended us or None)
    of every block that overlaps the window (`_block_spans`), in time order."""
    n = _names(connection.vendor)
    us = _EPOCH_US[n["vendor"]]
    statement = f"""
    SELECT task_id, reason, type_id, type_name, {us.format("at")}, {us.format("next_at")}
    FROM ({_block_spans(n)}) b
    ORDER BY at
    """
    with connection.cursor() as cursor:
        cursor.execute(statement, [sql.uuid_param(workflow_id), _instant(to), _instant(frm)])
        return cursor.fetchall()


# A text value of an event's `detail` (keys are constants, never user input).
_DETAIL_TEXT = {"postgresql": "{column} ->> '{key}'", "sqlite": "json_extract({column}, '$.{key}')"}


def blocked_capacity(workflow_id, *, not_active: list, frm, to, from_us: int, to_us: int) -> tuple[int, dict]:
    """(the task-microseconds the active steps held in the window, {block type id or None:
    the part of them its blocks held}): an active step is one not `not_active` (a step
    deleted since among them); a block holds capacity while its task is admitted in one.
    One pass over the window's transitions, summed in the database."""
    n = _names(connection.vendor)
    us = _EPOCH_US[n["vendor"]]
    outside = f"AND step_id NOT IN ({_in(not_active)})" if not_active else ""
    statement = f"""
    WITH {_transitions(n)},
    stay AS (
        SELECT task_id, CASE WHEN at < %s THEN %s ELSE {us.format("at")} END AS s,
               COALESCE({us.format("next_at")}, %s) AS e
        FROM l WHERE state = {ADMITTED} {outside}
    ),
    blk AS (
        SELECT task_id, type_id, {n["greatest"]}({us.format("at")}, %s) AS s,
               {n["least"]}(COALESCE({us.format("next_at")}, %s), %s) AS e
        FROM ({_block_spans(n)}) b
    )
    SELECT 0, NULL, SUM(e - s) FROM stay
    UNION ALL
    SELECT 1, b.type_id, SUM({n["least"]}(st.e, b.e) - {n["greatest"]}(st.s, b.s))
    FROM blk b JOIN stay st ON st.task_id = b.task_id AND st.s < b.e AND b.s < st.e
    GROUP BY b.type_id
    """
    params = [
        *_transitions_params(workflow_id, frm, to),
        _instant(frm),
        from_us,
        to_us,
        *_ids(not_active),
        from_us,
        to_us,
        to_us,
        sql.uuid_param(workflow_id),
        _instant(to),
        _instant(frm),
    ]
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        rows = cursor.fetchall()
    occupied = next((int(held or 0) for part, _, held in rows if part == 0), 0)
    return occupied, {type_id: int(held) for part, type_id, held in rows if part == 1}
