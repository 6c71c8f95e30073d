"""Files attached to tasks, kept through Django's storage API (`STORAGES["default"]`: local
files or an S3-compatible store, kandev/storage_settings.py).

An attachment is a change of its task's card (its `attachment_count`), so adding or deleting
one is a board change: the version advances and the live message carries the task. The file
is written before that change's transaction and removed again if the change fails; a
deleted attachment's file goes only once the deletion commits, so a rolled-back delete
(of the attachment, its task, its board or its workspace) loses nothing. Archiving a task
keeps its files. What a crash leaves between the two (a file with no row) is what
`sweep_orphans` (`manage.py sweep_attachments`) removes.
"""

import logging
import uuid
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.http import Http404
from django.utils import timezone

from boards.changes import task_change
from boards.locking import board_transaction
from boards.models import Attachment, Task
from boards.uploads import checked_type, clean_file_name
from common.errors import Conflict, Forbidden
from workflows.models import Role

logger = logging.getLogger(__name__)

FOLDER = "attachments"
# A file younger than this may belong to an upload whose row is not committed yet.
SWEEP_GRACE = timedelta(hours=1)


def attachment_add(*, task: Task, actor, upload) -> Attachment:
    """Attach `upload` (an UploadedFile, already within KANDEV_MAX_ATTACHMENT_BYTES) to `task`."""
    name = clean_file_name(upload.name)
    content_type = checked_type(name, upload.content_type, upload.read(4))
    upload.seek(0)
    _check_room(task)  # early, before a byte is stored; decided again under the task's lock
    # kandev's name, never the uploader's: no path to traverse, nothing to collide with
    stored = default_storage.save(f"{FOLDER}/{uuid.uuid4().hex}", upload)
    try:
        return _record(task=task, actor=actor, name=name, size=upload.size, content_type=content_type, stored=stored)
    except BaseException:
        default_storage.delete(stored)
        raise


def _check_room(task: Task) -> None:
    limit = settings.KANDEV_MAX_ATTACHMENTS_PER_TASK
    if limit and task.attachment_count >= limit:
        raise Conflict(
            f"A task may have at most {limit} attachments; delete one first.",
            code="too_many_attachments",
            limit=limit,
        )


@board_transaction
def _record(*, task: Task, actor, name: str, size: int, content_type: str, stored: str) -> Attachment:
    with task_change(task, actor=actor) as (change, task):
        _check_room(task)
        attachment = Attachment.objects.create(
            task=task, name=name, size=size, content_type=content_type, file=stored, uploaded_by=actor
        )
        _counted(change, task, +1)
    return attachment


@board_transaction
def attachment_delete(*, attachment: Attachment, actor, role: str) -> None:
    """Delete an attachment: its uploader or an owner of the workspace (`role` is the actor's)."""
    if role != Role.OWNER and attachment.uploaded_by_id != actor.pk:
        raise Forbidden("Only the person who attached a file, or a workspace owner, may delete it.")
    with task_change(attachment.task, actor=actor) as (change, task):
        deleted, _ = Attachment.objects.filter(pk=attachment.pk, task=task).delete()
        if not deleted:  # deleted by someone else meanwhile
            raise Http404
        _counted(change, task, -1)


def _counted(change, task: Task, by: int) -> None:
    task.attachment_count += by
    task.updated_at = change.now
    task.save(update_fields=["attachment_count", "updated_at"])
    change.record.changed(task, change.steps[task.step_id])
    change.record.announce("task.updated", task=task)


@receiver(post_delete, sender=Attachment)
def _remove_file_on_commit(sender, instance: Attachment, **kwargs) -> None:
    """However the row went (its own delete, or its task's, board's or workspace's), its file
    goes once that commits. Queryset deletes send this too: the receiver makes Django
    collect the rows rather than delete them in bulk."""
    transaction.on_commit(partial(instance.file.storage.delete, instance.file.name), robust=True)


def stored_files(storage=default_storage) -> list[str]:
    """The names of every attachment file in the storage."""
    try:
        _, names = storage.listdir(FOLDER)
    except FileNotFoundError:  # a local storage before its first attachment
        return []
    return sorted(f"{FOLDER}/{name}" for name in names)


def sweep_orphans(*, storage=default_storage, grace: timedelta = SWEEP_GRACE, dry_run: bool = False) -> list[str]:
    """Remove the attachment files no attachment names (a crash between writing a file and
    committing its row), older than `grace`; returns their names (`dry_run`: removes none)."""
    known = set(Attachment.objects.values_list("file", flat=True))
    cutoff = timezone.now() - grace
    removed = []
    for name in stored_files(storage):
        if name not in known and storage.get_modified_time(name) < cutoff:
            if not dry_run:
                storage.delete(name)
            removed.append(name)
    if removed and not dry_run:
        logger.info("removed %d orphaned attachment files", len(removed))
    return removed
