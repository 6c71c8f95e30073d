"""A task's JSON is defined once (boards.messages.TASK_JSON): the API's schema declares the
same fields, and the board's cards are that JSON without what their
column already says."""

from boards.messages import CARD_FIELDS, OFF_BOARD, TASK_JSON, card_data, task_data
from boards.serializers import TaskSerializer


def test_the_api_schema_declares_the_task_json_fields():
    assert set(TaskSerializer().fields) == set(TASK_JSON)


def test_a_card_is_the_task_json_without_what_its_column_says(board, make_task):
    task = make_task(board[0], "a card")
    data = task_data(task)
    assert list(data) == list(TASK_JSON)
    assert card_data(data) == {name: value for name, value in data.items() if name not in OFF_BOARD}
    assert list(card_data(data)) == list(CARD_FIELDS)
