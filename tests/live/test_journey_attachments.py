"""A person attaches a file to a task in its dialog, on a phone-sized screen in dark mode: sees
it listed and counted on the card, downloads it, deletes it; a web page is refused. The
server keeps its files in a folder of this module, listed before and after."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.live.pages import button, card, dialog, field, task_now
from tests.servers import Server, serving_test_database


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
def board_server(django_db_setup, media):
    """The journeys' server, keeping its attachments in `media`."""
    with Server(serving_test_database(DEBUG="1", MEDIA_ROOT=str(media))) as server:
        yield server


def stored(media: Path) -> list[str]:
    return sorted(str(p.relative_to(media)) for p in media.rglob("*") if p.is_file())


def test_a_member_attaches_downloads_and_deletes_a_file(journey, media):
    journey.walk(attach_see_download_and_delete_a_file, media=media)


def attach_see_download_and_delete_a_file(open_board, owner, workflow, board, make_task, api, axe, media):
    backlog, _, _ = board
    task = make_task(backlog, "Write the report")
    before = stored(media)
    page = open_board(owner, workflow)
    page.emulate_media(color_scheme="dark")
    page.set_viewport_size({"width": 390, "height": 844})
    card(page, task).click()
    expect(dialog(page)).to_be_visible()
    attachments = dialog(page).get_by_role("region", name="Attachments")
    expect(attachments.get_by_text("No files attached.")).to_be_visible()

    # A web page is refused, and the field says why.
    field(page, "Attach a file").set_input_files(
        files=[{"name": "page.html", "mimeType": "text/html", "buffer": b"<script>alert(1)</script>"}]
    )
    button(page, "Upload").click()
    expect(dialog(page).locator('[data-error-for="file"]')).to_contain_text("cannot be attached")
    expect(field(page, "Attach a file")).to_have_attribute("aria-invalid", "true")

    # A text file is attached: listed with its size and uploader, counted on the card.
    field(page, "Attach a file").set_input_files(
        files=[{"name": "notes.txt", "mimeType": "text/plain", "buffer": b"the quarter's numbers"}]
    )
    button(page, "Upload").click()
    expect(attachments.get_by_role("status")).to_have_text("Attached notes.txt.")
    link = attachments.get_by_role("link", name="notes.txt")
    expect(link).to_be_visible()
    expect(attachments.get_by_role("listitem")).to_contain_text(f"21 bytes · {owner.username}")
    expect(card(page, task).locator('[data-role="attachments"]')).to_have_text("1 attachment")
    assert task_now(api, task)["attachment_count"] == 1
    listed = api.get(f"/api/v1/tasks/{task.pk}/attachments/").json()["results"]
    assert [a["name"] for a in listed] == ["notes.txt"]
    assert len(stored(media)) == len(before) + 1
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    axe(page, "the task dialog with an attachment, dark, 390 px")

    # The download: the file, as an attachment under its name, never sniffed.
    with page.expect_download() as started:
        link.click()
    download = started.value
    assert download.suggested_filename == "notes.txt"
    assert Path(download.path()).read_bytes() == b"the quarter's numbers"
    response = page.request.get(download.url)
    assert response.headers["content-disposition"] == 'attachment; filename="notes.txt"'
    assert response.headers["x-content-type-options"] == "nosniff"

    # Delete asks first, then the file is gone from the list, the card and the storage.
    button(page, "Delete notes.txt").click()
    button(page, "Keep it").click()
    expect(link).to_be_visible()
    button(page, "Delete notes.txt").click()
    button(page, "Delete file").click()
    expect(attachments.get_by_role("status")).to_have_text("Deleted notes.txt.")
    expect(attachments.get_by_text("No files attached.")).to_be_visible()
    expect(card(page, task).locator('[data-role="attachments"]')).to_be_hidden()
    assert task_now(api, task)["attachment_count"] == 0
    assert api.get(f"/api/v1/tasks/{task.pk}/attachments/").json()["results"] == []
    assert stored(media) == before
