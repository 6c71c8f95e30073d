"""Comments on tasks: who may write them, what they mention, and that the card's count and
the board's live message follow them in the same change."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from boards import admission
from boards.comments import comment_create, comment_edit, mentioned_names
from boards.models import Comment, Task
from boards.signals import comment_posted
from tests.clients import api_for
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from workflows.models import Role, Workflow


def version(workflow) -> int:
    return Workflow.objects.get(pk=workflow.pk).version


def person(workflow, username, role=Role.MEMBER):
    user = UserFactory(username=username)
    MembershipFactory(workspace=workflow.workspace, user=user, role=role)
    return user


@pytest.fixture
def task(board, make_task):
    return make_task(board[0], "Write the launch post")


@pytest.fixture
def posted(django_capture_on_commit_callbacks):
    """The `comment_posted` signals an operation sends, run to its commit."""

    def run(operation):
        sent = []

        def receiver(sender, comment, mentioned, **kwargs):
            sent.append((comment.body, sorted(u.username for u in mentioned)))

        comment_posted.connect(receiver)
        try:
            with django_capture_on_commit_callbacks(execute=True):
                result = operation()
        finally:
            comment_posted.disconnect(receiver)
        return result, sent

    return run


# --- writing, reading ----------------------------------------------------------------------


def test_a_member_comments_and_everyone_reads_it_oldest_first(task, workflow, api):
    viewer = person(workflow, "vera", Role.VIEWER)
    first = api.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": "Draft is **ready**"}, format="json")
    second = api.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": "Reviewed"}, format="json")
    assert (first.status_code, second.status_code) == (201, 201)
    body = first.json()
    assert set(body) == {"id", "task_id", "author", "body", "created_at", "edited_at", "mentions"}
    assert (body["task_id"], body["author"], body["body"], body["edited_at"]) == (
        str(task.pk),
        "olivia",
        "Draft is **ready**",
        None,
    )

    listed = api_for(viewer).get(f"/api/v1/tasks/{task.pk}/comments/").json()

    assert listed["count"] == 2
    assert [c["body"] for c in listed["results"]] == ["Draft is **ready**", "Reviewed"]
    assert api.get(f"/api/v1/tasks/{task.pk}/").json()["comment_count"] == 2


def test_a_viewer_cannot_comment_and_nothing_is_written(task, workflow):
    viewer = api_for(person(workflow, "vera", Role.VIEWER))
    before = version(workflow)

    response = viewer.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": "me too"}, format="json")

    assert response.status_code == 403
    assert (Comment.objects.count(), version(workflow)) == (0, before)


def test_a_stranger_gets_404s_that_say_nothing(task, api):
    comment = api.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": "mine"}, format="json").json()
    stranger = api_for(UserFactory(username="sam"))

    responses = [
        stranger.get(f"/api/v1/tasks/{task.pk}/comments/"),
        stranger.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": "hi"}, format="json"),
        stranger.patch(f"/api/v1/comments/{comment['id']}/", {"body": "hi"}, format="json"),
        stranger.delete(f"/api/v1/comments/{comment['id']}/"),
        api.get("/api/v1/tasks/00000000-0000-0000-0000-000000000000/comments/"),
        api.delete("/api/v1/comments/00000000-0000-0000-0000-000000000000/"),
    ]

    assert [r.status_code for r in responses] == [404] * 6
    assert {r.json()["detail"] for r in responses} == {responses[0].json()["detail"]}
    assert Comment.objects.get().body == "mine"


@pytest.mark.parametrize("body", ["", "   ", "x" * 10_001, "bell \x07", None, ["a list"]])
def test_a_bad_body_is_a_400_on_its_field(task, workflow, api, body):
    before = version(workflow)

    response = api.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": body}, format="json")

    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["body"]
    assert (Comment.objects.count(), version(workflow)) == (0, before)


def test_the_body_is_kept_as_written_for_the_sanitizer_of_every_viewer(task, api):
    """The server stores Markdown; every page renders it through the descriptions' sanitizer."""
    body = "<script>alert(1)</script> [x](javascript:alert(2))"
    created = api.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": body}, format="json").json()
    assert created["body"] == body


# --- edit and delete -----------------------------------------------------------------------


def test_only_its_author_edits_a_comment_and_the_edit_is_dated(task, workflow, api):
    other = api_for(person(workflow, "max"))
    other_owner = api_for(person(workflow, "orla", Role.OWNER))
    comment = api.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": "first"}, format="json").json()

    refused = [
        other.patch(f"/api/v1/comments/{comment['id']}/", {"body": "hijack"}, format="json"),
        other_owner.patch(f"/api/v1/comments/{comment['id']}/", {"body": "hijack"}, format="json"),
    ]
    edited = api.patch(f"/api/v1/comments/{comment['id']}/", {"body": "second"}, format="json")

    assert [r.status_code for r in refused] == [403, 403]
    assert edited.status_code == 200
    assert edited.json()["body"] == "second"
    assert edited.json()["edited_at"] is not None
    assert edited.json()["created_at"] == comment["created_at"]


