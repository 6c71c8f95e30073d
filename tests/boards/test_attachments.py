"""Attachments on tasks, through the API and the local file storage (a folder of this test):
what is uploaded is listed, downloaded as an attachment, deleted with its task; what is
refused leaves no row and no file."""

import io
import os
from datetime import timedelta
from urllib.parse import quote

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.handlers.wsgi import LimitedStream
from django.core.management import call_command
from django.db import connection, transaction
from django.test import RequestFactory
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.module_loading import import_string

from boards import admission
from boards.attachment_api import TaskAttachmentsView
from boards.attachments import stored_files, sweep_orphans
from boards.models import Attachment, Task
from boards.structure import workflow_delete, workspace_delete
from boards.uploads import MULTIPART_SLACK, clean_file_name
from kandev import storage_settings
from tests.clients import api_for
from tests.conftest import member_client
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from workflows.models import Role, Workflow


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    """The default storage is a folder of this test."""
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": storage_settings.LOCAL, "OPTIONS": {"location": str(tmp_path)}},
    }
    return tmp_path


def upload(name="notes.txt", content=b"hello", content_type="text/plain"):
    return SimpleUploadedFile(name, content, content_type=content_type)


def attach(client, task, **kwargs):
    return client.post(f"/api/v1/tasks/{task.pk}/attachments/", {"file": upload(**kwargs)}, format="multipart")


def version(task) -> int:
    return Workflow.objects.get(pk=task.workflow_id).version


def fresh(task) -> Task:
    return Task.objects.get(pk=task.pk)


@pytest.fixture
def task(board, make_task):
    return make_task(board[0], "Write the report")


# --- upload, list, download --------------------------------------------------------------


def test_an_upload_is_listed_counted_on_the_card_and_downloaded_as_an_attachment(api, task, owner):
    before = version(task)
    answer = attach(api, task, name="report.txt", content=b"quarterly numbers")
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert body["name"] == "report.txt"
    assert (body["task_id"], body["size"], body["content_type"]) == (str(task.pk), 17, "text/plain")
    assert body["uploaded_by"] == owner.username
    assert body["url"] == f"/api/v1/attachments/{body['id']}/download/"

    listed = api.get(f"/api/v1/tasks/{task.pk}/attachments/").json()
    assert [a["id"] for a in listed["results"]] == [body["id"]]
    assert api.get(f"/api/v1/tasks/{task.pk}/").json()["attachment_count"] == 1
    assert fresh(task).attachment_count == 1
    assert version(task) == before + 1

    download = api.get(body["url"])
    assert download.status_code == 200
    assert b"".join(download.streaming_content) == b"quarterly numbers"
    assert download["Content-Disposition"] == 'attachment; filename="report.txt"'
    assert download["Content-Type"] == "text/plain"
    assert download["X-Content-Type-Options"] == "nosniff"
    assert download["Content-Security-Policy"] == "default-src 'none'; sandbox"


def test_a_file_the_storage_lost_is_a_404(api, task, media):
    body = attach(api, task).json()
    (media / Attachment.objects.get().file.name).unlink()
    answer = api.get(body["url"])
    assert (answer.status_code, answer.json()["detail"]) == (404, "This file is missing from the storage.")


def test_the_stored_name_is_kandevs_not_the_uploaders(api, task, media):
    attach(api, task, name="../../etc/passwd")
    attachment = Attachment.objects.get()
    assert attachment.name == "passwd"
    assert attachment.file.name.startswith("attachments/") and "passwd" not in attachment.file.name
    assert [p.parent for p in media.rglob("*") if p.is_file()] == [media / "attachments"]
    attach(api, task, name="passwd")  # the same name again: a file of its own
    assert len(stored_files()) == 2


def test_a_non_ascii_name_is_downloaded_under_its_name(api, task):
    body = attach(api, task, name="Über​plan 📎.pdf", content=b"%PDF-1.4", content_type="application/pdf").json()
    assert body["name"] == "Überplan 📎.pdf"  # the zero-width space is gone
    download = api.get(body["url"])
    assert download["Content-Disposition"] == f"attachment; filename*=utf-8''{quote('Überplan 📎.pdf')}"
    assert download["Content-Type"] == "application/pdf"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("C:\\Users\\me\\plan.docx", "plan.docx"),
        ("photo\u202egpj.exe", "photogpj.exe"),  # a right-to-left override would hide ".exe"
        ("  many   spaces .txt  ", "many spaces .txt"),
        ("..", "file"),
        ("", "file"),
        ("a" * 300 + ".pdf", "a" * 251 + ".pdf"),
        ("line\nbreak\x00.txt", "linebreak.txt"),
    ],
)
def test_file_names_are_cleaned(raw, clean):
    assert clean_file_name(raw) == clean


