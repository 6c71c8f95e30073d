"""Browser journeys of the owner's and the newcomer's pages, in headless Chromium against a
real uvicorn server: signing in, workspaces and boards, the step settings, the limits, the
archive, invitations, the flow page. Each journey walks chapters (tests/live/conftest.py
`Journey`), drives the pages by role and label as a person would, checks the outcomes
through the running server's API, and runs axe-core on the pages it visits."""

import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from playwright.sync_api import expect

from boards.models import Priority
from boards.structure import step_update
from tests.factories import MembershipFactory, UserFactory
from tests.flow.factories import TaskEventFactory
from tests.live.pages import (
    agents_header,
    boards_of,
    event_list,
    events_of,
    groups_of,
    listed,
    off_loop,
    open_settings,
    saved,
    shot,
    step_as_api,
    step_form,
    workspace_panel,
)
from workflows.models import ConfigChange, Role, WorkflowStep

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BAD_BOARD = """\
type: kandev_workflow
version: 1
workflows:
  - name: Broken
    steps:
      - name: Doing
        position: 0
        wip_limit: -1
"""

GOOD_BOARD = """\
type: kandev_workflow
version: 1
workflows:
  - name: Imported
    steps:
      - name: Todo
        position: 0
        is_start_step: true
      - name: Doing
        position: 1
        wip_limit: 2
"""

# The flow page: the page's time is Playwright's clock, moved by the test. Its refreshes are
# counted: each starts with one fetch of the board.
COUNT_REFRESHES = """
window.__refreshes = 0;
const fetchOriginal = window.fetch;
window.fetch = (url, ...rest) => {
  if (String(url).includes("/board/?per_step=1")) window.__refreshes += 1;
  return fetchOriginal(url, ...rest);
};
"""

CHANGES = 20

SECONDS_BETWEEN = 1

REFRESH_SECONDS = 5


def test_a_person_signs_in_goes_through_every_page_and_signs_out(journey):
    """A person signs in with a password (a wrong one refused), finds the board, signs out; then goes
    through every page (login, home, board, settings, flow, members, invite) with axe on each."""
    world = journey.walk(login_form_leads_to_the_boards_and_logout)
    journey.walk(every_page_passes_axe_as_a_person_goes_through_them, **world)


def test_an_owner_sets_up_workspaces_and_boards(journey):
    """A member may rename a board but not delete it; the owner renames, exports and deletes it, then makes
    a workspace, a board from a template, and imports one (a broken file refused whole)."""
    world = journey.walk(members_rename_but_only_owners_see_delete)
    journey.walk(owner_renames_exports_and_deletes_a_board, **world)
    journey.walk(owner_creates_a_workspace_and_a_board_from_a_template_then_imports)
    journey.walk(an_owner_restores_a_board_with_its_cards_and_brings_work_from_trello_and_csv)
    journey.walk(an_empty_board_offers_to_add_its_first_column)


def test_an_owner_shapes_the_steps(journey):
    """The step settings: field errors and saves, new, reordered and deleted steps; events built from
    lists, by mouse and by keyboard on a narrow screen; each step's kind."""
    journey.walk(step_settings_show_field_errors_and_save)
    journey.walk(an_owner_builds_step_events_from_lists)
    journey.walk(the_editor_works_by_keyboard_on_a_narrow_screen)
    journey.walk(an_owner_sets_a_steps_kind_and_a_new_steps_kind)


def test_an_owner_sets_the_limits(journey):
    """Step groups with the server's field errors, the expedite limit, members' personal limits (read by a
    member), the agent session limits; a member sees the workspace's but only owners change it."""
    journey.walk(an_owner_creates_edits_and_deletes_a_group_and_sees_the_servers_field_errors)
    journey.walk(an_owner_sets_the_expedite_limit_with_its_errors_shown)
    journey.walk(owners_set_members_wip_limits_and_members_read_them)
    journey.walk(the_settings_edit_the_session_limits_and_show_a_refused_value)
    journey.walk(a_member_sees_the_workspace_limit_but_only_owners_change_it)


def test_archived_work_is_searched_and_restored(journey):
    """The archive page: a search finds an archived task and Restore brings it back; a restore into a full
    step shows the conflict."""
    journey.walk(archived_task_is_found_by_search_and_restored)
    journey.walk(a_refused_restore_shows_the_conflict)


def test_people_join_by_invitation(journey):
    """An owner copies an invite link; a newcomer signs up through it and watches the board live. A person
    invited by name accepts on their home page."""
    journey.walk(a_new_person_joins_through_an_invite_link_and_watches_the_board_live)
    journey.walk(a_person_invited_by_name_accepts_on_their_home_page)


def test_the_flow_page_follows_a_burst_of_changes(journey):
    """The flow page refetches its figures at most once every five seconds however fast the board changes,
    and answers "when will it be done" on a history whose answer is exact."""
    journey.walk(a_burst_of_board_changes_refreshes_the_figures_a_bounded_number_of_times)
    journey.walk(the_flow_page_answers_when_it_will_be_done)


# --- chapters ---


