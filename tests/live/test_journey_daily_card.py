"""A team's day on one board, in headless Chromium against a real server: a board with an
expedite lane and two team lanes, whose card carries everything at once (labels, a due date,
a checklist, a comment with a mention, a file, a blocker), read on the card, in its dialog,
in the mentioned person's inbox and in the board's activity feed, at desktop width and at
390 px. axe-core checks every page as the chapter leaves it; `KANDEV_SHOTS=<dir>` keeps a
screenshot of each (the README's pictures)."""

import datetime
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from playwright.sync_api import expect

from boards.admission import task_create
from boards.attachments import attachment_add
from boards.checklists import checklist_add, checklist_update
from boards.comments import comment_create
from boards.labels import label_create
from boards.links import link_create
from boards.services import task_update
from boards.structure import cells_set, lane_create
from tests.factories import MembershipFactory, UserFactory
from tests.live.pages import card_titled, dialog, shot
from tests.servers import Server, serving_test_database
from workflows.models import Role

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WIDTHS = {"desktop": (1400, 900), "390": (390, 844)}


@pytest.fixture(scope="module")
def media(tmp_path_factory):
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
def board_server(django_db_setup, media):
    """The journeys' server, keeping attachments in `media`."""
    with Server(serving_test_database(DEBUG="1", MEDIA_ROOT=str(media))) as server:
        yield server


def test_a_team_reads_its_day_on_the_card_the_dialog_the_inbox_and_the_feed(journey, media, settings):
    journey.walk(everything_a_card_carries_reads_at_every_width, media=media, settings=settings)


def everything_a_card_carries_reads_at_every_width(open_page, owner, workflow, board, settings, media):
    settings.MEDIA_ROOT = str(media)
    backlog, doing, _ = board
    ada = UserFactory(username="ada", first_name="Ada", last_name="Lovelace")
    MembershipFactory(workspace=workflow.workspace, user=ada, role=Role.MEMBER)
    lane_create(workflow=workflow, actor=owner, name="Expedite", is_expedite=True)
    platform = workflow.lanes.get(is_expedite=False)
    product = lane_create(workflow=workflow, actor=owner, name="Product", wip_limit=3)
    cells_set(lane=product, actor=owner, cells=[{"step_id": doing.pk, "wip_limit": 1}])

    spec = task_create(workflow=workflow, step=backlog, actor=owner, title="Write the spec", lane_id=product.pk).task
    task = task_create(workflow=workflow, step=backlog, actor=owner, title="Ship the export", lane_id=product.pk).task
    task_create(workflow=workflow, step=backlog, actor=owner, title="Tune the queries", lane_id=platform.pk)
    bug = label_create(workspace_id=workflow.workspace_id, actor=owner, name="Bug", color="red")
    label_create(workspace_id=workflow.workspace_id, actor=owner, name="Docs", color="blue")
    due = (timezone.now() - datetime.timedelta(days=2)).date().isoformat()
    task_update(task=task, actor=owner, label_ids=[bug.pk], due_at=_day(due), due_all_day=True)
    first = checklist_add(task=task, actor=owner, text="Write the mapping")
    checklist_add(task=task, actor=owner, text="Test a round trip")
    checklist_update(item=first, actor=owner, done=True)
    comment_create(task=task, author=owner, body="Can you **review** this, @ada?")
    attachment_add(task=task, actor=owner, upload=SimpleUploadedFile("mapping.txt", b"title -> title\n", "text/plain"))
    link_create(blocker=spec, dependent=task, actor=owner, field="blocked_by_task_id")

    for name, (width, height) in WIDTHS.items():
        page = open_page(ada, f"/workflows/{workflow.pk}/", width=width, height=height)
        page.wait_for_selector('[data-role="live"][data-state="live"]')
        card = card_titled(page, "Ship the export")
        for words in ("Bug", "overdue by 2 days", "1/2", "1 comment", "1 attachment", "Blocked by Write the spec"):
            expect(card).to_contain_text(words)
        expect(page.get_by_role("button", name="Product", exact=False).first).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= max(width, page.viewport_size["width"])
        shot(page, f"board-{name}")

        card.click()
        detail = dialog(page)
        expect(detail.get_by_text("Can you")).to_be_visible()
        expect(detail.get_by_role("link", name="mapping.txt")).to_be_visible()
        expect(detail.get_by_role("checkbox", name="Test a round trip")).not_to_be_checked()
        shot(page, f"card-detail-{name}")
        page.keyboard.press("Escape")
        expect(detail).to_be_hidden()
        expect(page).to_have_url(f"{page.url.split('/workflows/')[0]}/workflows/{workflow.pk}/")

        page.goto(page.url.split("/workflows/")[0] + "/inbox/")
        expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
        expect(page.get_by_text("Ship the export").first).to_be_visible()
        shot(page, f"inbox-{name}")

        page.goto(page.url.split("/inbox/")[0] + f"/workflows/{workflow.pk}/activity/")
        expect(page.get_by_text("Can you").first).to_be_visible()
        shot(page, f"activity-{name}")
    assert Path(media).exists()


def _day(iso: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(iso).replace(tzinfo=datetime.UTC)