def test_its_author_or_an_owner_deletes_a_comment_and_the_count_follows(task, workflow, api):
    member = person(workflow, "max")
    client = api_for(member)
    mine = client.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": "mine"}, format="json").json()
    theirs = api.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": "the owner's"}, format="json").json()

    refused = client.delete(f"/api/v1/comments/{theirs['id']}/")
    by_author = client.delete(f"/api/v1/comments/{mine['id']}/")
    assert Task.objects.get(pk=task.pk).comment_count == 1
    by_owner_of_own = api.delete(f"/api/v1/comments/{theirs['id']}/")

    assert (refused.status_code, by_author.status_code, by_owner_of_own.status_code) == (403, 204, 204)
    assert Task.objects.get(pk=task.pk).comment_count == 0
    assert not Comment.objects.exists()


def test_an_owner_deletes_a_members_comment(task, workflow, api):
    client = api_for(person(workflow, "max"))
    theirs = client.post(f"/api/v1/tasks/{task.pk}/comments/", {"body": "spam"}, format="json").json()

    assert api.delete(f"/api/v1/comments/{theirs['id']}/").status_code == 204
    assert not Comment.objects.exists()


def test_deleting_a_task_deletes_its_comments(task, owner):
    comment_create(task=task, author=owner, body="gone with it")

    admission.task_delete(task=task, actor=owner)

    assert not Comment.objects.exists()


# --- mentions ------------------------------------------------------------------------------


def test_mention_names_are_read_from_the_text():
    text = "@ana and @Bob.Smith, mail ana@example.com, @ana again, end @cy."
    assert mentioned_names(text) == ["ana", "bob.smith", "cy"]


def test_only_the_workspaces_members_are_mentioned(task, workflow, owner, posted):
    person(workflow, "ana")
    person(workflow, "vic", Role.VIEWER)
    UserFactory(username="outsider")
    other = WorkflowFactory()
    MembershipFactory(workspace=other.workspace, user=UserFactory(username="elsewhere"))

    created, sent = posted(
        lambda: comment_create(task=task, author=owner, body="@ANA @vic @outsider @elsewhere @nobody look")
    )

    assert created["mentions"] == ["ana", "vic"]
    assert sent == [("@ANA @vic @outsider @elsewhere @nobody look", ["ana", "vic"])]
    assert sorted(Comment.objects.get().mentions.values_list("username", flat=True)) == ["ana", "vic"]


def test_an_edit_tells_only_the_newly_mentioned(task, workflow, owner, posted):
    person(workflow, "ana")
    person(workflow, "bea")
    comment, _ = posted(lambda: comment_create(task=task, author=owner, body="@ana look"))
    comment = Comment.objects.get(pk=comment["id"])
    comment.member_role = Role.OWNER

    edited, sent = posted(lambda: comment_edit(comment=comment, actor=owner, body="@ana and @bea look"))
    unchanged, quiet = posted(lambda: comment_edit(comment=comment, actor=owner, body="@ana and @bea look"))
    dropped, none = posted(lambda: comment_edit(comment=comment, actor=owner, body="@bea only"))

    assert edited["mentions"] == ["ana", "bea"]
    assert sent == [("@ana and @bea look", ["bea"])]
    assert (unchanged["edited_at"], quiet) == (edited["edited_at"], [])
    assert (dropped["mentions"], none) == (["bea"], [])


# --- the card and the live message ---------------------------------------------------------


def test_a_comment_is_one_board_change_whose_message_carries_the_task_and_count(task, owner, broadcasts):
    before = version(task.workflow)

    messages = broadcasts(task.workflow, lambda: comment_create(task=task, author=owner, body="hello"))

    assert version(task.workflow) == before + 1
    (message,) = messages
    assert (message["type"], message["version"]) == ("comment.created", before + 1)
    assert message["comment"]["body"] == "hello"
    assert message["task"]["comment_count"] == 1
    assert [t["comment_count"] for t in message["tasks"]] == [1]


def test_edits_and_deletes_are_announced(task, owner, broadcasts, api):
    created = comment_create(task=task, author=owner, body="hello")
    comment_id = created["id"]

    edited = broadcasts(
        task.workflow, lambda: api.patch(f"/api/v1/comments/{comment_id}/", {"body": "hi"}, format="json")
    )
    deleted = broadcasts(task.workflow, lambda: api.delete(f"/api/v1/comments/{comment_id}/"))

    assert [(m["type"], m["comment"]["body"]) for m in edited] == [("comment.updated", "hi")]
    assert [(m["type"], m["comment"], m["task"]["comment_count"]) for m in deleted] == [
        ("comment.deleted", {"id": comment_id, "task_id": str(task.pk)}, 0)
    ]


def test_the_board_reads_counts_without_a_query_per_task(board, make_task, owner, api):
    backlog = board[0]

    def board_queries():
        with CaptureQueriesContext(connection) as queries:
            response = api.get(f"/api/v1/workflows/{backlog.workflow_id}/board/")
        assert response.status_code == 200
        return len(queries), response.json()

    first = make_task(backlog, "one")
    comment_create(task=first, author=owner, body="a")
    few, _ = board_queries()
    for n in range(5):
        comment_create(task=make_task(backlog, f"more {n}"), author=owner, body="b")
    many, read = board_queries()

    assert few == many
    counts = {t["title"]: t["comment_count"] for step in read["steps"] for t in step["tasks"]}
    assert counts["one"] == 1
    assert counts["more 4"] == 1