def login_form_leads_to_the_boards_and_logout(chromium, board_server, owner, workflow, board):
    # The server runs the production hashers, not the fast one the tests configure.
    hasher = PBKDF2PasswordHasher()
    owner.password = hasher.encode("a real passphrase", hasher.salt())
    owner.save(update_fields=["password"])
    context = chromium.new_context()
    page = context.new_page()
    page.goto(f"{board_server.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.fill("#id_username", owner.username)
    page.fill("#id_password", "wrong")
    page.click("button[type=submit]")
    expect(page.locator(".form-error[role=alert]")).to_be_visible()
    page.fill("#id_password", "a real passphrase")
    page.click("button[type=submit]")
    expect(page.locator(".workspace h2")).to_contain_text(workflow.workspace.name)
    page.click(f"text={workflow.name}")
    expect(page).to_have_url(f"{board_server.url}/workflows/{workflow.pk}/")
    expect(page.locator(".column h2")).to_have_text(["Backlog", "In Progress", "Done"])
    page.click("text=Log out")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    context.close()


def every_page_passes_axe_as_a_person_goes_through_them(chromium, board_server, axe, owner, workflow, board, make_task):
    backlog, doing, done = board
    make_task(doing, "Fix the login")
    make_task(doing, "Fix the logout")
    for priority in Priority:  # every priority's colours (waiting: In Progress is full)
        make_task(backlog, f"A {priority.label} one", priority=priority)
    off_loop(step_update, step=doing, actor=owner, wip_limit=1)  # an over-limit column
    queued = WorkflowStep.objects.create(workflow=workflow, name="Review", position=3, wip_limit=1, on_full="queue")
    make_task(queued, "Reviewed first")
    make_task(queued, "Waits in line")
    hasher = PBKDF2PasswordHasher()
    owner.password = hasher.encode("a real passphrase", hasher.salt())
    owner.save(update_fields=["password"])
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(f"{board_server.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    axe(page, "the login page")
    page.get_by_label("Username").fill(owner.username)
    page.get_by_label("Password").fill("a real passphrase")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name=workflow.workspace.name)).to_be_visible()
    axe(page, "the home page")

    page.get_by_role("link", name=workflow.name).click()
    page.wait_for_selector('[data-role="live"][data-state="live"]')
    axe(page, "the board")

    page.get_by_role("link", name="Step settings").click()
    expect(page.get_by_role("heading", name=f"Steps of {workflow.name}")).to_be_visible()
    page.wait_for_load_state()
    axe(page, "the step settings")

    page.get_by_role("link", name=workflow.name).click()
    page.get_by_role("link", name="Flow").click()
    page.wait_for_selector('[data-role="live"][data-state="live"]')
    axe(page, "the flow page")

    page.goto(f"{board_server.url}/workflows/{workflow.pk}/")
    page.get_by_role("link", name="Members").click()
    expect(page.get_by_role("heading", name=f"Members of {workflow.workspace.name}")).to_be_visible()
    page.get_by_role("button", name="Invite").click()
    link = page.get_by_label("New invite link (shown once; single use)")
    expect(link).to_be_visible()
    axe(page, "the members page")

    newcomer = chromium.new_context(viewport={"width": 390, "height": 844})
    invited = newcomer.new_page()
    invited.goto(link.input_value())
    expect(invited.get_by_role("button", name="Sign up and join")).to_be_visible()
    axe(invited, "the invite page")
    newcomer.close()
    context.close()


def members_rename_but_only_owners_see_delete(open_page, workflow, board):
    member = UserFactory(username="mia")
    MembershipFactory(workspace=workflow.workspace, user=member, role=Role.MEMBER)
    page = open_page(member, "/")
    item = page.get_by_role("listitem", name="Delivery")
    expect(item.get_by_role("button", name="Rename")).to_be_visible()
    expect(item.get_by_role("button", name="Delete")).to_have_count(0)


def owner_renames_exports_and_deletes_a_board(open_page, api, owner, workflow, board):
    page = open_page(owner, "/")
    item = page.get_by_role("listitem", name="Delivery")
    item.get_by_label("New name of Delivery").fill("Delivery 2025")
    item.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("link", name="Delivery 2025")).to_be_visible()
    assert api.get(f"/api/v1/workflows/{workflow.pk}/").json()["name"] == "Delivery 2025"

    item = page.get_by_role("listitem", name="Delivery 2025")
    with page.expect_download() as download:
        item.get_by_role("link", name="Export").click()
    assert download.value.suggested_filename == "delivery-2025.yaml"
    assert "name: Delivery 2025" in open(download.value.path()).read()

    page.once("dialog", lambda dialog: dialog.dismiss())  # a second thought: nothing happens
    item.get_by_role("button", name="Delete").click()
    expect(item).to_be_visible()
    assert api.get(f"/api/v1/workflows/{workflow.pk}/").status_code == 200
    page.once("dialog", lambda dialog: dialog.accept())
    item.get_by_role("button", name="Delete").click()
    expect(page.get_by_text("No boards yet.")).to_be_visible()
    assert api.get(f"/api/v1/workflows/{workflow.pk}/").status_code == 404
    assert page.errors == []


def owner_creates_a_workspace_and_a_board_from_a_template_then_imports(open_page, api, owner, tmp_path):
    page = open_page(owner, "/")
    page.get_by_role("button", name="New workspace").click()
    expect(page.get_by_role("alert").first).to_contain_text("Workspace name:")  # blank: refused
    page.get_by_label("Workspace name").fill("Platform team")
    page.get_by_role("button", name="New workspace").click()
    panel = workspace_panel(page, "Platform team")
    expect(panel).to_be_visible()
    [workspace] = [w for w in listed(api, "/api/v1/workspaces/") if w["name"] == "Platform team"]

    panel.get_by_label("Board name").fill("Delivery")
    template = panel.get_by_label("Template")
    names = [api_t["name"] for api_t in api.get("/api/v1/workflow-templates/").json()]
    assert {"Kanban", "PR Review"} <= set(names)
    expect(template.locator("option")).to_have_text(["Empty board (no steps)", *names])
    description = panel.locator(".template-description")
    expect(description).to_have_text("No steps yet: add the first step on the board's page.")
    template.select_option(label="Agent pipeline")
    expect(description).to_contain_text("starts an agent) → Review")
    template.select_option(label="Kanban")
    expect(description).to_contain_text("In Progress (limit 3, pulls from Ready)")
    expect(template).to_have_accessible_description(re.compile("Backlog holds options"))
    panel.get_by_role("button", name="New board").click()
    expect(panel.get_by_role("link", name="Delivery")).to_be_visible()
    delivery = boards_of(api, workspace["id"])["Delivery"]
    steps = api.get(f"/api/v1/workflows/{delivery['id']}/board/").json()["steps"]
    assert [s["name"] for s in steps] == ["Backlog", "Ready", "In Progress", "Review", "Done"]

    bad, good = tmp_path / "broken.yaml", tmp_path / "imported.yaml"
    bad.write_text(BAD_BOARD)
    good.write_text(GOOD_BOARD)
    panel.get_by_label("File", exact=True).set_input_files(bad)
    panel.get_by_role("button", name="Import").click()
    expect(panel.get_by_role("alert").last).to_contain_text("workflows[0].steps[0].wip_limit:")
    assert "Broken" not in boards_of(api, workspace["id"])  # all or nothing

    panel.get_by_label("File", exact=True).set_input_files(good)
    panel.get_by_role("button", name="Import").click()
    expect(panel.get_by_role("link", name="Imported")).to_be_visible()
    imported = boards_of(api, workspace["id"])["Imported"]
    steps = api.get(f"/api/v1/workflows/{imported['id']}/board/").json()["steps"]
    assert [(s["name"], s["wip_limit"]) for s in steps] == [("Todo", 0), ("Doing", 2)]
    assert page.errors == []


