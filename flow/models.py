from django.conf import settings
from django.db import models

from boards.models import ClassOfService
from workflows.models import Workflow


class ServiceLevel(models.Model):
    """A service level an owner set for a board's class of service: "85% of tasks finish
    within `days` days". Without one, the history's 85th percentile is the SLE."""

    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="+")
    class_of_service = models.CharField(max_length=10, choices=ClassOfService.choices)
    days = models.PositiveIntegerField()
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    set_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workflow", "class_of_service"], name="one_service_level_per_class")
        ]

    def __str__(self):
        return f"{self.class_of_service}: {self.days} days"
