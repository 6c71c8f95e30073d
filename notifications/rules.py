"""Who hears of what a board change did: its history events in, news out. No queries: the
caller reads the watchers (notifications.news).

- `assigned`: the new assignee of a task (assigned, or created with them);
- `pulled`, `blocked`, `unblocked`, `forced`: everyone watching the task;
- nobody hears of their own action, and a person hears of a task once per change (the first
  news of it: `assigned` before what happened to the task as they watch it).
"""

from dataclasses import dataclass, field

from boards.models import EventKind

# A history event's kind -> the news its task's watchers get.
WATCHED = {
    EventKind.PULLED: "pulled",
    EventKind.BLOCKED: "blocked",
    EventKind.UNBLOCKED: "unblocked",
    EventKind.FORCED: "forced",
}


@dataclass(frozen=True)
class News:
    recipient_id: int
    kind: str
    task_id: object
    actor_id: int | None
    detail: dict = field(default_factory=dict, compare=False)


def assignee_of(event, task: dict):
    """The person an event gave the task to, or None."""
    action = event.detail.get("action")
    if action == "assign":
        return event.detail.get("assignee_id")
    if action == "create":
        return task.get("assignee_id")
    return None


def involved(events, tasks: dict) -> dict:
    """user id -> task ids they now watch: authors of new tasks and new assignees."""
    found: dict = {}
    for event in events:
        task = tasks.get(str(event.task_id))
        if task is None:
            continue
        people = [assignee_of(event, task)]
        if event.detail.get("action") == "create":
            people.append(event.actor_id)
        for person in people:
            if person is not None:
                found.setdefault(_user_id(person), set()).add(event.task_id)
    return found


def board_news(events, tasks: dict, steps: dict, watchers: dict) -> list[News]:
    """The news of one change. `tasks`: str task id -> the live message's task (deleted ones
    are missing: nobody hears of them); `steps`: str step id -> name; `watchers`: task id ->
    user ids."""
    news, heard = [], set()

    def tell(recipient, kind, event, task, **extra):
        if recipient is None or recipient == event.actor_id or (recipient, event.task_id) in heard:
            return
        heard.add((recipient, event.task_id))
        detail = {"title": task["title"], **{k: v for k, v in extra.items() if v}}
        news.append(News(recipient, kind, event.task_id, event.actor_id, detail))

    for event in events:
        task = tasks.get(str(event.task_id))
        if task is None:
            continue
        assignee = assignee_of(event, task)
        if assignee is not None:
            tell(_user_id(assignee), "assigned", event, task)
    for event in events:
        task = tasks.get(str(event.task_id))
        if task is None or event.kind not in WATCHED:
            continue
        step = steps.get(str(event.to_step_id)) if event.to_step_id else None
        for watcher in sorted(watchers.get(event.task_id, ())):
            tell(watcher, WATCHED[event.kind], event, task, step=step, reason=event.reason)
    return news


def comment_news(*, comment, mentioned_ids, watcher_ids, title: str) -> list[News]:
    """A new comment: the people it mentions hear `mentioned`, the task's other watchers
    `commented`; never its author."""
    news, author = [], comment.author_id
    detail = {"title": title}
    for user_id in sorted(set(mentioned_ids)):
        if user_id != author:
            news.append(News(user_id, "mentioned", comment.task_id, author, detail))
    for user_id in sorted(set(watcher_ids) - set(mentioned_ids)):
        if user_id != author:
            news.append(News(user_id, "commented", comment.task_id, author, detail))
    return news


def _user_id(value) -> int:
    return int(value)