def an_owner_restores_a_board_with_its_cards_and_brings_work_from_trello_and_csv(
    open_page, api, owner, workflow, board, make_task, tmp_path
):
    backlog, doing, _ = board
    make_task(backlog, "Plan the launch")
    make_task(doing, "Build the page")
    page = open_page(owner, "/")
    panel = workspace_panel(page, workflow.workspace.name)
    with page.expect_download() as download:
        panel.get_by_role("listitem", name="Delivery").get_by_role("link", name="Export").click()
    backup = tmp_path / "delivery.yaml"
    backup.write_text(open(download.value.path()).read().replace("- name: Delivery\n", "- name: Restored\n"))
    # The whole workspace in one file, every board with its cards.
    with page.expect_download() as download:
        panel.get_by_role("link", name=f"Export workspace {workflow.workspace.name}").click()
    assert download.value.suggested_filename == f"{workflow.workspace.slug}.yaml"
    whole = open(download.value.path()).read()
    assert "- name: Delivery\n" in whole and "title: Plan the launch" in whole

    def import_file(kind, path, button="Import"):
        panel.get_by_label("Import from").select_option(label=kind)
        panel.get_by_label("File", exact=True).set_input_files(path)
        panel.get_by_role("button", name=button, exact=True).click()

    import_file("kandev export (YAML or JSON)", backup, "Preview")
    expect(panel.get_by_role("status")).to_contain_text("Preview, nothing imported yet: would create 2 tasks")
    assert "Restored" not in boards_of(api, workflow.workspace_id)
    import_file("kandev export (YAML or JSON)", backup)
    panel.get_by_role("link", name="Restored").click()
    expect(page.get_by_text("Plan the launch")).to_be_visible()
    expect(page.get_by_text("Build the page")).to_be_visible()

    page.goto(page.url.split("/workflows/")[0] + "/")
    panel = workspace_panel(page, workflow.workspace.name)
    trello = Path(__file__).parents[1] / "boards" / "fixtures" / "trello_board.json"
    import_file("Trello (the board's JSON export)", trello, "Preview")
    status = panel.get_by_role("status")
    expect(status).to_contain_text("would create 4 tasks, 0 queued, 2 archived, 0 refused")
    expect(status).to_contain_text("Not imported (no place in kandev yet): 1 attachments, 1 members")
    assert "Website" not in boards_of(api, workflow.workspace_id)
    import_file("Trello (the board's JSON export)", trello)
    expect(panel.get_by_role("link", name="Website")).to_be_visible()

    bad, good = tmp_path / "bad.csv", tmp_path / "tasks.csv"
    bad.write_text("title,step,priority\nWrite the post,Doing,urgent\n")
    good.write_text("title,step,priority\nWrite the post,Doing,high\nPlan the talk,Backlog,\n")
    panel = workspace_panel(page, workflow.workspace.name)
    import_file("CSV (a header with title, step, priority…)", bad, "Preview")
    expect(panel.get_by_role("alert").last).to_contain_text("rows[2].priority: Must be one of critical")
    import_file("CSV (a header with title, step, priority…)", good, "Preview")
    expect(panel.get_by_role("status")).to_contain_text("would create 2 tasks")
    import_file("CSV (a header with title, step, priority…)", good)
    expect(panel.get_by_role("link", name="Imported tasks")).to_be_visible()
    csv_board = boards_of(api, workflow.workspace_id)["Imported tasks"]
    steps = api.get(f"/api/v1/workflows/{csv_board['id']}/board/").json()["steps"]
    assert [(s["name"], [t["title"] for t in s["tasks"]]) for s in steps] == [
        ("Doing", ["Write the post"]),
        ("Backlog", ["Plan the talk"]),
    ]

    # A CSV file's rows may also join a board that exists (the other imports make a new one).
    panel = workspace_panel(page, workflow.workspace.name)
    panel.get_by_label("Import from").select_option(label="Trello (the board's JSON export)")
    expect(panel.get_by_label("Into")).to_be_disabled()
    more = tmp_path / "more.csv"
    more.write_text("title,step\nFix the footer,Backlog\n")
    panel.get_by_label("Import from").select_option(label="CSV (a header with title, step, priority…)")
    panel.get_by_label("Into").select_option(label="Delivery")
    boards_before = set(boards_of(api, workflow.workspace_id))
    import_file("CSV (a header with title, step, priority…)", more)
    expect(panel.get_by_label("Into")).to_be_disabled()  # the page reloaded: the form is new
    delivery = api.get(f"/api/v1/workflows/{workflow.pk}/board/").json()["steps"]
    assert "Fix the footer" in [t["title"] for t in delivery[0]["tasks"]]
    assert set(boards_of(api, workflow.workspace_id)) == boards_before


