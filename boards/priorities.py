"""The one list of priorities. A module of its own, free of models, so clients that run
without Django's app registry (the stress driver) read the same list."""

from django.db import models


class Priority(models.IntegerChoices):
    """Stored as its pull rank, so ordering by it is ordering by urgency."""

    CRITICAL = 0, "critical"
    HIGH = 1, "high"
    MEDIUM = 2, "medium"
    LOW = 3, "low"
    NONE = 4, "none"

    @classmethod
    def from_name(cls, name: str) -> "Priority":
        return {p.label: p for p in cls}[name]


# A priority's name by its rank and its rank by its name, as the JSON of a task writes it.
PRIORITY_NAMES = {p.value: p.label for p in Priority}
PRIORITY_RANKS = {p.label: p.value for p in Priority}
