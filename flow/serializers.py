"""Query parameters of the flow endpoints, and their response shapes
for the OpenAPI schema."""

import secrets
from datetime import UTC, date, datetime, timedelta

from django.utils import timezone
from rest_framework import serializers

from boards.models import ClassOfService
from common.pagination import Pagination
from flow import forecast as forecasting
from flow.figures import Window
from workflows.config_history import BOARD_FIELDS, GROUP_FIELDS, PERSON_FIELDS, STEP_FIELDS
from workflows.models import Lane, LimitScope

PAGE_SIZE, MAX_PAGE_SIZE = Pagination.page_size, Pagination.max_page_size
MAX_WINDOW = timedelta(days=366)
DEFAULT_WINDOW = timedelta(days=30)
MAX_EXPERIMENT_DAYS = 183  # twice that, the history an experiment reads, is within MAX_WINDOW
# No board has history outside these, and the window's arithmetic (a default `from` 30 days
# before `to`, points and buckets up to `to`) stays far from the ends of the calendar.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 1, 1, tzinfo=UTC)


class InstantField(serializers.DateTimeField):
    """An ISO 8601 instant from EARLIEST to LATEST."""

    default_error_messages = {"out_of_range": "Must be from 1970-01-01 to 9999-01-01 (UTC)."}

    def to_internal_value(self, value):
        instant = super().to_internal_value(value)
        if not EARLIEST <= instant <= LATEST:
            self.fail("out_of_range")
        return instant


class WindowParams(serializers.Serializer):
    """`from` / `to` (ISO 8601), by default the last 30 days; at most 366 days."""

    to = InstantField(required=False)

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = InstantField(required=False)  # a keyword: not an attribute
        return fields

    def validate(self, attrs):
        end = attrs.get("to") or timezone.now()
        start = attrs.get("from") or end - DEFAULT_WINDOW
        if start >= end:
            raise serializers.ValidationError({"from": ["Must be before `to`."]})
        if end - start > MAX_WINDOW:
            message = ["The window from `from` to `to` is at most 366 days."]
            raise serializers.ValidationError({"from": message, "to": message})
        return {**attrs, "window": Window(start, end)}


class LaneParams(WindowParams):
    """The window, and `lane`: the tasks in that lane of the board now (the current-lane
    rule), or every task without it. The view gives the board as `workflow` in the context."""

    lane = serializers.UUIDField(required=False)

    def validate_lane(self, value):
        if not Lane.objects.filter(workflow=self.context["workflow"], pk=value).exists():
            raise serializers.ValidationError("No such lane in this workflow.")
        return value


class CfdParams(LaneParams):
    interval = serializers.ChoiceField(choices=["hour", "day"], default="day")


class ThroughputParams(LaneParams):
    interval = serializers.ChoiceField(choices=["day", "week"], default="day")


class ForecastParams(WindowParams):
    """`items` or `until` (one of them), over the throughput of the whole days of the window."""

    items = serializers.IntegerField(required=False, min_value=1, max_value=forecasting.MAX_ITEMS)
    until = serializers.DateField(required=False)
    trials = serializers.IntegerField(
        required=False, min_value=forecasting.MIN_TRIALS, max_value=forecasting.MAX_TRIALS
    )
    seed = serializers.IntegerField(required=False, min_value=0, max_value=2**63 - 1)

    def validate(self, attrs):
        attrs = super().validate(attrs)
        if ("items" in attrs) == ("until" in attrs):
            message = ["Give either `items` (how long for N tasks) or `until` (how many tasks by a date)."]
            raise serializers.ValidationError({"items": message, "until": message})
        today = utc_today()
        if "until" in attrs and not 0 < (attrs["until"] - today).days <= forecasting.MAX_DAYS:
            raise serializers.ValidationError(
                {"until": [f"Must be after today ({today}) and at most {forecasting.MAX_DAYS:,} days after it."]}
            )
        if attrs["window"].end - attrs["window"].start < timedelta(days=1):
            message = ["The history window must hold at least one whole day."]
            raise serializers.ValidationError({"from": message, "to": message})
        return {
            **attrs,
            "today": today,
            "trials": attrs.get("trials", forecasting.MIN_TRIALS),
            "seed": attrs["seed"] if "seed" in attrs else secrets.randbits(63),
        }


def utc_today() -> date:
    return timezone.now().astimezone(UTC).date()


