"""The limits in the settings and members pages, in headless Chromium, driven by role and
label (product.md §7 "Settings", §7b): step groups created, edited and deleted with the
server's field errors shown, the board's expedite limit, and members' personal WIP limits.
Outcomes are read back through the running server's API."""

import re

import pytest
from playwright.sync_api import expect

from tests.factories import MembershipFactory, UserFactory
from tests.live.test_settings_events import open_settings
from workflows.models import Role

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def groups_of(api, workflow) -> list[dict]:
    response = api.get(f"/api/v1/step-groups/?workflow={workflow.pk}")
    assert response.status_code == 200
    return response.json()["results"]


def saved(page, button):
    """Click a button whose form reloads the page when the server takes it."""
    with page.expect_navigation():
        button.click()
    page.wait_for_load_state()


def test_an_owner_creates_edits_and_deletes_a_group_and_sees_the_servers_field_errors(
    open_board, axe, live_api, owner, workflow, board
):
    backlog, doing, done = board
    page = open_settings(open_board, owner, workflow)
    new = page.get_by_role("form", name="New group")

    new.get_by_label("Name").fill("Development")
    new.get_by_label("WIP limit").fill("0")
    new.get_by_label("In Progress").check()
    new.get_by_role("button", name="Create group").click()
    expect(new.locator('[data-error-for="wip_limit"]')).not_to_be_empty()
    expect(new.locator('[data-error-for="step_ids"]')).not_to_be_empty()
    expect(new.get_by_label("WIP limit")).to_have_attribute("aria-invalid", "true")
    expect(new.get_by_label("In Progress")).to_have_attribute("aria-invalid", "true")
    expect(new.locator('[data-error-for="name"]')).to_be_empty()
    assert groups_of(live_api, workflow) == []
    axe(page, "the settings with a group's field errors")

    new.get_by_label("WIP limit").fill("3")
    new.get_by_label("Done").check()
    saved(page, new.get_by_role("button", name="Create group"))
    (group,) = groups_of(live_api, workflow)
    assert (group["name"], group["wip_limit"], group["step_ids"]) == ("Development", 3, [str(doing.pk), str(done.pk)])

    # Another group may not take a step of this one: the server says which.
    new = page.get_by_role("form", name="New group")
    expect(new.get_by_text("(in Development)")).to_have_count(2)
    new.get_by_label("Name").fill("Start")
    new.get_by_label("WIP limit").fill("5")
    new.get_by_label("Backlog").check()
    new.get_by_label("In Progress").check()
    new.get_by_role("button", name="Create group").click()
    expect(new.locator('[data-error-for="step_ids"]')).to_have_text(
        'Step "In Progress" is already in group "Development".'
    )
    assert len(groups_of(live_api, workflow)) == 1

    form = page.get_by_role("form", name="Group Development")
    form.get_by_label("Name").fill("Delivery")
    form.get_by_label("WIP limit").fill("4")
    form.get_by_label("Done").uncheck()
    form.get_by_label("Backlog").check()
    saved(page, form.get_by_role("button", name="Save group"))
    (group,) = groups_of(live_api, workflow)
    assert (group["name"], group["wip_limit"], group["step_ids"]) == ("Delivery", 4, [str(backlog.pk), str(doing.pk)])
    axe(page, "the settings with a group")

    form = page.get_by_role("form", name="Group Delivery")
    page.once("dialog", lambda dialog: dialog.dismiss())
    form.get_by_role("button", name="Delete group").click()
    assert len(groups_of(live_api, workflow)) == 1
    page.once("dialog", lambda dialog: dialog.accept())
    saved(page, form.get_by_role("button", name="Delete group"))
    assert groups_of(live_api, workflow) == []
    expect(page.get_by_role("form", name=re.compile("^Group "))).to_have_count(0)


def test_an_owner_sets_the_expedite_limit_with_its_errors_shown(open_board, live_api, owner, workflow, board):
    page = open_settings(open_board, owner, workflow)
    limit = page.get_by_label("Expedite limit")
    expect(limit).to_have_value("1")
    save = page.get_by_role("button", name="Save expedite limit")

    limit.fill("-1")
    save.click()
    expect(page.locator('[data-error-for="expedite_limit"]')).not_to_be_empty()
    expect(limit).to_have_attribute("aria-invalid", "true")
    assert live_api.get(f"/api/v1/workflows/{workflow.pk}/").json()["expedite_limit"] == 1

    limit.fill("2")
    save.click()
    expect(page.locator('[data-role="expedite-form"]').get_by_role("status")).to_have_text("Saved.")
    expect(limit).not_to_have_attribute("aria-invalid", "true")
    assert live_api.get(f"/api/v1/workflows/{workflow.pk}/").json()["expedite_limit"] == 2


def test_owners_set_members_wip_limits_and_members_read_them(open_page, axe, live_api, owner, workflow):
    alice = UserFactory(username="alice")
    MembershipFactory(workspace=workflow.workspace, user=alice, role=Role.MEMBER)
    members_url = f"/workspaces/{workflow.workspace_id}/members/"
    page = open_page(owner, members_url)
    field = page.get_by_label("WIP limit of alice", exact=True)
    expect(field).to_have_value("0")

    field.fill("-1")
    saved(page, page.get_by_role("button", name="Save the WIP limit of alice"))
    expect(page.get_by_role("alert")).to_contain_text("WIP limit:")
    field.fill("2")
    saved(page, page.get_by_role("button", name="Save the WIP limit of alice"))
    expect(page.get_by_role("status").filter(has_text="The WIP limit was changed.")).to_be_visible()
    expect(page.get_by_label("WIP limit of alice", exact=True)).to_have_value("2")
    members = {m["username"]: m for m in live_api.get(f"/api/v1/workspaces/{workflow.workspace_id}/members/").json()}
    assert (members["alice"]["wip_limit"], members["olivia"]["wip_limit"]) == (2, 0)
    axe(page, "the members page with WIP limits")

    # A member reads the limits; only owners have the field.
    as_alice = open_page(alice, members_url)
    expect(as_alice.get_by_role("row", name=re.compile("^alice")).get_by_role("cell").nth(1)).to_have_text(
        "0 of 2 in progress"
    )
    expect(as_alice.get_by_label("WIP limit of alice", exact=True)).to_have_count(0)
    axe(as_alice, "the members page as a member")