def an_empty_board_offers_to_add_its_first_column(open_board, axe, owner, workflow):
    assert not workflow.steps.exists()
    page = open_board(owner, workflow)
    empty = page.get_by_role("region", name="This board has no steps yet")
    expect(empty).to_be_visible()
    axe(page, "an empty board")
    empty.get_by_label("Column name").fill("To do")
    empty.get_by_role("button", name="Add a column").click()
    expect(page.locator(".column")).to_have_count(1)
    expect(page.get_by_role("region", name="This board has no steps yet")).to_have_count(0)
    assert list(workflow.steps.values_list("name", "is_start_step")) == [("To do", True)]
    assert page.errors == []


def step_settings_show_field_errors_and_save(open_board, owner, workflow, board):
    backlog, doing, done = board
    page = open_board(owner, workflow)
    page.click("text=Step settings")
    # Each page is used once its load event has run its (deferred) module script; a form sent
    # before that would be submitted natively.
    page.wait_for_url(f"**/workflows/{workflow.pk}/settings/")
    doing_form = page.locator(f'form[data-step-id="{doing.pk}"]')

    doing_form.locator("input[name=wip_limit]").fill("-1")
    doing_form.locator("button[type=submit]").click()
    wip_error = doing_form.locator('[data-error-for="wip_limit"]')
    expect(wip_error).to_have_text("Use 0 or more.")
    expect(doing_form.locator("input[name=wip_limit]")).to_have_attribute("aria-invalid", "true")

    backlog_form = page.locator(f'form[data-step-id="{backlog.pk}"]')
    backlog_form.locator("select[name=pull_from_step_id]").select_option(label="In Progress")
    backlog_form.locator("button[type=submit]").click()
    expect(backlog_form.locator('[data-error-for="pull_from_step_id"]')).not_to_be_empty()
    assert WorkflowStep.objects.get(pk=doing.pk).wip_limit == 2
    assert WorkflowStep.objects.get(pk=backlog.pk).pull_from_step_id is None

    backlog_form.locator("select[name=pull_from_step_id]").select_option(label="No feeder step")
    backlog_form.locator("input[name=is_start_step]").uncheck()
    backlog_form.locator("button[type=submit]").click()
    expect(backlog_form.locator('[data-error-for="is_start_step"]')).to_contain_text("Choose another start step")
    assert WorkflowStep.objects.get(pk=backlog.pk).is_start_step

    doing_form.locator("input[name=wip_limit]").fill("3")
    doing_form.locator("input[name=name]").fill("Doing")
    doing_form.locator("select[name=pull_from_step_id]").select_option(label="No feeder step")
    doing_form.locator("select[name=on_full]").select_option("queue")
    doing_form.locator("button[type=submit]").click()
    expect(page.locator(f'form[data-step-id="{doing.pk}"] h2')).to_have_text("2. Doing")
    page.wait_for_load_state()
    # The page reloaded with the change, says so, and the keyboard is where it was
    expect(page.locator("#settings-saved")).to_have_text("Step saved.")
    expect(page.locator(f'form[data-step-id="{doing.pk}"] button[type=submit]')).to_be_focused()
    saved = WorkflowStep.objects.get(pk=doing.pk)
    assert (saved.name, saved.wip_limit, saved.on_full) == ("Doing", 3, "queue")
    assert saved.pull_from_step_id is None

    new_form = page.locator('form[data-role="new-step-form"]')
    new_form.locator("input[name=name]").fill("Review")
    new_form.locator("input[name=wip_limit]").fill("1")
    new_form.locator("button[type=submit]").click()
    expect(page.locator('form[data-role="step-form"] h2')).to_have_text(
        ["1. Backlog", "2. Doing", "3. Done", "4. Review"]
    )
    page.wait_for_load_state()
    review_form = page.locator('form[data-role="step-form"]').nth(3)
    review_form.locator('button[data-action="up"]').click()
    expect(page.locator('form[data-role="step-form"] h2')).to_have_text(
        ["1. Backlog", "2. Doing", "3. Review", "4. Done"]
    )
    page.wait_for_load_state()
    expect(page.locator("#settings-saved")).to_have_text("Step moved.")
    expect(page.locator('form[data-role="step-form"]').nth(2).locator('button[data-action="up"]')).to_be_focused()

    # The focus goes back only once the lane forms are in; a person who moved it while they
    # loaded keeps it where they put it. The lanes' answer is held until the focus has moved.
    held = []
    lanes_url = f"**/api/v1/lanes/?workflow={workflow.pk}*"
    page.route(lanes_url, lambda route: held.append(route))
    with page.expect_request(lambda request: "/api/v1/lanes/?workflow=" in request.url):
        page.locator('form[data-role="step-form"]').nth(2).locator('button[data-action="up"]').click()
    doing_name = page.locator(f'form[data-step-id="{doing.pk}"] input[name=name]')
    doing_name.focus()
    assert len(held) == 1
    expect(page.locator("#settings-saved")).to_have_text("")
    held[0].continue_()
    page.unroute(lanes_url)
    expect(page.locator("#settings-saved")).to_have_text("Step moved.")
    expect(doing_name).to_be_focused()

    page.on("dialog", lambda dialog: dialog.accept())
    forms = page.locator('form[data-role="step-form"]')
    expect(forms.locator("h2")).to_have_text(["1. Backlog", "2. Review", "3. Doing", "4. Done"])
    forms.nth(1).locator('button[data-action="delete"]').click()
    expect(forms.locator("h2")).to_have_text(["1. Backlog", "2. Doing", "3. Done"])
    assert list(WorkflowStep.objects.filter(workflow=workflow).values_list("name", flat=True)) == [
        "Backlog",
        "Doing",
        "Done",
    ]