class StepRef(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    wip_limit = serializers.IntegerField()


class CfdStep(StepRef):
    kind = serializers.ChoiceField(choices=["backlog", "active", "done"])


class CfdPoint(serializers.Serializer):
    at = serializers.DateTimeField()
    arrived = serializers.DictField(
        child=serializers.IntegerField(), help_text="{step_id: tasks that have arrived in the step or a later one}"
    )


class CfdSerializer(serializers.Serializer):
    steps = CfdStep(many=True)
    points = CfdPoint(many=True)


class WipPoint(serializers.Serializer):
    at = serializers.DateTimeField()
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="{step_id: admitted tasks}")
    queued = serializers.DictField(child=serializers.IntegerField(), help_text="{step_id: queued tasks}")
    limits = serializers.DictField(
        child=serializers.IntegerField(), help_text="{step_id: its WIP limit in force at that instant (0: none)}"
    )


class WipSerializer(serializers.Serializer):
    steps = StepRef(many=True)
    points = WipPoint(many=True)


class Percentiles(serializers.Serializer):
    def get_fields(self):
        return {p: serializers.FloatField(allow_null=True) for p in ("50", "85", "95")}


class CycleItem(serializers.Serializer):
    task_id = serializers.UUIDField()
    title = serializers.CharField()
    lane_id = serializers.UUIDField(allow_null=True, help_text="The lane the task is in now (null: deleted)")
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField()
    cycle_seconds = serializers.FloatField(allow_null=True)
    lead_seconds = serializers.FloatField()
    blocked_seconds = serializers.FloatField()


class LaneCycles(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    count = serializers.IntegerField(help_text="Of the items, those in this lane now")
    percentiles = Percentiles(help_text="Of their cycle times, seconds")


class CycleTimesSerializer(serializers.Serializer):
    items = CycleItem(many=True)
    percentiles = Percentiles()
    lanes = LaneCycles(many=True, help_text="Every lane of the board, in board order")


class Bucket(serializers.Serializer):
    start = serializers.DateTimeField()
    count = serializers.IntegerField()


class ThroughputSerializer(serializers.Serializer):
    buckets = Bucket(many=True)


class AgingItem(serializers.Serializer):
    task_id = serializers.UUIDField()
    step_id = serializers.UUIDField()
    age_seconds = serializers.FloatField(allow_null=True)
    percentile_band = serializers.ChoiceField(choices=["<50", "50-85", "85-95", ">95"], allow_null=True)


class AgingSerializer(serializers.Serializer):
    items = AgingItem(many=True)
    percentiles = Percentiles(help_text="Of the cycle times finished in the window: the bands' edges.")


class Cause(serializers.Serializer):
    event_id = serializers.IntegerField(allow_null=True)
    kind = serializers.ChoiceField(choices=["forced", "limit_lowered"])
    actor = serializers.CharField(allow_null=True)
    reason = serializers.CharField()


class Breach(serializers.Serializer):
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True, help_text="null while it lasts")
    max_over = serializers.IntegerField()
    causes = Cause(many=True)


class LimitRow(serializers.Serializer):
    scope = serializers.ChoiceField(choices=["step", "group", "lane", "cell", "person"])
    id = serializers.CharField(
        help_text="The step's, group's or lane's id; a cell's is \"<lane id>:<step id>\"; a person's their user id"
    )
    name = serializers.CharField()
    limit = serializers.IntegerField()
    at_limit_ratio = serializers.FloatField()
    over_limit_ratio = serializers.FloatField()
    never_reached = serializers.BooleanField()
    breaches = Breach(many=True)


class LimitsSerializer(serializers.Serializer):
    limits = LimitRow(many=True)