@pytest.mark.parametrize(
    ("name", "content", "content_type"),
    [
        ("page.html", b"<script>alert(1)</script>", "text/plain"),
        ("logo.svg", b"<svg/>", "image/svg+xml"),
        ("notes.txt", b"<html>", "text/html"),
        ("setup.exe", b"hello", "application/octet-stream"),
        ("holiday.jpg", b"MZ\x90\x00 a program", "image/jpeg"),
        ("run.sh", b"#!/bin/sh", "text/plain"),
    ],
)
def test_programs_and_web_pages_are_refused_and_leave_nothing(api, task, name, content, content_type):
    answer = attach(api, task, name=name, content=content, content_type=content_type)
    assert answer.status_code == 400
    assert answer.json()["errors"]["file"][0].startswith("Programs, scripts and web pages")
    assert not Attachment.objects.exists()
    assert stored_files() == []
    assert fresh(task).attachment_count == 0


def test_an_unknown_type_is_kept_as_an_octet_stream(api, task):
    body = attach(api, task, name="data.kandevbin", content=b"\x00\x01", content_type="nonsense").json()
    assert body["content_type"] == "application/octet-stream"


def test_a_missing_or_empty_file_is_a_field_error(api, task):
    answer = api.post(f"/api/v1/tasks/{task.pk}/attachments/", {"other": "x"}, format="multipart")
    assert (answer.status_code, answer.json()["errors"]) == (400, {"file": ["Choose a file to attach."]})
    assert attach(api, task, content=b"").json()["errors"] == {"file": ["The file is empty."]}
    assert stored_files() == []


# --- bounds ------------------------------------------------------------------------------