def an_owner_builds_step_events_from_lists(board_server, open_board, axe, owner, workflow, board):
    backlog, doing, done = board
    page = open_settings(open_board, owner, workflow)
    expect(page.locator("textarea")).to_have_count(0)
    form = step_form(page, "2. In Progress")
    on_enter = form.get_by_role("group", name="When a task enters")
    expect(on_enter.get_by_text("No actions.")).to_be_visible()

    on_enter.get_by_role("button", name="Add action").click()
    on_enter.get_by_label("Action").select_option(label="Start an agent")
    on_enter.get_by_role("button", name="Add action").click()
    second = on_enter.get_by_role("listitem").nth(1)
    expect(second.get_by_label("Target step")).to_be_hidden()
    second.get_by_label("Action").select_option(label="Move to step …")
    expect(second.get_by_label("Target step")).to_be_visible()
    expect(second.get_by_label("Target step").locator("option")).to_have_text(
        ["Choose a step", "Backlog", "Done"]  # never the step itself
    )
    form.get_by_role("button", name="Save").click()  # no target chosen: the server says so
    expect(form.locator('[data-error-for="events"]')).to_contain_text("move_to_step needs")
    assert events_of(board_server, owner, doing) == {"on_enter": [], "on_turn_complete": [], "on_exit": []}

    second.get_by_label("Target step").select_option(label="Done")
    on_turn = form.get_by_role("group", name="When an agent's turn completes")
    on_turn.get_by_role("button", name="Add action").click()
    expect(on_turn.get_by_label("Action").locator("option")).to_have_text(
        ["Move to next step", "Move to previous step", "Move to step …"]  # what the engine allows there
    )
    on_turn.get_by_label("Action").select_option(label="Move to next step")
    with page.expect_navigation():  # a saved form reloads the page
        form.get_by_role("button", name="Save").click()
    page.wait_for_load_state()
    expect(form.locator('[data-error-for="events"]')).to_be_empty()
    assert events_of(board_server, owner, doing) == {
        "on_enter": [{"type": "auto_start_agent"}, {"type": "move_to_step", "config": {"step_id": str(done.pk)}}],
        "on_turn_complete": [{"type": "move_to_next"}],
        "on_exit": [],
    }

    # After the reload the server renders the saved actions as rows; remove one, add another.
    page.reload()
    page.wait_for_load_state()
    form = step_form(page, "2. In Progress")
    on_enter = form.get_by_role("group", name="When a task enters")
    actions = on_enter.get_by_label("Action")
    expect(actions.nth(0)).to_have_value("auto_start_agent")
    expect(actions.nth(1)).to_have_value("move_to_step")
    expect(on_enter.get_by_role("listitem").nth(1).get_by_label("Target step")).to_have_value(str(done.pk))
    on_enter.get_by_role("listitem").nth(0).get_by_role("button", name="Remove").click()
    on_exit = form.get_by_role("group", name="When a task leaves")
    on_exit.get_by_role("button", name="Add action").click()
    on_exit.get_by_label("Action").select_option(label="Move to previous step")
    with page.expect_navigation():  # a saved form reloads the page
        form.get_by_role("button", name="Save").click()
    page.wait_for_load_state()
    expect(event_list(page, "2. In Progress", "When a task leaves").get_by_label("Action")).to_have_value(
        "move_to_previous"
    )
    assert events_of(board_server, owner, doing) == {
        "on_enter": [{"type": "move_to_step", "config": {"step_id": str(done.pk)}}],
        "on_turn_complete": [{"type": "move_to_next"}],
        "on_exit": [{"type": "move_to_previous"}],
    }
    assert "on_enter" not in page.locator("main").inner_text()  # no raw JSON anywhere
    axe(page, "the step settings after editing events")


def the_editor_works_by_keyboard_on_a_narrow_screen(board_server, open_board, axe, owner, workflow, board):
    backlog, doing, done = board
    page = open_settings(open_board, owner, workflow)
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the screen
    form = step_form(page, "3. Done")
    on_exit = form.get_by_role("group", name="When a task leaves")
    on_exit.get_by_role("button", name="Add action").focus()
    page.keyboard.press("Enter")
    action = on_exit.get_by_label("Action")
    expect(action).to_be_focused()
    page.keyboard.press("End")
    expect(action).to_have_value("move_to_step")
    page.keyboard.press("Tab")
    target = on_exit.get_by_label("Target step")
    expect(target).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(target.locator("option:checked")).to_have_text("Backlog")
    page.keyboard.press("Tab")
    expect(on_exit.get_by_role("button", name="Remove")).to_be_focused()
    page.keyboard.press("Tab")
    expect(on_exit.get_by_role("button", name="Add action")).to_be_focused()
    page.keyboard.press("Tab")
    expect(form.get_by_role("button", name="Save")).to_be_focused()
    with page.expect_navigation():  # a saved form reloads the page
        page.keyboard.press("Enter")
    page.wait_for_load_state()
    expect(event_list(page, "3. Done", "When a task leaves").get_by_label("Action")).to_have_value("move_to_step")
    assert events_of(board_server, owner, done)["on_exit"] == [
        {"type": "move_to_step", "config": {"step_id": str(backlog.pk)}}
    ]
    axe(page, "the step settings at 390 px")

    form = step_form(page, "3. Done")
    on_exit = form.get_by_role("group", name="When a task leaves")
    on_exit.get_by_role("button", name="Remove").focus()
    page.keyboard.press("Enter")
    expect(on_exit.get_by_role("button", name="Add action")).to_be_focused()  # focus stays in the list
    expect(on_exit.get_by_text("No actions.")).to_be_visible()
    page.keyboard.press("Tab")
    with page.expect_navigation():  # a saved form reloads the page
        page.keyboard.press("Enter")
    page.wait_for_load_state()
    expect(event_list(page, "3. Done", "When a task leaves").get_by_text("No actions.")).to_be_visible()
    assert events_of(board_server, owner, done)["on_exit"] == []


