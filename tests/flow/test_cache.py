"""The flow figures kept per board version (flow/cache.py): an unchanged board answers again
without reading its history; a change of the board, of a person's limit, of the members or
of a service level is a new answer at once."""

from rest_framework.test import APIClient

from flow import cache
from tests.factories import MembershipFactory, UserFactory
from tests.flow.history import WINDOW, hours
from workflows.models import Role

PARAMS = {"from": WINDOW.start.isoformat(), "to": WINDOW.end.isoformat()}


def url(workflow, name):
    return f"/api/v1/workflows/{workflow.pk}/flow/{name}/"


def test_an_unchanged_board_answers_again_without_reading_its_history(
    api, workflow, history, django_assert_num_queries
):
    first = api.get(url(workflow, "limits"), PARAMS)
    assert first.status_code == 200
    # The workflow, the caller's role and the board's stamp: nothing of the history.
    with django_assert_num_queries(3):
        again = api.get(url(workflow, "limits"), PARAMS)
    assert again.content == first.content
    # The CSV is the same answer, written as rows.
    with django_assert_num_queries(3):
        assert api.get(url(workflow, "limits"), {**PARAMS, "format": "csv"}).status_code == 200
    # Another window is another answer.
    other = api.get(url(workflow, "limits"), {**PARAMS, "to": hours(6).isoformat()})
    assert other.json() != first.json()


def test_a_change_of_the_board_is_a_new_answer(api, workflow, history):
    a = history["tasks"]["A"]
    titles = {i["task_id"]: i["title"] for i in api.get(url(workflow, "cycle-times"), PARAMS).json()["items"]}
    assert titles[str(a)] == "A"
    assert api.patch(f"/api/v1/tasks/{a}/", {"title": "A, renamed"}, format="json").status_code == 200
    titles = {i["task_id"]: i["title"] for i in api.get(url(workflow, "cycle-times"), PARAMS).json()["items"]}
    assert titles[str(a)] == "A, renamed"


def test_a_person_s_limit_and_a_new_member_are_new_answers(api, workflow, history, owner):
    def people():
        rows = api.get(url(workflow, "limits"), PARAMS).json()["limits"]
        return {row["name"]: row["limit"] for row in rows if row["scope"] == "person"}

    assert people() == {}
    answer = api.patch(
        f"/api/v1/workspaces/{workflow.workspace_id}/members/{owner.pk}/", {"wip_limit": 2}, format="json"
    )
    assert answer.status_code == 200, answer.content
    assert people() == {owner.username: 2}
    # A member who joins with a limit of their own (set before the window: no change recorded).
    newcomer = UserFactory(username="newcomer")
    MembershipFactory(workspace=workflow.workspace, user=newcomer, role=Role.MEMBER, wip_limit=1)
    assert people() == {owner.username: 2, "newcomer": 1}


def test_a_service_level_set_by_an_owner_is_a_new_answer(api, workflow, history):
    def standard():
        sles = api.get(url(workflow, "sle"), PARAMS).json()["sles"]
        return next(s for s in sles if s["class_of_service"] == "standard")

    assert standard()["set_by"] == "history"
    api.put(url(workflow, "sle"), {"class_of_service": "standard", "days": 4}, format="json")
    assert (standard()["days"], standard()["set_by"]) == (4, "owner")
    api.put(url(workflow, "sle"), {"class_of_service": "standard", "days": None}, format="json")
    assert standard()["set_by"] == "history"


def test_a_kept_answer_is_only_for_members(workflow, history, api):
    assert api.get(url(workflow, "limits"), PARAMS).status_code == 200
    stranger = APIClient()
    stranger.force_authenticate(UserFactory())
    assert stranger.get(url(workflow, "limits"), PARAMS).status_code == 404


def test_an_answer_over_the_size_bound_is_computed_every_time(
    api, workflow, history, monkeypatch, django_assert_num_queries
):
    monkeypatch.setattr(cache, "KEPT_MAX_BYTES", 100)
    first = api.get(url(workflow, "cycle-times"), PARAMS)
    # The workflow, the role, the stamp, then the figure read again: the steps, the events'
    # count, the finished tasks, their blocks and the lanes.
    with django_assert_num_queries(8):
        again = api.get(url(workflow, "cycle-times"), PARAMS)
    assert again.content == first.content
