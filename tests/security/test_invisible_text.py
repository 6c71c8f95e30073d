"""Text made only of invisible characters (zero-width, bidi controls) is refused: a card or
board would show nothing, or a label that reads differently from what it is."""

import pytest

from boards.models import Task
from workflows.models import Workflow

INVISIBLE = ["\u200b", "\u200b\u200c\u200d", "\u202e\u202c", "\u2066\u2069", "\ufeff", "\u200e \u200f"]


@pytest.mark.parametrize("title", INVISIBLE)
def test_a_title_of_only_invisible_characters_is_refused(api, board, title):
    backlog, _, _ = board
    response = api.post("/api/v1/tasks/", {"step_id": str(backlog.pk), "title": title}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid" and "title" in body["errors"]
    assert not Task.objects.exists()


def test_a_board_name_of_only_invisible_characters_is_refused(api, workflow):
    response = api.patch(f"/api/v1/workflows/{workflow.pk}/", {"name": "\u200b\u202e"}, format="json")
    assert response.status_code == 400 and "name" in response.json()["errors"]
    assert Workflow.objects.get(pk=workflow.pk).name == "Delivery"


def test_visible_text_joined_by_zero_width_characters_is_kept(api, board):
    backlog, _, _ = board
    title = "Pair on it \U0001f469\u200d\U0001f4bb"
    response = api.post("/api/v1/tasks/", {"step_id": str(backlog.pk), "title": title}, format="json")
    assert response.status_code == 201
    assert Task.objects.get().title == title