def an_owner_sets_a_steps_kind_and_a_new_steps_kind(board_server, open_board, axe, owner, workflow, board):
    backlog, doing, done = board
    page = open_settings(open_board, owner, workflow)
    form = step_form(page, "2. In Progress")
    kind = form.get_by_label("Kind")
    expect(kind).to_have_value("active")
    expect(kind.locator("option")).to_have_text(["Backlog", "Active", "Done"])
    expect(step_form(page, "3. Done").get_by_label("Kind")).to_have_value("done")
    axe(page, "the step settings with kinds")

    kind.select_option(label="Done")
    with page.expect_navigation():  # a saved form reloads the page
        form.get_by_role("button", name="Save").click()
    page.wait_for_load_state()
    expect(step_form(page, "2. In Progress").get_by_label("Kind")).to_have_value("done")
    assert step_as_api(board_server, owner, doing)["kind"] == "done"
    assert step_as_api(board_server, owner, backlog)["kind"] == "backlog"  # the other forms are untouched

    new = page.locator('form[data-role="new-step-form"]')
    expect(new.get_by_label("Kind")).to_have_value("active")
    new.get_by_label("Name").fill("Shipped")
    new.get_by_label("Kind").select_option(label="Done")
    with page.expect_navigation():
        new.get_by_role("button", name="Add step").click()
    page.wait_for_load_state()
    added = workflow.steps.get(name="Shipped")
    assert step_as_api(board_server, owner, added)["kind"] == "done"


def an_owner_creates_edits_and_deletes_a_group_and_sees_the_servers_field_errors(
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


def an_owner_sets_the_expedite_limit_with_its_errors_shown(open_board, live_api, owner, workflow, board):
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


def owners_set_members_wip_limits_and_members_read_them(open_page, axe, live_api, owner, workflow):
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


def the_settings_edit_the_session_limits_and_show_a_refused_value(
    board_server, open_page, open_board, axe, api, owner, workflow, agent_board
):
    page = open_page(owner, f"/workflows/{workflow.pk}/settings/")
    page.wait_for_load_state()  # the module script has run
    limits = page.get_by_role("region", name="Agent sessions")
    board_limit = limits.get_by_label("Agents at a time on this board")
    expect(board_limit).to_have_value("1")
    axe(page, "the step settings with the session limits")

    # A refused value: the server's message at the field, nothing saved
    board_limit.fill("-1")
    limits.get_by_role("button", name="Save board limits").click()
    expect(limits.locator("#max_parallel_sessions-error")).to_have_text("Use 0 or more.")
    expect(board_limit).to_have_attribute("aria-invalid", "true")
    shot(page, "settings-agent-limits-refused")
    assert api.get(f"/api/v1/workflows/{workflow.pk}/").json()["max_parallel_sessions"] == 1
    axe(page, "the session limits with an error")

    board_limit.fill("3")
    refuse = "Start no session (the task's history says why)"
    limits.get_by_label("When a step starts an agent past a limit").select_option(label=refuse)
    limits.get_by_role("button", name="Save board limits").click()
    expect(limits.get_by_role("status").first).to_have_text("Saved.")
    expect(limits.locator("#max_parallel_sessions-error")).to_be_empty()
    saved = api.get(f"/api/v1/workflows/{workflow.pk}/").json()
    assert (saved["max_parallel_sessions"], saved["on_session_limit"]) == (3, "reject")

    workspace_limit = limits.get_by_label(f"Agents at a time in {workflow.workspace.name}")
    workspace_limit.fill("5")
    limits.get_by_role("button", name="Save workspace limit").click()
    expect(limits.get_by_role("status").nth(1)).to_have_text("Saved.")
    assert api.get(f"/api/v1/workspaces/{workflow.workspace_id}/").json()["max_concurrent_sessions"] == 5

    board_page = open_board(owner, workflow)
    expect(agents_header(board_page)).to_have_text("Agents: 0/3 running, 0 queued Workspace: 0/5 running, 0 queued")
    assert page.errors == [] and board_page.errors == []


def a_member_sees_the_workspace_limit_but_only_owners_change_it(open_page, workflow, agent_board):
    member = UserFactory(username="mike")
    MembershipFactory(workspace=workflow.workspace, user=member, role=Role.MEMBER)
    page = open_page(member, f"/workflows/{workflow.pk}/settings/")
    limits = page.get_by_role("region", name="Agent sessions")
    expect(limits.get_by_label("Agents at a time on this board")).to_be_enabled()
    expect(limits.get_by_label(f"Agents at a time in {workflow.workspace.name}")).to_be_disabled()
    expect(limits.get_by_role("button", name="Save workspace limit")).to_be_disabled()
    expect(limits).to_contain_text("Only the workspace's owners change it.")


def archived_task_is_found_by_search_and_restored(open_page, api, owner, workflow, board):
    backlog, doing, done = board
    for n in range(2):  # a full In Progress: the restored task stays in Backlog, not pulled on
        api.post("/api/v1/tasks/", json={"step_id": str(doing.pk), "title": f"Busy {n}"})
    ids = {}
    for title in ("Fix login", "Write docs"):
        ids[title] = api.post("/api/v1/tasks/", json={"step_id": str(backlog.pk), "title": title}).json()["id"]
        assert api.post(f"/api/v1/tasks/{ids[title]}/archive/").status_code == 200

    page = open_page(owner, f"/workflows/{workflow.pk}/")
    page.get_by_role("link", name="Archive").click()
    archived = page.get_by_role("list", name="Archived tasks").get_by_role("listitem")
    expect(archived).to_have_count(2)
    page.get_by_label("Search").fill("login")
    with page.expect_navigation():  # the results page's script is loaded before Restore is pressed
        page.get_by_role("button", name="Search").click()
    expect(archived).to_have_count(1)
    archived.get_by_role("button", name="Restore").click()
    expect(archived).to_have_text([re.compile("No archived task matches")])
    task = api.get(f"/api/v1/tasks/{ids['Fix login']}/").json()
    assert task["archived_at"] is None and task["step_id"] == str(backlog.pk)
    assert api.get(f"/api/v1/tasks/{ids['Write docs']}/").json()["archived_at"] is not None
    assert page.errors == []


def a_refused_restore_shows_the_conflict(open_page, api, owner, workflow, board):
    backlog, doing, done = board
    ids = [
        api.post("/api/v1/tasks/", json={"step_id": str(doing.pk), "title": f"Busy {n}"}).json()["id"] for n in range(2)
    ]
    assert api.post(f"/api/v1/tasks/{ids[0]}/archive/").status_code == 200
    api.post("/api/v1/tasks/", json={"step_id": str(doing.pk), "title": "Took its place"})

    page = open_page(owner, f"/workflows/{workflow.pk}/archive/")
    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("alert")).to_have_text('Step "In Progress" is at its WIP limit (2 of 2).')
    assert api.get(f"/api/v1/tasks/{ids[0]}/").json()["archived_at"] is not None


