import factory
from django.contrib.auth import get_user_model

from workflows.models import Membership, Role, StepGroup, StepKind, Workflow, WorkflowStep, Workspace, create_first_lane


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
        skip_postgeneration_save = True

    workspace = factory.SubFactory(WorkspaceFactory)
    name = factory.Sequence(lambda n: f"Board {n}")

    @factory.post_generation
    def first_lane(workflow, create, extracted, **kwargs):
        """Every board has a lane, as every door that makes one gives it."""
        if create:
            create_first_lane(workflow)


class StepFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WorkflowStep

    workflow = factory.SubFactory(WorkflowFactory)
    name = factory.Sequence(lambda n: f"Step {n}")
    position = factory.LazyAttribute(lambda o: o.workflow.steps.count())


def board(workflow=None, *, active=None, pulls="first", done_limit=0, group=None, **workflow_fields):
    """The steps of a board, built directly (a layout, not a change to announce):
    Backlog (the start step, kind backlog) -> the `active` steps, {name: WIP limit (0: none)},
    by default In Progress (limit 2) -> Done (kind done, limited by `done_limit`).
    `pulls` says which active steps pull from the step before them: "first" (from Backlog),
    "each" (a chain) or "none". `group`, a (name, WIP limit) pair, puts the active steps in
    one step group. On `workflow`, or on a new one made of `workflow_fields`.
    Returns the steps in board order, then the group when there is one."""
    workflow = workflow or WorkflowFactory(**workflow_fields)
    active = {"In Progress": 2} if active is None else active
    steps = [StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True, kind=StepKind.BACKLOG)]
    for n, (name, limit) in enumerate(active.items()):
        feeder = steps[-1] if pulls == "each" or (pulls == "first" and n == 0) else None
        steps.append(StepFactory(workflow=workflow, name=name, position=n + 1, wip_limit=limit, pull_from_step=feeder))
    steps.append(
        StepFactory(workflow=workflow, name="Done", position=len(steps), wip_limit=done_limit, kind=StepKind.DONE)
    )
    if group is None:
        return tuple(steps)
    name, limit = group
    made = StepGroup.objects.create(workflow=workflow, name=name, wip_limit=limit)
    WorkflowStep.objects.filter(pk__in=[s.pk for s in steps[1:-1]]).update(group=made)
    for step in steps[1:-1]:
        step.group = made
    return (*steps, made)


def development_board(workflow):
    """Backlog -> Build (pulls from Backlog) -> Review (limit 2) -> Done; Build and Review
    share the group "Development", limit 2. Returns (backlog, build, review, done, group)."""
    return board(workflow, active={"Build": 0, "Review": 2}, group=("Development", 2))
