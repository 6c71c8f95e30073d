"""Export / import of portable workflow documents."""

import io
import json

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from boards import structure
from tests.conftest import member_client
from tests.factories import WorkspaceFactory
from workflows import services
from workflows.models import OnFull, Role, StepGroup, Workflow, WorkflowStep

IMPORT_TYPES = ["application/yaml", "application/x-yaml", "text/yaml", "application/json"]


@pytest.fixture
def kanban(workflow, owner):
    """The agent pipeline template (feeders, an agent), with a queue-mode Review that sends
    finished turns back to Backlog."""
    board = services.workflow_create(workspace=workflow.workspace, name="Team board", template="agent_pipeline")
    backlog, _, review, _ = board.steps.order_by("position")
    structure.step_update(
        step=review,
        actor=owner,
        on_full=OnFull.QUEUE,
        color="#abcdef",
        events={"on_turn_complete": [{"type": "move_to_step", "config": {"step_id": str(backlog.pk)}}]},
    )
    return board


def export(api, workflow, fmt=None):
    suffix = f"?format={fmt}" if fmt else ""
    return api.get(f"/api/v1/workflows/{workflow.pk}/export/{suffix}")


def import_(client, workspace, body, content_type="application/yaml"):
    if not isinstance(body, bytes | str):
        body = json.dumps(body) if content_type == "application/json" else yaml.safe_dump(body)
    return client.post(f"/api/v1/workspaces/{workspace.pk}/workflows/import/", data=body, content_type=content_type)


def valid_document(**step_overrides):
    steps = [
        {"name": "Todo", "position": 0, "wip_limit": 0},
        {"name": "Doing", "position": 1, "wip_limit": 2, "pull_from_step_position": 0},
        {"name": "Done", "position": 2},
    ]
    for position, overrides in step_overrides.items():
        steps[int(position[1:])].update(overrides)
    return {
        "version": 1,
        "type": "kandev_workflow",
        "workflows": [{"name": "Imported", "steps": steps}],
    }


def grouped_document(overrides=None, **second):
    """valid_document() with the group "Development" over Doing and Done (`overrides` its
    fields), and a second group of `second`'s fields when given."""
    document = valid_document()
    groups = [{"name": "Development", "wip_limit": 2, "step_positions": [1, 2], **(overrides or {})}]
    if second:
        groups.append({"wip_limit": 1, **second})
    document["workflows"][0]["groups"] = groups
    return document


def persisted():
    return Workflow.objects.count(), WorkflowStep.objects.count(), StepGroup.objects.count()


class TestExport:
    def test_yaml_by_default_with_feeders_and_targets_as_positions(self, api, kanban):
        response = export(api, kanban)
        assert response.status_code == 200
        assert response["Content-Type"].startswith("application/yaml")
        assert 'filename="team-board.yaml"' in response["Content-Disposition"]
        document = yaml.safe_load(response.content)
        assert {k: document[k] for k in ("version", "type")} == {
            "version": 3,
            "type": "kandev_workflow",
        }
        [exported] = document["workflows"]
        assert exported["name"] == "Team board"
        assert [
            (s["name"], s["position"], s["wip_limit"], s["pull_from_step_position"], s["on_full"])
            for s in exported["steps"]
        ] == [
            ("Backlog", 0, 0, None, "reject"),
            ("In Progress", 1, 3, 0, "reject"),
            ("Review", 2, 2, 1, "queue"),
            ("Done", 3, 0, None, "reject"),
        ]
        assert [s["is_start_step"] for s in exported["steps"]] == [True, False, False, False]
        assert exported["steps"][1]["events"]["on_enter"] == [{"type": "auto_start_agent"}]
        assert exported["steps"][2]["events"]["on_turn_complete"] == [
            {"type": "move_to_step", "config": {"step_position": 0}}
        ]
        assert "step_id" not in response.content.decode()

    def test_json_on_request_is_the_same_document(self, api, kanban):
        as_json = export(api, kanban, "json")
        assert as_json.status_code == 200
        assert as_json["Content-Type"] == "application/json"
        assert as_json.json() == yaml.safe_load(export(api, kanban).content)

    def test_deleting_a_move_target_drops_the_action_so_the_export_stays_importable(self, api, kanban):
        backlog = kanban.steps.get(name="Backlog")
        assert api.delete(f"/api/v1/steps/{backlog.pk}/").status_code == 204
        document = export(api, kanban, "json").json()
        review = document["workflows"][0]["steps"][1]
        assert (review["name"], review["events"]["on_turn_complete"]) == ("Review", [])
        assert import_(api, kanban.workspace, document, "application/json").status_code == 201

    def test_viewers_may_export_non_members_get_a_json_404(self, kanban):
        viewer = member_client(kanban.workspace, Role.VIEWER)
        assert export(viewer, kanban).status_code == 200
        outsider = member_client(WorkspaceFactory(), Role.OWNER)
        response = export(outsider, kanban)
        assert response.status_code == 404
        assert response.json() == {"code": "not_found", "detail": "Not found."}