class QueueStep(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    waits = serializers.IntegerField(help_text="Waits in the step's queue that ended in the window")
    wait_percentiles = Percentiles(help_text="Seconds")
    queued = serializers.IntegerField()
    promoted = serializers.IntegerField()
    pulled = serializers.IntegerField()


class QueuesSerializer(serializers.Serializer):
    steps = QueueStep(many=True)


class ForecastHistory(serializers.Serializer):
    def get_fields(self):
        return {
            "from": serializers.DateTimeField(),
            "to": serializers.DateTimeField(),
            "days": serializers.IntegerField(help_text="Whole days of history drawn from"),
            "finished": serializers.IntegerField(),
            "throughput_per_day": serializers.FloatField(),
        }


class ForecastBar(serializers.Serializer):
    value = serializers.IntegerField(help_text="Days (`items`) or tasks (`until`)")
    trials = serializers.IntegerField()


class ForecastDates(serializers.Serializer):
    def get_fields(self):
        return {p: serializers.DateField(allow_null=True) for p in ("50", "85", "95")}


class ForecastPercentiles(serializers.Serializer):
    def get_fields(self):
        return {p: serializers.IntegerField(allow_null=True) for p in ("50", "85", "95")}


class ForecastSerializer(serializers.Serializer):
    items = serializers.IntegerField(allow_null=True)
    until = serializers.DateField(allow_null=True)
    start = serializers.DateField(help_text="Day 0 (today, UTC): the forecast counts the whole days after it")
    trials = serializers.IntegerField()
    seed = serializers.IntegerField(help_text="Give it back as `?seed=` to get the same answer")
    history = ForecastHistory()
    percentiles = ForecastPercentiles(
        help_text="As confidence: with `items`, 85% of trials finished within `85` days (null: not within"
        " five years); with `until`, 85% of trials finished at least `85` tasks"
    )
    dates = ForecastDates(allow_null=True, help_text="With `items`: the date of each percentile")
    beyond = serializers.IntegerField(help_text="Trials not done within five years (with `items`)")
    histogram = ForecastBar(many=True)


class SleRow(serializers.Serializer):
    class_of_service = serializers.ChoiceField(choices=ClassOfService.choices)
    days = serializers.IntegerField(allow_null=True, help_text="85% finished within this many days (rounded up)")
    cycle_seconds = serializers.FloatField(allow_null=True, help_text="The 85th percentile itself")
    percentile = serializers.IntegerField()
    sample = serializers.IntegerField(help_text="Finished tasks with a cycle time in the window")
    set_by = serializers.ChoiceField(choices=["history", "owner"], help_text="Who set `days`: an owner, or the history")


class SleSerializer(serializers.Serializer):
    sles = SleRow(many=True)


class AdviceRow(serializers.Serializer):
    scope = serializers.ChoiceField(choices=["step", "group", "person"])
    id = serializers.JSONField(help_text="The step's or group's id (UUID), or the person's user id (integer)")
    name = serializers.CharField(help_text="The step's or group's name, or the person's username")
    limit = serializers.IntegerField(help_text="The limit now (0: none)")
    avg_wip = serializers.FloatField(
        help_text="L: admitted tasks in the scope (a person: theirs in active steps), averaged over the window"
    )
    throughput_per_day = serializers.FloatField(help_text="λ: tasks that left the scope per day")
    avg_cycle_days = serializers.FloatField(allow_null=True, help_text="W = L / λ: days a task spent in the scope")
    suggested_limit = serializers.IntegerField(allow_null=True)
    arithmetic = serializers.CharField()
    at_limit_ratio = serializers.FloatField(help_text="The share of the window at the limit in force then")
    never_reached = serializers.BooleanField(help_text="The limit in force was never reached in the window")
    always_at_limit = serializers.BooleanField(help_text="At or over the limit in force through the whole window")


class AdviceSerializer(serializers.Serializer):
    sle_days = serializers.IntegerField(allow_null=True, help_text="The standard class's SLE from the window")
    avg_cycle_days = serializers.FloatField(allow_null=True)
    limits = AdviceRow(many=True)


class BlockerRow(serializers.Serializer):
    reason = serializers.CharField(help_text="The most common spelling of the cluster (case and spacing aside)")
    count = serializers.IntegerField()
    blocked_days = serializers.FloatField(help_text="Blocked time inside the window")
    median_seconds = serializers.FloatField(allow_null=True, help_text="Of the blocks that ended")
    ongoing = serializers.IntegerField()


class BlockerTypeRow(serializers.Serializer):
    type_id = serializers.UUIDField(allow_null=True, help_text="null: the blocks given no type")
    name = serializers.CharField(allow_null=True, help_text="The name its latest block recorded")
    count = serializers.IntegerField()
    held_days = serializers.FloatField(help_text="Blocked time inside the window")
    median_seconds = serializers.FloatField(allow_null=True, help_text="Of the blocks that ended")
    ongoing = serializers.IntegerField()
    capacity_days = serializers.FloatField(help_text="Of held_days, the time the task held a slot of an active step")
    capacity_share = serializers.FloatField(allow_null=True, help_text="capacity_days / occupied_days")


class BlockersSerializer(serializers.Serializer):
    blockers = BlockerRow(many=True)
    types = BlockerTypeRow(many=True)
    occupied_days = serializers.FloatField(help_text="Slot-days the active steps held in the window")


class EfficiencyItem(serializers.Serializer):
    task_id = serializers.UUIDField()
    title = serializers.CharField()
    finished_at = serializers.DateTimeField()
    lead_seconds = serializers.FloatField()
    active_seconds = serializers.FloatField(help_text="Admitted in active steps before it finished")
    blocked_seconds = serializers.FloatField(help_text="Blocked inside its cycle")
    working_seconds = serializers.FloatField(help_text="active - blocked")
    waiting_seconds = serializers.FloatField(help_text="lead - working")
    efficiency = serializers.FloatField(allow_null=True, help_text="working / lead")


class EfficiencySerializer(serializers.Serializer):
    items = EfficiencyItem(many=True)
    efficiency = serializers.FloatField(allow_null=True, help_text="All working time over all lead time")
    percentiles = Percentiles()


class ExperimentParams(serializers.Serializer):
    """`days`: the limit changes of the last N days; the spans before them reach up to N days
    further back, so the history read is at most 366 days."""

    days = serializers.IntegerField(required=False, min_value=1, max_value=MAX_EXPERIMENT_DAYS, default=30)

    def validate(self, attrs):
        now = timezone.now()
        return {**attrs, "now": now, "window": Window(now - 2 * timedelta(days=attrs["days"]), now)}


class ExperimentChange(serializers.Serializer):
    scope = serializers.ChoiceField(choices=LimitScope.choices)
    subject_id = serializers.CharField(
        help_text="The step's, group's, lane's, cell's or board's id, or the person's user id"
    )
    name = serializers.CharField(help_text="The subject's name at the time")
    field = serializers.ChoiceField(choices=["wip_limit", "expedite_limit"])
    before = serializers.IntegerField()
    after = serializers.IntegerField()


class ExperimentSide(serializers.Serializer):
    to = serializers.DateTimeField(help_text="The span's end (before the change: not included)")
    finished = serializers.IntegerField(help_text="Tasks first finished in the span: the throughput's sample")
    throughput_per_day = serializers.FloatField(allow_null=True)
    cycle_sample = serializers.IntegerField(help_text="Of those, the tasks with a cycle time (they were active)")
    cycle_percentiles = Percentiles(help_text="Cycle time in seconds; null without a sample")

    def get_fields(self):
        return {"from": serializers.DateTimeField(help_text="The span's start"), **super().get_fields()}


class Experiment(serializers.Serializer):
    at = serializers.DateTimeField(help_text="When the limits changed")
    actor = serializers.CharField(allow_null=True, help_text="Username")
    changes = ExperimentChange(many=True)
    span_days = serializers.FloatField(help_text="Each side's span: the time since the change, at most `days`")
    before = ExperimentSide()
    after = ExperimentSide()


class ExperimentsSerializer(serializers.Serializer):
    days = serializers.IntegerField()
    experiments = Experiment(many=True)


class LimitChangesParams(WindowParams):
    """The window, and the page of its changes."""

    page = serializers.IntegerField(required=False, min_value=1, default=1)
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=MAX_PAGE_SIZE, default=PAGE_SIZE)


class LimitChange(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    actor = serializers.CharField(allow_null=True, help_text="Username; null for a starting row or a system change")
    scope = serializers.ChoiceField(choices=LimitScope.choices)
    subject_id = serializers.CharField(help_text="The step's, group's or board's id, or the person's user id")
    name = serializers.CharField(help_text="The subject's name at the time")
    field = serializers.ChoiceField(choices=sorted({*STEP_FIELDS, *GROUP_FIELDS, *PERSON_FIELDS, *BOARD_FIELDS}))
    before = serializers.JSONField(allow_null=True, help_text="null: the subject was created")
    after = serializers.JSONField(allow_null=True, help_text="null: the subject was deleted")


class LimitChangesSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = LimitChange(many=True)


MAX_SLE_DAYS = 3650


class ServiceLevelParams(serializers.Serializer):
    """An owner's service level for one class of service; `days` null: the history's again."""

    class_of_service = serializers.ChoiceField(choices=ClassOfService.choices)
    days = serializers.IntegerField(min_value=1, max_value=MAX_SLE_DAYS, allow_null=True)
