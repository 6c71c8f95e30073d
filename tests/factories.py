import factory
from django.contrib.auth import get_user_model

from boards.structure import group_create
from workflows.models import Membership, Role, Workflow, WorkflowStep, Workspace


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests-only")


class WorkspaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Workspace

    name = factory.Sequence(lambda n: f"Team {n}")
    slug = factory.Sequence(lambda n: f"team-{n}")


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    workspace = factory.SubFactory(WorkspaceFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.MEMBER


class WorkflowFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Workflow

    workspace = factory.SubFactory(WorkspaceFactory)
    name = factory.Sequence(lambda n: f"Board {n}")


class StepFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WorkflowStep

    workflow = factory.SubFactory(WorkflowFactory)
    name = factory.Sequence(lambda n: f"Step {n}")
    position = factory.LazyAttribute(lambda o: o.workflow.steps.count())


def development_board(workflow, owner):
    """Backlog -> Build (pulls from Backlog) -> Review (limit 2) -> Done; Build and Review
    share the group "Development", limit 2. Returns (backlog, build, review, done, group)."""
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True, kind="backlog")
    build = StepFactory(workflow=workflow, name="Build", position=1, pull_from_step=backlog)
    review = StepFactory(workflow=workflow, name="Review", position=2, wip_limit=2)
    done = StepFactory(workflow=workflow, name="Done", position=3, kind="done")
    group = group_create(
        workflow=workflow, actor=owner, name="Development", wip_limit=2, step_ids=[build.pk, review.pk]
    )
    return backlog, build, review, done, group
