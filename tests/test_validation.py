"""Field errors in words a person understands, in the structure DRF gives them, whether
kandev checks the input (validated) or DRF does (the exception handler)."""

import pytest
from rest_framework import serializers

from common.errors import Invalid
from common.validation import validated


class Group(serializers.Serializer):
    name = serializers.CharField(max_length=5)
    wip_limit = serializers.IntegerField(min_value=1, max_value=9)
    step_ids = serializers.ListField(child=serializers.UUIDField(), min_length=2)
    kind = serializers.ChoiceField(choices=["active", "done"], required=False)
    open = serializers.BooleanField(required=False)
    config = serializers.DictField(required=False)


def errors_of(data) -> dict:
    with pytest.raises(Invalid) as refused:
        validated(Group, data)
    return refused.value.extra["errors"]


def test_drf_s_developer_wording_becomes_plain_words_field_by_field():
    assert errors_of(
        {"name": "far too long", "wip_limit": 0, "step_ids": ["x"], "kind": "urgent", "open": "q", "config": 3}
    ) == {
        "name": ["Use at most 5 characters."],
        "wip_limit": ["Use 1 or more."],
        "step_ids": {0: ["Must be a valid id."]},
        "kind": ['"urgent" is not one of the choices.'],
        "open": ["Must be true or false."],
        "config": ["Please give an object."],
    }


def test_missing_blank_and_mistyped_fields():
    assert errors_of({"name": "", "wip_limit": "many", "step_ids": "one"}) == {
        "name": ["Please fill this in."],
        "wip_limit": ["Please give a whole number."],
        "step_ids": ["Please give a list."],
    }
    assert errors_of({"name": "a", "wip_limit": 10, "step_ids": []}) == {
        "wip_limit": ["Use 9 or less."],
        "step_ids": ["Choose at least 2."],
    }
    assert errors_of({}) == {f: ["Please fill this in."] for f in ("name", "wip_limit", "step_ids")}


def test_kandev_s_own_messages_are_kept():
    class Checked(serializers.Serializer):
        title = serializers.CharField()

        def validate_title(self, value):
            raise serializers.ValidationError("A title needs a letter.")

    with pytest.raises(Invalid) as refused:
        validated(Checked, {"title": "1"})
    assert refused.value.extra["errors"] == {"title": ["A title needs a letter."]}


def test_a_serializer_checked_by_drf_itself_answers_in_the_same_words(api, workflow):
    response = api.patch(f"/api/v1/workflows/{workflow.pk}/", {"max_parallel_sessions": -1}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {"max_parallel_sessions": ["Use 0 or more."]}
