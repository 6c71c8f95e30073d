"""Signals of the boards app, for the apps above it.

Sent inside the admission transaction (all carry `change`, the locked `BoardChange`):
`task_admitted`: a task was admitted into a step (created, moved, pulled, promoted, restored);
the step-event engine runs the step's `on_enter` actions.
`task_retired`: a task was archived or is about to be deleted; its agent sessions end.

Sent once the change has committed (never for one rolled back):
`board_changed`: one board change closed (boards/change.py close_change). Kwargs `workflow`,
`events` (the TaskEvent rows of its history: assigned, moved, pulled, blocked, forced, ...),
`message` (its live message: `type` names the change). Watchers and webhooks hear of it here.
`comment_posted` (boards/comments.py): a comment was written (`comment`, the `Comment`, its
author and task readable from it) and `mentioned`, the list of users it mentions that are
members of the workspace. Sent once when the comment is created (`mentioned` may be empty:
the task's watchers still hear of it) and on an edit only when it names someone new
(`mentioned` then lists only them).
"""

from django.dispatch import Signal

task_admitted = Signal()
task_retired = Signal()
board_changed = Signal()
comment_posted = Signal()