def a_new_person_joins_through_an_invite_link_and_watches_the_board_live(
    board_server, chromium, open_page, open_board, axe, api, owner, workflow, board, make_task
):
    backlog, doing, done = board
    task = make_task(backlog, "Plan the launch")  # In Progress pulls it at once
    workspace = workflow.workspace

    # The owner makes a member's link on the members page and copies it
    members = open_page(owner, f"/workspaces/{workspace.pk}/members/")
    members.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=board_server.url)
    axe(members, "the members page")
    invites = members.get_by_role("region", name="Invite links")
    invites.get_by_label("Role").select_option(label="Member")
    invites.get_by_role("button", name="Invite").click()
    invites.get_by_role("button", name="Copy link").click()
    expect(invites.get_by_role("button", name="Copied")).to_be_visible()
    link = members.evaluate("navigator.clipboard.readText()")
    assert link == invites.get_by_label("New invite link (shown once; single use)").input_value()
    assert link.startswith(f"{board_server.url}/invites/")
    axe(members, "the members page with a new link")

    # A new person, in a browser of their own, signs up and joins in one step
    newcomer = chromium.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = newcomer.new_page()
        page.goto(link)
        expect(page.get_by_role("heading", name=f"Join {workspace.name}")).to_be_visible()
        axe(page, "the invite page")
        page.get_by_label("Username").fill("nina")
        page.get_by_label("E-mail").fill("nina@example.com")
        page.get_by_label("Password", exact=True).fill("a long passphrase for nina")
        page.get_by_label("Password confirmation").fill("a long passphrase for nina")
        page.get_by_role("button", name="Sign up and join").click()

        # They land on the board, live
        page.wait_for_url(f"{board_server.url}/workflows/{workflow.pk}/")
        expect(page.locator('[data-role="live"]')).to_have_attribute("data-state", "live")
        in_progress = page.get_by_role("region", name="In Progress")
        expect(in_progress.get_by_text("Plan the launch")).to_be_visible()
        axe(page, "the board, as the new member")

        # The owner moves the card on their board; the new member sees it arrive
        owners_board = open_board(owner, workflow)
        owners_board.get_by_role("region", name="In Progress").get_by_role("listitem").filter(
            has_text="Plan the launch"
        ).focus()
        owners_board.keyboard.press("Shift+ArrowRight")
        expect(page.get_by_role("region", name="Done").get_by_text("Plan the launch")).to_be_visible()
        expect(in_progress.get_by_text("Plan the launch")).to_have_count(0)
        assert page.url == f"{board_server.url}/workflows/{workflow.pk}/"  # no reload
    finally:
        newcomer.close()

    roles = {m["username"]: m["role"] for m in api.get(f"/api/v1/workspaces/{workspace.pk}/members/").json()}
    assert roles == {"olivia": "owner", "nina": "member"}
    assert api.get(f"/api/v1/tasks/{task.pk}/").json()["step_id"] == str(done.pk)
    (made,) = api.get(f"/api/v1/workspaces/{workspace.pk}/invites/").json()
    assert (made["state"], made["used_by"]) == ("used", "nina")
    assert members.errors == [] and owners_board.errors == []


def a_person_invited_by_name_accepts_on_their_home_page(open_page, axe, api, owner, workflow):
    workspace = workflow.workspace
    UserFactory(username="vera")
    members = open_page(owner, f"/workspaces/{workspace.pk}/members/")
    adding = members.get_by_role("region", name="Add a member")
    adding.get_by_label("Username or e-mail").fill("vera")
    adding.get_by_label("Role").select_option(label="Viewer")
    adding.get_by_role("button", name="Send invitation").click()
    expect(members.get_by_role("status")).to_have_text("vera is invited as viewer. They join once they accept.")
    expect(members.get_by_role("table", name="Waiting for an answer").get_by_role("row", name="vera")).to_be_visible()
    axe(members, "the members page with a pending invitation")

    home = open_page(UserFactory(username="vera"), "/")
    invitations = home.get_by_role("region", name="Invitations")
    expect(invitations).to_contain_text(f"olivia invited you to join {workspace.name} as viewer.")
    axe(home, "the home page with an invitation")
    invitations.get_by_role("button", name=f"Accept the invitation to {workspace.name}").click()
    expect(home.get_by_role("heading", name=re.compile(f"^{re.escape(workspace.name)}"))).to_be_visible()
    expect(home.get_by_role("region", name="Invitations")).to_have_count(0)

    roles = {m["username"]: m["role"] for m in api.get(f"/api/v1/workspaces/{workspace.pk}/members/").json()}
    assert roles == {"olivia": "owner", "vera": "viewer"}
    assert members.errors == [] and home.errors == []