class CountingStream(io.BytesIO):
    """A request body that counts what the server read of it."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.consumed = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.consumed += len(chunk)
        return chunk

    def readline(self, size=-1):
        line = super().readline(size)
        self.consumed += len(line)
        return line


def post_raw(owner, task, body: bytes, *, content_length: int):
    """The view called with a raw multipart body, as a server hands it over."""
    stream = CountingStream(body)
    url = f"/api/v1/tasks/{task.pk}/attachments/"
    request = RequestFactory().generic("POST", url, data=body, content_type=MULTIPART_CONTENT)
    request.META.update({"CONTENT_LENGTH": str(content_length), "wsgi.input": stream})
    request._stream = LimitedStream(stream, content_length)
    request._force_auth_user = owner
    response = TaskAttachmentsView.as_view()(request, task_id=task.pk)
    response.render()
    return response, stream


def test_a_file_past_the_bound_is_refused_while_it_is_read_and_leaves_nothing(settings, owner, task):
    settings.KANDEV_MAX_ATTACHMENT_BYTES = 100 * 1024
    body = encode_multipart(BOUNDARY, {"file": upload("big.txt", b"x" * (150 * 1024))})
    response, stream = post_raw(owner, task, body, content_length=len(body))
    assert response.status_code == 413
    assert response.data["code"] == "too_large"
    assert stream.consumed < len(body)  # it stopped reading
    assert not Attachment.objects.exists() and stored_files() == []


def test_a_body_announced_past_the_bound_is_refused_before_a_byte_is_read(settings, owner, task):
    settings.KANDEV_MAX_ATTACHMENT_BYTES = 1024
    body = encode_multipart(BOUNDARY, {"file": upload("big.txt", b"x" * 4096)})
    response, stream = post_raw(owner, task, body, content_length=1024 + MULTIPART_SLACK + 1)
    assert (response.status_code, stream.consumed) == (413, 0)
    assert not Attachment.objects.exists() and stored_files() == []


def test_a_task_holds_a_bounded_number_of_attachments(settings, api, task):
    settings.KANDEV_MAX_ATTACHMENTS_PER_TASK = 2
    assert attach(api, task).status_code == attach(api, task).status_code == 201
    answer = attach(api, task)
    assert answer.status_code == 409
    assert (answer.json()["code"], answer.json()["limit"]) == ("too_many_attachments", 2)
    assert Attachment.objects.count() == 2 and len(stored_files()) == 2


# --- who may -----------------------------------------------------------------------------


def test_viewers_list_and_download_but_neither_upload_nor_delete(api, task, workflow):
    body = attach(api, task).json()
    viewer = member_client(workflow.workspace, Role.VIEWER)
    assert viewer.get(f"/api/v1/tasks/{task.pk}/attachments/").json()["count"] == 1
    assert viewer.get(body["url"]).status_code == 200
    assert attach(viewer, task).status_code == 403
    assert viewer.delete(f"/api/v1/attachments/{body['id']}/").status_code == 403
    assert Attachment.objects.count() == 1 and len(stored_files()) == 1


def test_the_uploader_or_an_owner_deletes_another_member_may_not(
    api, task, workflow, django_capture_on_commit_callbacks
):
    member = member_client(workflow.workspace, Role.MEMBER)
    other = member_client(workflow.workspace, Role.MEMBER)
    mine = attach(member, task).json()
    theirs = attach(member, task).json()
    assert other.delete(f"/api/v1/attachments/{mine['id']}/").status_code == 403
    with django_capture_on_commit_callbacks(execute=True):
        assert member.delete(f"/api/v1/attachments/{mine['id']}/").status_code == 204
        assert api.delete(f"/api/v1/attachments/{theirs['id']}/").status_code == 204
    assert not Attachment.objects.exists() and stored_files() == []
    assert fresh(task).attachment_count == 0


def test_another_workspace_sees_nothing(api, task):
    body = attach(api, task).json()
    stranger = UserFactory()
    MembershipFactory(workspace=WorkflowFactory().workspace, user=stranger, role=Role.OWNER)
    client = api_for(stranger)
    missing = client.get(f"/api/v1/attachments/{'0' * 8}-0000-0000-0000-{'0' * 12}/download/")
    for answer in (
        client.get(f"/api/v1/tasks/{task.pk}/attachments/"),
        attach(client, task),
        client.get(body["url"]),
        client.delete(f"/api/v1/attachments/{body['id']}/"),
    ):
        assert (answer.status_code, answer.json()) == (missing.status_code, missing.json()) == (404, missing.json())
    assert Attachment.objects.count() == 1


# --- files go with their task, board and workspace ---------------------------------------


def test_deleting_a_task_removes_its_files_once_it_commits(api, task, owner, django_capture_on_commit_callbacks):
    attach(api, task)
    attach(api, task)
    assert len(stored_files()) == 2
    with django_capture_on_commit_callbacks(execute=True):
        admission.task_delete(task=fresh(task), actor=owner)
    assert stored_files() == [] and not Attachment.objects.exists()


def test_a_rolled_back_deletion_keeps_the_files(api, task, owner, django_capture_on_commit_callbacks):
    attach(api, task)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError), transaction.atomic():
            Task.objects.filter(pk=task.pk).delete()
            raise RuntimeError("the deletion fails")
    assert callbacks == []
    assert len(stored_files()) == 1 and Attachment.objects.count() == 1


def test_archiving_keeps_the_files(api, task, owner):
    attach(api, task)
    admission.task_archive(task=fresh(task), actor=owner)
    assert len(stored_files()) == 1 and fresh(task).attachment_count == 1


@pytest.mark.parametrize("delete", ["workflow", "workspace"])
def test_deleting_a_board_or_workspace_removes_the_files(
    api, board, make_task, workflow, delete, django_capture_on_commit_callbacks
):
    for title in ("a", "b"):
        attach(api, make_task(board[0], title))
    with django_capture_on_commit_callbacks(execute=True):
        if delete == "workflow":
            workflow_delete(workflow=workflow)
        else:
            workspace_delete(workspace=workflow.workspace)
    assert stored_files() == [] and not Attachment.objects.exists()


def test_the_sweep_removes_only_old_files_no_attachment_names(api, task, media):
    attach(api, task)
    kept = stored_files()
    orphan = default_storage.save("attachments/orphan", io.BytesIO(b"left by a crash"))
    assert sweep_orphans() == []  # too young: its upload may still be committing
    assert sweep_orphans(grace=timedelta(0), dry_run=True) == [orphan]
    assert stored_files() == sorted([*kept, orphan])
    assert sweep_orphans(grace=timedelta(0)) == [orphan]
    assert stored_files() == kept


def test_the_sweep_command_removes_old_orphans(api, task, media):
    attach(api, task)
    kept = stored_files()
    orphan = default_storage.save("attachments/orphan", io.BytesIO(b"left by a crash"))
    an_hour_ago = (timezone.now() - timedelta(hours=2)).timestamp()
    os.utime(media / orphan, (an_hour_ago, an_hour_ago))
    out = io.StringIO()
    call_command("sweep_attachments", stdout=out)
    assert out.getvalue().splitlines() == [orphan, "removed 1 orphaned attachment files"]
    assert stored_files() == kept


# --- the card ----------------------------------------------------------------------------


def test_the_board_reads_the_count_without_a_query_per_task(api, board, make_task):
    url = f"/api/v1/workflows/{board[0].workflow_id}/board/"
    make_task(board[0], "one")
    with CaptureQueriesContext(connection) as one:
        api.get(url)
    for i in range(4):
        attach(api, make_task(board[0], f"t{i}"))
    with CaptureQueriesContext(connection) as five:
        tasks = [t for step in api.get(url).json()["steps"] for t in step["tasks"]]
    assert len(five) == len(one)
    assert sorted(t["attachment_count"] for t in tasks) == [0, 1, 1, 1, 1]


def test_an_attachment_is_a_board_change_whose_message_carries_the_task(api, task, broadcasts):
    messages = broadcasts(task.workflow, lambda: attach(api, task))
    assert [m["type"] for m in messages] == ["task.updated"]
    assert messages[0]["task"]["attachment_count"] == 1
    assert messages[0]["version"] == version(task)


def test_the_s3_settings_make_an_s3_storage():
    """No S3 store is reachable here: the settings are checked by building the storage."""
    config = storage_settings.default_storage(
        {
            "KANDEV_STORAGE": "s3",
            "KANDEV_S3_BUCKET": "kandev-files",
            "KANDEV_S3_ENDPOINT_URL": "https://minio.example.com:9000",
            "KANDEV_S3_REGION": "eu-central-1",
            "KANDEV_S3_ACCESS_KEY_ID": "AKIA",
            "KANDEV_S3_SECRET_ACCESS_KEY": "secret",
            "KANDEV_S3_ADDRESSING_STYLE": "path",
            "KANDEV_S3_PREFIX": "prod",
        },
        media_root=None,
    )
    storage = import_string(config["BACKEND"])(**config["OPTIONS"])
    assert (storage.bucket_name, storage.endpoint_url, storage.region_name) == (
        "kandev-files",
        "https://minio.example.com:9000",
        "eu-central-1",
    )
    assert (storage.location, storage.addressing_style, storage.default_acl, storage.file_overwrite) == (
        "prod",
        "path",
        None,
        False,
    )


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"KANDEV_STORAGE": "ftp"}, "KANDEV_STORAGE"),
        ({"KANDEV_STORAGE": "s3"}, "KANDEV_S3_BUCKET"),
        ({"KANDEV_STORAGE": "s3", "KANDEV_S3_BUCKET": "b", "KANDEV_S3_ACCESS_KEY_ID": "k"}, "KANDEV_S3_SECRET"),
        ({"KANDEV_STORAGE": "s3", "KANDEV_S3_BUCKET": "b", "KANDEV_S3_ADDRESSING_STYLE": "x"}, "ADDRESSING_STYLE"),
    ],
)
def test_bad_storage_settings_stop_startup_naming_the_variable(environ, named):
    with pytest.raises(ImproperlyConfigured, match=named):
        storage_settings.default_storage(environ, media_root=None)


def test_local_storage_is_beside_the_database_by_default():
    media = django_settings.BASE_DIR / "media"
    assert storage_settings.default_storage({}, media_root=media) == {
        "BACKEND": storage_settings.LOCAL,
        "OPTIONS": {"location": str(media)},
    }


# --- export ------------------------------------------------------------------------------


def test_the_export_lists_a_tasks_attachments_and_an_import_brings_no_files(api, task, owner, workflow):
    attach(api, task, name="plan.pdf", content=b"%PDF", content_type="application/pdf")
    document = api.get(f"/api/v1/workflows/{workflow.pk}/export/?format=json").json()
    (row,) = document["workflows"][0]["tasks"]
    (listed,) = row["attachments"]
    assert {k: listed[k] for k in ("name", "size", "content_type", "uploaded_by")} == {
        "name": "plan.pdf",
        "size": 4,
        "content_type": "application/pdf",
        "uploaded_by": owner.username,
    }
    document["workflows"][0]["name"] = "Restored"
    imported = api.post(f"/api/v1/workspaces/{workflow.workspace_id}/workflows/import/", document, format="json")
    assert imported.status_code == 201, imported.json()
    restored = Task.objects.get(workflow__name="Restored")
    assert restored.attachment_count == 0 and not restored.attachments.exists()
    assert len(stored_files()) == 1
