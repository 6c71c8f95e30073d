"""Uploads racing for a task's last attachment places: real threads, each on its own
database connection. The task's lock decides; a refused upload's file is removed again."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from boards.attachments import attachment_add, attachment_delete, stored_files
from boards.models import Attachment, Task
from common.errors import Conflict
from tests.concurrency import race, rounds
from workflows.models import Role

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(tmp_path)}},
    }


def upload(i: int):
    return SimpleUploadedFile(f"part-{i}.txt", f"part {i}".encode(), "text/plain")


@rounds(3)
def test_racing_uploads_fill_a_task_to_its_bound_and_no_further(settings, board, make_task, owner):
    settings.KANDEV_MAX_ATTACHMENTS_PER_TASK = 2
    task = make_task(board[0], "Report")
    before = set(stored_files())

    results = race(6, lambda i: attachment_add(task=task, actor=owner, upload=upload(i)))

    errors = [r for r in results if isinstance(r, Exception) and not isinstance(r, Conflict)]
    assert not errors, errors
    refused = [r for r in results if isinstance(r, Conflict)]
    assert {r.code for r in refused} == {"too_many_attachments"} and len(refused) == 4
    kept = Attachment.objects.filter(task=task)
    assert kept.count() == Task.objects.get(pk=task.pk).attachment_count == 2
    assert set(stored_files()) - before == {a.file.name for a in kept}  # the refused ones' files are gone


@rounds(3)
def test_racing_deletes_and_uploads_keep_the_count_exact(board, make_task, owner):
    task = make_task(board[0], "Report")
    existing = [attachment_add(task=task, actor=owner, upload=upload(i)) for i in range(3)]

    def act(i):
        if i < 3:
            return attachment_delete(attachment=existing[i], actor=owner, role=Role.OWNER)
        return attachment_add(task=task, actor=owner, upload=upload(i))

    results = race(6, act)

    assert not [r for r in results if isinstance(r, Exception)], results
    assert Task.objects.get(pk=task.pk).attachment_count == Attachment.objects.filter(task=task).count() == 3