def a_burst_of_board_changes_refreshes_the_figures_a_bounded_number_of_times(
    open_page, owner, workflow, board, live_api
):
    backlog = board[0]
    sockets = []

    def before_load(page):
        # The page's clock stands still unless moved, an hour ahead: the tasks the test
        # makes (at the server's real time) are all in the window the page asks for.
        later = datetime.now(UTC) + timedelta(hours=1)
        page.clock.install(time=later)
        page.clock.pause_at(later + timedelta(seconds=1))
        page.add_init_script(COUNT_REFRESHES)
        page.on("websocket", lambda socket: sockets.append(socket))

    page = open_page(owner, f"/workflows/{workflow.pk}/flow/", before_load=before_load)
    page.wait_for_selector('[data-role="live"][data-state="live"]')
    expect(page.locator('[data-chart="wip"] [data-role="summary"]')).to_contain_text("Backlog 0")
    assert page.evaluate("window.__refreshes") == 1
    (socket,) = [s for s in sockets if "/ws/inbox/" not in s.url]  # the board's, not the bell's

    for n in range(CHANGES):  # one change a second, each delivered to the page
        with socket.expect_event("framereceived"):
            created = live_api.post("/api/v1/tasks/", json={"step_id": str(backlog.pk), "title": f"Task {n}"})
            assert created.status_code == 201
        page.clock.run_for(SECONDS_BETWEEN * 1000)
    page.clock.run_for(REFRESH_SECONDS * 1000)  # the last change's refresh is due by then

    refreshes = page.evaluate("window.__refreshes") - 1
    assert 2 <= refreshes <= CHANGES * SECONDS_BETWEEN // REFRESH_SECONDS + 1, refreshes
    # The figures end with the board after its last change. A change that came while a
    # refresh was still fetching is refreshed once more, an interval after it.
    summary = page.locator('[data-chart="wip"] [data-role="summary"]')
    last = f"Backlog {CHANGES - 2}, In Progress 2 of 2"  # In Progress pulled two
    for _ in range(3):
        try:
            expect(summary).to_contain_text(last, timeout=10_000)
            break
        except AssertionError:
            page.clock.run_for(REFRESH_SECONDS * 1000)
    expect(summary).to_contain_text(last)
    assert page.errors == []
    page.clock.resume()  # timers run in real time again: axe-core's need them


def the_flow_page_answers_when_it_will_be_done(open_page, owner, workflow, board, axe):
    """One task finished at noon on each of the 30 days before today: every simulated
    future finishes one a day, so the forecast is exact; each section is a named region.
    In Progress's limit was raised to 3 twenty days ago and lowered to 2 ten days ago: two
    limit experiments."""
    backlog, doing, done = board
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    step_update(step=doing, actor=owner, wip_limit=3)
    step_update(step=doing, actor=owner, wip_limit=2)
    raised, lowered = ConfigChange.objects.filter(workflow=workflow, field="wip_limit").order_by("id")
    ConfigChange.objects.filter(pk=raised.pk).update(at=today - timedelta(days=20))
    ConfigChange.objects.filter(pk=lowered.pk).update(at=today - timedelta(days=10))
    for day in range(1, 31):
        noon = today - timedelta(days=day) + timedelta(hours=12)
        task = uuid.uuid4()
        TaskEventFactory(
            workflow=workflow, task_id=task, kind="created", to_step_id=doing.pk, at=noon - timedelta(hours=3)
        )
        TaskEventFactory(
            workflow=workflow, task_id=task, kind="moved", from_step_id=doing.pk, to_step_id=done.pk, at=noon
        )

    page = open_page(owner, f"/workflows/{workflow.pk}/flow/")
    for name in (
        "Cumulative flow",
        "Work in progress per step",
        "When will it be done",
        "Service levels",
        "Limit advice",
    ):
        expect(page.get_by_role("region", name=name)).to_be_visible()
    cfd = page.get_by_role("region", name="Cumulative flow")
    expect(cfd.get_by_text("vertical distance between two lines is the work in progress")).to_be_visible()
    expect(cfd.locator('[data-role="summary"]')).to_contain_text("30 tasks finished; 0 in progress")

    when = page.get_by_role("region", name="When will it be done")
    in_ten = (today + timedelta(days=10)).date().isoformat()
    expect(when.locator('[data-role="summary"]')).to_contain_text(f"10 tasks done by {in_ten} (10 days) (50%)")
    when.get_by_role("radio", name="How many tasks by").check()
    when.get_by_label("Date").fill((today + timedelta(days=5)).date().isoformat())
    when.get_by_role("button", name="Forecast").click()
    expect(when.locator('[data-role="summary"]')).to_contain_text("at least 5 tasks (50%), 5 (85%), 5 (95%)")
    when.get_by_text("Table view").click()
    expect(when.locator('[data-role="table"]').get_by_role("row")).to_have_count(
        2
    )  # the head and one bar: 5 tasks in every future

    levels = page.get_by_role("region", name="Service levels")
    expect(levels.locator('[data-role="summary"]')).to_contain_text("standard: 85% within 1 day (30 tasks)")

    experiments = page.get_by_role("region", name="Limit experiments")
    expect(experiments.locator('[data-role="summary"]')).to_contain_text("2 limit changes in the last")
    table = experiments.get_by_role("table", name="Limit experiments")
    expect(table.get_by_role("row")).to_have_count(3)  # the head and the two changes
    expect(table.get_by_role("row").nth(2)).to_contain_text("step In Progress: WIP limit 3 → 2")
    axe(page, "the flow page with a forecast")
    assert page.errors == []
