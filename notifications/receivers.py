"""The board tells this app what happened (boards.signals), after commit: watches,
notifications and webhook deliveries follow, each written whole on its own, so a change
that concerns nobody else costs one round trip (the watch and the webhooks' read). A
comment's webhook event is its board change's (`comment.created` is that change's live
message)."""

from django.dispatch import receiver

from boards.signals import board_changed, comment_posted
from notifications import news, rules, watching, webhooks


@receiver(board_changed)
def board_news(sender, workflow, events, message, **kwargs):
    tasks = {task["id"]: task for task in message.get("tasks", ())}
    steps = {step["id"]: step["name"] for step in message.get("steps", ())}
    involved = watching.involvement(rules.involved(events, tasks))
    webhooks.publish(workspace_id=workflow.workspace_id, event=message["type"], data=message, writes=involved)
    concerned = {event.task_id for event in events if event.kind in rules.WATCHED}
    watchers = watching.watchers(concerned, workflow.workspace_id) if concerned else {}
    news.deliver(rules.board_news(events, tasks, steps, watchers), workflow_id=workflow.pk)


@receiver(comment_posted)
def comment_news(sender, comment, mentioned, **kwargs):
    task = comment.task
    workspace_id = task.workflow.workspace_id
    watching.involve({comment.author_id: {task.pk}})
    watcher_ids = watching.watchers([task.pk], workspace_id).get(task.pk, set())
    found = rules.comment_news(
        comment=comment, mentioned_ids=[user.pk for user in mentioned], watcher_ids=watcher_ids, title=task.title
    )
    news.deliver(found, workflow_id=task.workflow_id)
