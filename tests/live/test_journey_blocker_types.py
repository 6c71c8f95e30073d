"""Browser journey of an owner giving blocks a type, in headless Chromium against a real
uvicorn server: the workspace's blocker types made, renamed and refused a taken name in the
settings, then a card blocked with a type from its dialog ("Blocked (Supplier): ..."),
whose list of types follows another owner's changes live, and blocked again without one.
Outcomes are checked through the server's API; axe-core checks every page
(tests/live/conftest.py `Journey`)."""

import pytest
from playwright.sync_api import expect

from tests.live.pages import button, card, dialog, field

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_owner_keeps_blocker_types_and_blocks_a_card_with_one(journey):
    world = journey.walk(blocker_types_are_kept_in_the_settings)
    journey.walk(a_card_is_blocked_with_a_type, **world)


def types_of(api, workflow) -> dict:
    """{name: id} of the workspace's blocker types."""
    made = api.get(f"/api/v1/blocker-types/?workspace={workflow.workspace_id}").json()["results"]
    return {blocker_type["name"]: blocker_type["id"] for blocker_type in made}


def blocker_types_are_kept_in_the_settings(open_page, owner, workflow, board, api):
    page = open_page(owner, f"/workflows/{workflow.pk}/settings/#blocker-types")
    section = page.get_by_role("region", name=f"Blocker types of {workflow.workspace.name}")

    def reloaded(name):
        """A write reloads the page: its rows shown, and its forms' script running again."""
        expect(section.get_by_role("button", name=f"Delete blocker type {name}")).to_be_visible()
        page.wait_for_load_state()

    for name in ("Vendor", "Review"):
        section.get_by_label("New blocker type").fill(name)
        section.get_by_role("button", name="Add blocker type").click()
        reloaded(name)
    section.get_by_role("textbox", name="Name", exact=True).first.fill("Environment")  # by name: Review first
    section.get_by_role("button", name="Rename blocker type Review").click()
    reloaded("Environment")
    # A name already taken, case aside, is refused in words next to the form.
    section.get_by_label("New blocker type").fill("vendor")
    section.get_by_role("button", name="Add blocker type").click()
    expect(section.get_by_role("alert").filter(has_text="already exists")).to_be_visible()
    assert sorted(types_of(api, workflow)) == ["Environment", "Vendor"]


def a_card_is_blocked_with_a_type(open_page, owner, workflow, board, make_task, api):
    backlog, _, _ = board
    kinds = types_of(api, workflow)
    task = make_task(backlog, "Ship the release")
    page = open_page(owner, f"/workflows/{workflow.pk}/")
    expect(page.locator('[data-role="live"]')).to_have_attribute("data-state", "live")
    card(page, task).click()
    expect(dialog(page)).to_be_visible()
    expect(field(page, "Type").locator("option")).to_have_text(["No type", "Environment", "Vendor"])

    # Another owner adds a type and renames one while the dialog is open: the list follows
    # live, and the type this person chose meanwhile stays chosen.
    field(page, "Type").select_option(label="Environment")
    customer = {"workspace_id": str(workflow.workspace_id), "name": "Customer"}
    assert api.post("/api/v1/blocker-types/", json=customer).status_code == 201
    renamed = api.patch(f"/api/v1/blocker-types/{kinds['Vendor']}/", json={"name": "Supplier"})
    assert renamed.status_code == 200
    expect(field(page, "Type").locator("option")).to_have_text(["No type", "Customer", "Environment", "Supplier"])
    expect(field(page, "Type")).to_have_value(kinds["Environment"])

    field(page, "Reason").fill("waiting on the supplier")
    field(page, "Type").select_option(label="Supplier")
    button(page, "Block").click()
    note = dialog(page).locator('[data-role="blocked-note"]')
    expect(note).to_have_text("Blocked (Supplier): waiting on the supplier")
    blocked = api.get(f"/api/v1/tasks/{task.pk}/").json()
    assert (blocked["blocked_reason"], blocked["blocked_type_id"]) == ("waiting on the supplier", kinds["Vendor"])

    field(page, "Type").select_option(label="No type")
    button(page, "Block").click()
    expect(note).to_have_text("Blocked: waiting on the supplier")
    assert api.get(f"/api/v1/tasks/{task.pk}/").json()["blocked_type_id"] is None
