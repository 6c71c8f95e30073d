"""Audited operator overrides and the board's history API."""

import datetime as dt

import pytest

from boards.models import EventKind, Task, TaskEvent
from tests.conftest import member_client
from tests.factories import WorkspaceFactory
from workflows.models import OnFull, Role, Workflow


@pytest.fixture
def full(board, make_task):
    """The conftest board with In Progress at its limit (2 of 2) and one task waiting."""
    backlog, doing, done = board
    make_task(doing, "a")
    make_task(doing, "b")
    return backlog, doing, done, make_task(backlog, "urgent")


def force_move(client, task, step, **body):
    return client.post(
        f"/api/v1/tasks/{task.pk}/move/",
        {"step_id": str(step.pk), "force": True, **body},
        format="json",
    )


def force_create(client, step, **body):
    return client.post(
        "/api/v1/tasks/",
        {"step_id": str(step.pk), "title": "hotfix", "force": True, **body},
        format="json",
    )


def snapshot():
    return (
        list(Task.objects.order_by("id").values_list("id", "step_id", "admitted", "archived_at")),
        TaskEvent.objects.count(),
        list(Workflow.objects.values_list("version", flat=True)),
    )


class TestForce:
    @pytest.mark.parametrize("reason", [None, "", "   "])
    def test_without_a_reason_is_400_and_changes_nothing(self, api, full, reason):
        _, doing, _, urgent = full
        body = {} if reason is None else {"reason": reason}
        before = snapshot()
        for response in (force_move(api, urgent, doing, **body), force_create(api, doing, **body)):
            assert response.status_code == 400
            assert response.json()["errors"] == {"reason": ["A reason is required to force an admission."]}
        assert snapshot() == before

    @pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
    def test_only_owners_may_force(self, full, role):
        _, doing, _, urgent = full
        client = member_client(doing.workflow.workspace, role)
        before = snapshot()
        for response in (
            force_move(client, urgent, doing, reason="prod is down"),
            force_create(client, doing, reason="prod is down"),
        ):
            assert response.status_code == 403
            assert response.json()["code"] == "permission_denied"
        assert snapshot() == before

    def test_a_member_without_force_still_gets_the_wip_conflict(self, full):
        _, doing, _, urgent = full
        client = member_client(doing.workflow.workspace, Role.MEMBER)
        response = client.post(f"/api/v1/tasks/{urgent.pk}/move/", {"step_id": str(doing.pk)}, format="json")
        assert response.status_code == 409
        assert response.json()["code"] == "wip_limit_reached"

    def test_an_owner_forces_a_move_the_step_shows_over_limit_and_the_event_is_audited(self, api, owner, full):
        _, doing, _, urgent = full
        response = force_move(api, urgent, doing, reason="prod is down")
        assert response.status_code == 200
        assert response.json()["admitted"] is True
        column = api.get(f"/api/v1/workflows/{doing.workflow_id}/board/").json()["steps"][1]
        assert (column["occupied"], column["wip_limit"], column["over_limit"]) == (3, 2, True)
        event = TaskEvent.objects.get(task_id=urgent.pk, kind=EventKind.FORCED)
        assert (event.actor, event.reason, event.to_step) == (owner, "prod is down", doing)
        history = api.get(f"/api/v1/tasks/{urgent.pk}/events/").json()["results"]
        assert history[-1] | {"id": None, "at": None} == {
            "id": None,
            "kind": "forced",
            "task_id": str(urgent.pk),
            "from_step_id": str(full[0].pk),
            "to_step_id": str(doing.pk),
            "actor": "olivia",
            "reason": "prod is down",
            "at": None,
            "detail": {
                "action": "move",
                "version": doing.workflow.__class__.objects.get(pk=doing.workflow_id).version,
            },  # the force move is the board's latest change
        }

    def test_an_owner_forces_a_create(self, api, full):
        _, doing, _, _ = full
        response = force_create(api, doing, reason="customer escalation")
        assert response.status_code == 201
        event = TaskEvent.objects.get(task_id=response.json()["id"])
        assert (event.kind, event.reason, event.actor.username) == (
            "forced",
            "customer escalation",
            "olivia",
        )

    def test_restore_into_a_full_step_is_forced_the_same_way(self, api, owner, full):
        _, doing, _, urgent = full
        archived = Task.objects.get(title="a")
        api.post(f"/api/v1/tasks/{archived.pk}/archive/")
        assert Task.objects.get(pk=urgent.pk).step == doing  # pulled into the freed slot
        url = f"/api/v1/tasks/{archived.pk}/restore/"
        assert api.post(url, {}, format="json").status_code == 409
        member = member_client(doing.workflow.workspace, Role.MEMBER)
        assert member.post(url, {"force": True, "reason": "x"}, format="json").status_code == 403
        assert api.post(url, {"force": True}, format="json").status_code == 400
        response = api.post(url, {"force": True, "reason": "needed back"}, format="json")
        assert response.status_code == 200
        event = TaskEvent.objects.filter(task_id=archived.pk).latest("id")
        assert (event.kind, event.actor, event.reason) == ("forced", owner, "needed back")

    def test_force_into_a_full_queue_mode_step_admits_instead_of_queueing(self, api, full):
        _, doing, _, urgent = full
        doing.on_full = OnFull.QUEUE
        doing.save(update_fields=["on_full"])
        response = force_move(api, urgent, doing, reason="prod is down")
        assert response.status_code == 200
        assert response.json()["admitted"] is True
        assert Task.objects.occupying().filter(step=doing).count() == 3

    def test_an_over_limit_step_pulls_nothing_until_it_is_below_its_limit(self, api, owner, full, make_task):
        backlog, doing, done, urgent = full
        force_move(api, urgent, doing, reason="prod is down")
        make_task(backlog, "next")
        leaving = Task.objects.get(title="a")
        api.post(f"/api/v1/tasks/{leaving.pk}/move/", {"step_id": str(done.pk)}, format="json")
        assert Task.objects.get(title="next").step == backlog
        assert not TaskEvent.objects.filter(kind=EventKind.PULLED).exists()
        column = api.get(f"/api/v1/workflows/{doing.workflow_id}/board/").json()["steps"][1]
        assert (column["occupied"], column["over_limit"]) == (2, False)


