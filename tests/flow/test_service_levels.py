"""Owner-set service levels: `PUT /flow/sle/` (owners only), `/flow/sle/` reporting
`set_by: "owner"`, and the task detail's `sle` judged by it."""

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from flow.models import ServiceLevel
from tests.conftest import member_client
from tests.factories import UserFactory, board
from tests.flow.test_outlook import finished_history
from workflows.models import Role


def url(workflow):
    return f"/api/v1/workflows/{workflow.pk}/flow/sle/"


def test_an_owner_sets_a_service_level_and_the_sle_reports_it(api, workflow):
    steps = board(workflow)
    finished_history(workflow, steps, 10, timezone.now())  # the history's SLE: 2 days
    answer = api.put(url(workflow), {"class_of_service": "standard", "days": 9}, format="json")
    assert answer.status_code == 200
    standard = next(s for s in api.get(url(workflow)).json()["sles"] if s["class_of_service"] == "standard")
    assert (standard["days"], standard["set_by"], standard["sample"]) == (9, "owner", 10)
    assert answer.json()["sles"][0]["set_by"] == "owner"
    api.put(url(workflow), {"class_of_service": "standard", "days": None}, format="json")
    standard = next(s for s in api.get(url(workflow)).json()["sles"] if s["class_of_service"] == "standard")
    assert (standard["days"], standard["set_by"]) == (2, "history")


def test_the_task_detail_judges_a_card_by_the_owner_s_sle(api, workflow, make_task):
    steps = board(workflow)
    finished_history(workflow, steps, 10, timezone.now())
    task = make_task(steps[1])
    api.put(url(workflow), {"class_of_service": "standard", "days": 4}, format="json")
    assert api.get(f"/api/v1/tasks/{task.pk}/").json()["sle"]["days"] == 4


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"class_of_service": "urgent", "days": 3}, "class_of_service"),
        ({"class_of_service": "standard", "days": 0}, "days"),
        ({"class_of_service": "standard", "days": 3651}, "days"),
        ({"class_of_service": "standard"}, "days"),
    ],
)
def test_a_bad_service_level_is_a_field_error_and_sets_nothing(api, workflow, body, field):
    response = api.put(url(workflow), body, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not ServiceLevel.objects.exists()


def test_only_owners_set_service_levels(workflow):
    body = {"class_of_service": "standard", "days": 3}
    for role in (Role.MEMBER, Role.VIEWER):
        assert member_client(workflow.workspace, role).put(url(workflow), body, format="json").status_code == 403
    stranger = APIClient()
    stranger.force_authenticate(UserFactory())
    assert stranger.put(url(workflow), body, format="json").status_code == 404
    assert not ServiceLevel.objects.exists()
