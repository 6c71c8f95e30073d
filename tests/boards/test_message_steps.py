"""A live message's `steps[]` entries are whole steps: each equals what
`GET /api/v1/steps/{id}/` returns right after the change, so API viewers never refetch."""

from tests.factories import StepFactory
from workflows.models import OnFull, Workflow


def assert_steps_as_the_api_returns_them(api, message):
    assert message["steps"], message["type"]
    for entry in message["steps"]:
        assert entry == api.get(f"/api/v1/steps/{entry['id']}/").json()
    assert {"pull_from_step_id", "on_full", "kind", "events", "name", "color"} <= message["steps"][0].keys()


def test_each_steps_entry_is_the_step_as_the_api_returns_it(workflow, make_task, owner, api, broadcasts):
    # Given Doing (limit 1, queue) pulling from Backlog, full with the first task
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
    doing = StepFactory(
        workflow=workflow,
        name="Doing",
        position=1,
        wip_limit=1,
        pull_from_step=backlog,
        on_full=OnFull.QUEUE,
        color="#ff0000",
    )
    make_task(backlog, "first")

    changes = [
        lambda: make_task(backlog, "second"),  # waits in Backlog: Doing is full
        # a raised limit: Doing pulls the second task, so both steps are in the message
        lambda: api.patch(f"/api/v1/steps/{doing.pk}/", {"name": "Busy", "wip_limit": 2}, format="json"),
    ]
    for change in changes:
        # Then each change sends exactly one message, of its own version
        (message,) = broadcasts(workflow, change)
        assert message["version"] == Workflow.objects.get(pk=workflow.pk).version
        assert_steps_as_the_api_returns_them(api, message)
    assert {s["name"]: s["occupied"] for s in message["steps"]} == {"Backlog": 0, "Busy": 2}


def test_a_pull_whose_on_enter_sends_the_task_back_sends_one_message_with_the_new_step(
    workflow, make_task, owner, api, broadcasts
):
    # Given Doing (limit 1) pulling from Backlog, whose on_enter sends every arrival back
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
    doing = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=1)
    doing.events = {
        "on_enter": [{"type": "move_to_step", "config": {"step_id": str(backlog.pk)}}],
        "on_turn_complete": [],
        "on_exit": [],
    }
    doing.save(update_fields=["events"])
    make_task(backlog, "bounced")
    before = Workflow.objects.get(pk=workflow.pk).version

    # When a PATCH renames Doing, raises its limit and names Backlog its feeder
    def patch():
        body = {"name": "Busy", "wip_limit": 2, "pull_from_step_id": str(backlog.pk)}
        assert api.patch(f"/api/v1/steps/{doing.pk}/", body, format="json").status_code == 200

    messages = broadcasts(workflow, patch)

    # Then one message of one version step carries the step as the PATCH left it, and the
    # task, pulled once and sent back, ends in Backlog (it is not pulled again and again)
    (message,) = messages
    assert message["version"] == before + 1 == Workflow.objects.get(pk=workflow.pk).version
    assert_steps_as_the_api_returns_them(api, message)
    busy = next(s for s in message["steps"] if s["id"] == str(doing.pk))
    assert (busy["name"], busy["wip_limit"], busy["occupied"]) == ("Busy", 2, 0)
    (bounced,) = message["tasks"]
    assert bounced["step_id"] == str(backlog.pk)


def test_a_kind_change_sends_the_step_with_its_new_kind(workflow, board, api, broadcasts):
    # Given the board's Done step; when a PATCH makes it active
    done = board[2]

    def patch():
        assert api.patch(f"/api/v1/steps/{done.pk}/", {"kind": "active"}, format="json").status_code == 200

    (message,) = broadcasts(workflow, patch)
    # Then the live message carries the whole step, kind included, as the API returns it
    assert message["type"] == "step.updated"
    assert [(s["id"], s["kind"]) for s in message["steps"]] == [(str(done.pk), "active")]
    assert_steps_as_the_api_returns_them(api, message)