class TestHistory:
    @pytest.fixture
    def history(self, api, full):
        """created a, b, urgent; urgent forced into In Progress; a moved to Done: one a day."""
        backlog, doing, done, urgent = full
        force_move(api, urgent, doing, reason="prod is down")
        a = Task.objects.get(title="a")
        api.post(f"/api/v1/tasks/{a.pk}/move/", {"step_id": str(done.pk)}, format="json")
        events = list(TaskEvent.objects.order_by("id"))
        start = dt.datetime(2026, 3, 1, tzinfo=dt.UTC)
        for day, event in enumerate(events):
            TaskEvent.objects.filter(pk=event.pk).update(at=start + dt.timedelta(days=day))
        return doing.workflow, events, urgent, a

    def list(self, client, workflow, **params):
        return client.get(f"/api/v1/workflows/{workflow.pk}/events/", params)

    def kinds(self, response):
        assert response.status_code == 200, response.json()
        return [e["kind"] for e in response.json()["results"]]

    def test_lists_the_whole_history_in_order(self, api, history):
        workflow, events, _, _ = history
        assert self.kinds(self.list(api, workflow)) == [
            "created",
            "created",
            "created",
            "forced",
            "moved",
        ]
        assert self.list(api, workflow).json()["count"] == len(events)

    def test_filters_by_kind_task_step_and_time_range(self, api, history, board):
        workflow, _, urgent, a = history
        backlog, doing, done = board
        forced = self.list(api, workflow, kind="forced").json()["results"]
        assert [(e["task_id"], e["actor"], e["reason"]) for e in forced] == [(str(urgent.pk), "olivia", "prod is down")]
        assert self.kinds(self.list(api, workflow, task=str(a.pk))) == ["created", "moved"]
        assert self.kinds(self.list(api, workflow, step=str(done.pk))) == ["moved"]
        assert self.kinds(self.list(api, workflow, step=str(backlog.pk))) == ["created", "forced"]
        window = {"since": "2026-03-02T00:00:00Z", "until": "2026-03-04T00:00:00Z"}
        assert self.kinds(self.list(api, workflow, **window)) == ["created", "created"]
        assert self.kinds(self.list(api, workflow, since="2026-03-04T00:00:00Z", kind="moved")) == ["moved"]

    def test_paginates(self, api, history):
        workflow, _, _, _ = history
        first = self.list(api, workflow, page_size=2).json()
        assert (first["count"], len(first["results"]), first["previous"]) == (5, 2, None)
        second = api.get(first["next"]).json()
        last = api.get(second["next"]).json()
        assert [e["kind"] for e in first["results"] + second["results"] + last["results"]] == [
            "created",
            "created",
            "created",
            "forced",
            "moved",
        ]
        assert last["next"] is None

    @pytest.mark.parametrize(
        ("params", "field"),
        [
            ({"since": "last tuesday"}, "since"),
            ({"task": "not-an-id"}, "task"),
            ({"step": "42"}, "step"),
            ({"kind": "teleported"}, "kind"),
        ],
    )
    def test_bad_filters_are_400_with_field_errors(self, api, history, params, field):
        workflow, _, _, _ = history
        response = self.list(api, workflow, **params)
        assert response.status_code == 400
        assert field in response.json()["errors"]

    def test_viewers_read_it_non_members_get_404(self, history):
        workflow, _, _, _ = history
        assert self.list(member_client(workflow.workspace, Role.VIEWER), workflow).status_code == 200
        outsider = member_client(WorkspaceFactory(), Role.OWNER)
        assert self.list(outsider, workflow).status_code == 404
