"""Signals sent inside the admission transaction.

`task_admitted`: a task was admitted into a step (created, moved, pulled, promoted, restored);
the step-event engine runs the step's `on_enter` actions.
`task_retired`: a task was archived or is about to be deleted; its agent sessions end.
All carry `change`, the locked `BoardChange` of the transaction.
"""

from django.dispatch import Signal

task_admitted = Signal()
task_retired = Signal()
