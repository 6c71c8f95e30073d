"""GET /api/v1/tasks/: each filter of the board's filter bar narrows the list, and every list
endpoint answers an unknown query parameter with a 400 naming it (common/filters.py)."""

import pytest

from boards.services import task_block
from tests.factories import MembershipFactory
from workflows.models import Role


@pytest.fixture
def tasks(board, make_task, owner, workflow):
    backlog, _, _ = board
    other = MembershipFactory(workspace=workflow.workspace, role=Role.MEMBER).user
    made = {
        "mine": make_task(backlog, "Write the brief", assignee_id=owner.pk, priority=1, external_ref="gh:7"),
        "theirs": make_task(backlog, "Review the plan", assignee_id=other.pk),
        "nobody": make_task(backlog, "Fix the hotfix", class_of_service="expedite"),
    }
    task_block(task=made["theirs"], actor=owner, reason="waiting on ops")
    return made, other


def titles(api, query):
    response = api.get(f"/api/v1/tasks/?{query}")
    assert response.status_code == 200, response.content
    return sorted(t["title"] for t in response.json()["results"])


def test_every_filter_of_the_board_narrows_the_list(api, tasks, owner, workflow):
    (mine, theirs, nobody), other = tasks[0].values(), tasks[1]
    everything = sorted([mine.title, theirs.title, nobody.title])
    assert titles(api, f"workflow={workflow.pk}") == everything
    assert titles(api, "blocked=true") == [theirs.title]
    assert titles(api, "blocked=false") == sorted([mine.title, nobody.title])
    assert titles(api, f"assignee={owner.pk}") == [mine.title]
    assert titles(api, f"assignee={other.pk}") == [theirs.title]
    assert titles(api, "assignee=none") == [nobody.title]
    assert titles(api, "class_of_service=expedite") == [nobody.title]
    assert titles(api, "class_of_service=standard") == sorted([mine.title, theirs.title])
    assert titles(api, "q=brief") == [mine.title]
    assert titles(api, "q=gh:7") == [mine.title]  # the external reference too
    assert titles(api, "priority=high") == [mine.title]
    for task in (mine, theirs, nobody):
        task.refresh_from_db()
        in_step = sorted(t.title for t in (mine, theirs, nobody) if t.step_id == task.step_id)
        assert titles(api, f"step={task.step_id}&archived=false") == in_step
    assert titles(api, "archived=true") == []
    assert titles(api, f"blocked=false&assignee={owner.pk}&class_of_service=standard") == [mine.title]


@pytest.mark.parametrize(
    "query, field",
    [
        ("assignee=someone", "assignee"),
        ("class_of_service=urgent", "class_of_service"),
        ("blocked=maybe", "blocked"),
        ("archived=maybe", "archived"),
    ],
)
def test_a_bad_filter_value_is_400_naming_it(api, tasks, query, field):
    response = api.get(f"/api/v1/tasks/?{query}")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert list(response.json()["errors"]) == [field]


def test_an_unknown_query_parameter_is_400_naming_it(api, tasks):
    response = api.get("/api/v1/tasks/?asignee=7&blocked=true&colour=red")
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid",
        "detail": "Invalid input.",
        "errors": {"asignee": ["Unknown query parameter."], "colour": ["Unknown query parameter."]},
    }


def test_the_page_parameters_and_format_are_known(api, tasks):
    response = api.get("/api/v1/tasks/?page=1&page_size=2&format=json")
    assert response.status_code == 200
    assert len(response.json()["results"]) == 2


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/workspaces/",
        "/api/v1/workflows/?workspace={workspace}",
        "/api/v1/steps/?workflow={workflow}",
        "/api/v1/step-groups/?workflow={workflow}",
        "/api/v1/sessions/?workflow={workflow}",
        "/api/v1/intakes/?workflow={workflow}",
        "/api/v1/review-watches/?workflow={workflow}",
        "/api/v1/tokens/",
        "/api/v1/workflows/{workflow}/events/?kind=created",
        "/api/v1/tasks/{task}/events/",
    ],
)
def test_every_list_endpoint_refuses_an_unknown_parameter(api, tasks, workflow, path):
    task = tasks[0]["mine"]
    url = path.format(workspace=workflow.workspace_id, workflow=workflow.pk, task=task.pk)
    assert api.get(url).status_code == 200  # its own parameters are known
    joiner = "&" if "?" in url else "?"
    refused = api.get(f"{url}{joiner}bogus=1")
    assert refused.status_code == 400
    assert refused.json()["errors"] == {"bogus": ["Unknown query parameter."]}