class TestImport:
    @pytest.mark.parametrize("content_type", IMPORT_TYPES)
    def test_round_trip_export_import_export_gives_the_same_document(self, api, kanban, content_type):
        exported = export(api, kanban, "json").json()
        target = services.workspace_create(name="Elsewhere", owner=kanban.workspace.memberships.get().user)
        response = import_(api, target, exported, content_type)
        assert response.status_code == 201, response.json()
        [created] = response.json()["workflows"]
        assert created["workspace_id"] == str(target.pk)
        again = Workflow.objects.get(pk=created["id"])
        assert export(api, again, "json").json() == exported

    def test_groups_kinds_and_the_expedite_limit_round_trip(self, api, kanban, owner):
        _, doing, review, _ = kanban.steps.order_by("position")
        structure.group_create(
            workflow=kanban, actor=owner, name="Development", wip_limit=4, step_ids=[review.pk, doing.pk]
        )
        Workflow.objects.filter(pk=kanban.pk).update(expedite_limit=3)
        exported = export(api, kanban, "json").json()
        [document] = exported["workflows"]
        assert document["expedite_limit"] == 3
        assert document["groups"] == [{"name": "Development", "wip_limit": 4, "step_positions": [1, 2]}]
        assert [s["kind"] for s in document["steps"]] == ["backlog", "active", "active", "done"]

        response = import_(api, kanban.workspace, yaml.safe_dump(exported))

        assert response.status_code == 201, response.json()
        [created] = response.json()["workflows"]
        steps = {s["name"]: s for s in created["steps"]}
        [group] = created["groups"]
        assert (group["name"], group["wip_limit"], group["occupied"]) == ("Development", 4, 0)
        assert group["step_ids"] == [steps["In Progress"]["id"], steps["Review"]["id"]]
        assert steps["Review"]["group_id"] == group["id"] and steps["Done"]["group_id"] is None
        again = Workflow.objects.get(pk=created["id"])
        assert again.expedite_limit == 3
        assert export(api, again, "json").json() == exported

    def test_a_document_without_groups_or_expedite_limit_gets_none_and_the_default(self, api, workflow):
        response = import_(api, workflow.workspace, valid_document())
        [created] = response.json()["workflows"]
        assert created["groups"] == []
        assert Workflow.objects.get(pk=created["id"]).expedite_limit == 1

    def test_feeders_and_move_targets_map_to_the_new_step_ids(self, api, kanban):
        response = import_(api, kanban.workspace, export(api, kanban).content)
        steps = {s["name"]: s for s in response.json()["workflows"][0]["steps"]}
        new_ids = {s["id"] for s in steps.values()}
        old_ids = {str(pk) for pk in kanban.steps.values_list("pk", flat=True)}
        assert not new_ids & old_ids
        assert steps["In Progress"]["pull_from_step_id"] == steps["Backlog"]["id"]
        assert steps["Review"]["pull_from_step_id"] == steps["In Progress"]["id"]
        assert steps["Review"]["events"]["on_turn_complete"] == [
            {"type": "move_to_step", "config": {"step_id": steps["Backlog"]["id"]}}
        ]
        assert steps["Backlog"]["is_start_step"] is True

    def test_the_imported_board_enforces_its_limits_and_pulls(self, api, workflow):
        response = import_(api, workflow.workspace, valid_document())
        todo, doing, _ = response.json()["workflows"][0]["steps"]
        created = [api.post("/api/v1/tasks/", {"step_id": doing["id"], "title": t}, format="json") for t in "xyz"]
        assert [r.status_code for r in created] == [201, 201, 409]
        for title in "abc":  # Doing is full: they wait in To do
            api.post("/api/v1/tasks/", {"step_id": todo["id"], "title": title}, format="json")
        api.post(f"/api/v1/tasks/{created[0].json()['id']}/archive/")
        board = api.get(f"/api/v1/workflows/{todo['workflow_id']}/board/").json()
        assert [t["title"] for t in board["steps"][1]["tasks"]] == ["y", "a"]

    @pytest.mark.parametrize(
        ("document", "field"),
        [
            (
                valid_document(s1={"pull_from_step_position": 7}),
                "workflows[0].steps[1].pull_from_step_position",
            ),
            (
                valid_document(s1={"pull_from_step_position": 1}),
                "workflows[0].steps[1].pull_from_step_position",
            ),
            (
                valid_document(s0={"pull_from_step_position": 1}),
                "workflows[0].steps[0].pull_from_step_position",
            ),
            (
                valid_document(s1={"pull_from_step_position": "0"}),
                "workflows[0].steps[1].pull_from_step_position",
            ),
            (
                valid_document(s2={"events": {"on_enter": [{"type": "move_to_step", "config": {"step_position": 9}}]}}),
                "workflows[0].steps[2].events",
            ),
            (
                valid_document(s2={"events": {"on_enter": [{"type": "teleport"}]}}),
                "workflows[0].steps[2].events",
            ),
            (valid_document(s2={"events": {"on_sleep": []}}), "workflows[0].steps[2].events"),
            (
                valid_document(s2={"events": [{"type": "move_to_next"}]}),
                "workflows[0].steps[2].events",
            ),
            (
                valid_document(s2={"events": {"on_exit": [{"type": "move_to_step", "config": [0]}]}}),
                "workflows[0].steps[2].events",
            ),
            (
                valid_document(s2={"events": {"on_exit": [{"type": ["x"]}]}}),
                "workflows[0].steps[2].events",
            ),
            (valid_document(s1={"wip_limit": -1}), "workflows[0].steps[1].wip_limit"),
            (valid_document(s1={"on_full": "drop"}), "workflows[0].steps[1].on_full"),
            (valid_document(s1={"is_start_step": "yes"}), "workflows[0].steps[1].is_start_step"),
            (valid_document(s1={"color": "<script>"}), "workflows[0].steps[1].color"),
            (valid_document(s1={"name": ""}), "workflows[0].steps[1].name"),
            (valid_document(s2={"position": 5}), "workflows[0].steps"),
            (grouped_document({"wip_limit": 0}), "workflows[0].groups[0].wip_limit"),
            (grouped_document({"name": ""}), "workflows[0].groups[0].name"),
            (grouped_document({"step_positions": [1]}), "workflows[0].groups[0].step_positions"),
            (grouped_document({"step_positions": [1, 7]}), "workflows[0].groups[0].step_positions"),
            (grouped_document({"step_positions": [1, "2"]}), "workflows[0].groups[0].step_positions"),
            (grouped_document({"step_positions": [1, True]}), "workflows[0].groups[0].step_positions"),
            (grouped_document({"step_positions": 1}), "workflows[0].groups[0].step_positions"),
            (grouped_document(name="Second", step_positions=[0, 2]), "workflows[0].groups[1].step_positions"),
            (
                {**valid_document(), "workflows": [{**valid_document()["workflows"][0], "groups": "x"}]},
                "workflows[0].groups",
            ),
            (
                {**valid_document(), "workflows": [{**valid_document()["workflows"][0], "groups": [7]}]},
                "workflows[0].groups[0]",
            ),
            (
                {**valid_document(), "workflows": [{**valid_document()["workflows"][0], "expedite_limit": -1}]},
                "workflows[0].expedite_limit",
            ),
            ({**valid_document(), "type": "trello_board"}, "type"),
            ({**valid_document(), "version": 4}, "version"),
            ({**valid_document(), "version": True}, "version"),
            ({**valid_document(), "workflows": []}, "workflows"),
            ({**valid_document(), "workflows": [{"name": "No steps"}]}, "workflows[0].steps"),
            ({**valid_document(), "workflows": ["Kanban"]}, "workflows[0]"),
            (["not", "a", "mapping"], "document"),
        ],
    )
    def test_bad_documents_are_400_with_field_errors_and_persist_nothing(self, api, workflow, document, field):
        before = persisted()
        response = import_(api, workflow.workspace, document)
        assert response.status_code == 400
        body = response.json()
        assert body["code"] == "invalid"
        assert field in body["errors"], body
        assert persisted() == before

    def test_cycle_error_names_the_cycle(self, api, workflow):
        document = valid_document(s0={"pull_from_step_position": 2}, s2={"pull_from_step_position": 1})
        body = import_(api, workflow.workspace, document).json()
        assert (
            "This feeder would form a cycle of pulls."
            in body["errors"]["workflows[0].steps[0].pull_from_step_position"]
        )

    def test_all_or_nothing_when_a_later_workflow_is_bad(self, api, workflow):
        document = valid_document()
        bad = {
            "name": "Second",
            "steps": [{"name": "Only", "position": 0, "pull_from_step_position": 0}],
        }
        document["workflows"].append(bad)
        before = persisted()
        response = import_(api, workflow.workspace, document)
        assert response.status_code == 400
        assert set(response.json()["errors"]) == {"workflows[1].steps[0].pull_from_step_position"}
        assert persisted() == before

    def test_malformed_yaml_names_line_and_column(self, api, workflow):
        body = "version: 1\ntype: kandev_workflow\nworkflows: [\n  {name: x\n"
        response = import_(api, workflow.workspace, body)
        assert response.status_code == 400
        assert response.json()["code"] == "parse_error"
        assert response.json()["detail"].startswith("Malformed YAML at line 5, column 1:")

    def test_malformed_json_names_line_and_column(self, api, workflow):
        response = import_(api, workflow.workspace, '{"version": 1,\n  "type": }', "application/json")
        assert response.status_code == 400
        assert response.json()["detail"] == "Malformed JSON at line 2, column 11: Expecting value."

    def test_anchors_and_aliases_are_refused(self, api, workflow):
        bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        bomb += "".join(
            f"{n}: &{n} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"
            for p, n in zip("abcdefgh", "bcdefghi", strict=True)
        )
        response = import_(api, workflow.workspace, bomb)
        assert response.status_code == 400
        assert response.json() == {
            "code": "parse_error",
            "detail": "Malformed YAML at line 1, column 4: anchors and aliases are not allowed.",
        }

    @pytest.mark.parametrize("content_type", ["application/yaml", "application/json"])
    @pytest.mark.parametrize("depth", [30, 5000])
    def test_deep_nesting_is_refused(self, api, workflow, content_type, depth):
        response = import_(api, workflow.workspace, "[" * depth + "]" * depth, content_type)
        assert response.status_code == 400
        assert response.json()["code"] == "parse_error"
        assert "nested deeper than" in response.json()["detail"]

    def test_huge_numbers_are_a_parse_error_not_a_crash(self, api, workflow):
        response = import_(api, workflow.workspace, "version: " + "9" * 10_000)
        assert response.status_code == 400
        assert response.json()["code"] == "parse_error"

    @pytest.mark.parametrize("content_type", IMPORT_TYPES)
    def test_bodies_over_the_import_size_are_413(self, api, workflow, content_type, settings):
        settings.KANDEV_MAX_IMPORT_BYTES = 1024 * 1024
        body = b"#" + b" " * (1024 * 1024)
        response = import_(api, workflow.workspace, body, content_type)
        assert response.status_code == 413
        assert response.json() == {
            "code": "payload_too_large",
            "detail": "The document is larger than 1024 KiB.",
        }

    def test_a_body_of_the_import_size_is_read(self, api, workflow, settings):
        settings.KANDEV_MAX_IMPORT_BYTES = 1024 * 1024
        body = yaml.safe_dump(valid_document()).encode()
        body += b"#" + b" " * (1024 * 1024 - len(body) - 2) + b"\n"
        assert len(body) == 1024 * 1024
        assert import_(api, workflow.workspace, body).status_code == 201

    def test_other_content_types_are_415(self, api, workflow):
        response = import_(api, workflow.workspace, "version: 1", "text/plain")
        assert response.status_code == 415
        assert response.json()["code"] == "unsupported_media_type"

    def test_viewers_get_403_and_non_members_404(self, workflow):
        viewer = member_client(workflow.workspace, Role.VIEWER)
        assert import_(viewer, workflow.workspace, valid_document()).status_code == 403
        outsider = member_client(WorkspaceFactory(), Role.OWNER)
        response = import_(outsider, workflow.workspace, valid_document())
        assert response.status_code == 404
        assert persisted() == (1, 0, 0)

    def test_members_may_import(self, workflow):
        member = member_client(workflow.workspace, Role.MEMBER)
        assert import_(member, workflow.workspace, valid_document()).status_code == 201


def test_the_step_api_refuses_malformed_events_with_400(api, board):
    _, doing, _ = board
    for events in (
        [{"type": "move_to_next"}],
        {"on_exit": [{"type": "move_to_step", "config": 3}]},
    ):
        response = api.patch(f"/api/v1/steps/{doing.pk}/", {"events": events}, format="json")
        assert response.status_code == 400
        assert "events" in response.json()["errors"]


class TestCommands:
    def test_export_then_import_by_slug_round_trips(self, kanban, tmp_path):
        out = io.StringIO()
        call_command("export_workflow", str(kanban.pk), stdout=out)
        path = tmp_path / "board.yaml"
        path.write_text(out.getvalue())
        result = io.StringIO()
        call_command("import_workflow", kanban.workspace.slug, str(path), stdout=result)
        copy = Workflow.objects.filter(name="Team board").exclude(pk=kanban.pk).get()
        assert result.getvalue() == f'Imported "Team board" ({copy.pk}) with 4 steps and 0 tasks.\n'
        again = io.StringIO()
        call_command("export_workflow", str(copy.pk), stdout=again)
        assert again.getvalue() == out.getvalue()

    def test_json_export_and_import_by_workspace_id(self, kanban, tmp_path):
        out = io.StringIO()
        call_command("export_workflow", str(kanban.pk), "--format", "json", stdout=out)
        path = tmp_path / "board.json"
        path.write_text(out.getvalue())
        call_command("import_workflow", str(kanban.workspace.pk), str(path), stdout=io.StringIO())
        copy = Workflow.objects.filter(name="Team board").exclude(pk=kanban.pk).get()
        assert export_json(copy) == json.loads(out.getvalue())

    def test_a_bad_document_is_a_command_error_and_persists_nothing(self, workflow, tmp_path):
        path = tmp_path / "bad.yaml"
        path.write_text(yaml.safe_dump(valid_document(s1={"pull_from_step_position": 1})))
        before = persisted()
        with pytest.raises(CommandError) as error:
            call_command("import_workflow", workflow.workspace.slug, str(path))
        assert "workflows[0].steps[1].pull_from_step_position: A step cannot pull from itself." in str(error.value)
        assert persisted() == before

    def test_unknown_workflow_and_workspace(self, workflow, tmp_path):
        with pytest.raises(CommandError, match="No workflow"):
            call_command("export_workflow", "not-an-id")
        with pytest.raises(CommandError, match="No workspace"):
            call_command("import_workflow", "nowhere", str(tmp_path / "x.yaml"))


def export_json(workflow):
    out = io.StringIO()
    call_command("export_workflow", str(workflow.pk), "--format", "json", stdout=out)
    return json.loads(out.getvalue())
