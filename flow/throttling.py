"""The flow figures are throttled per user, counted in the shared cache
(Redis when configured) so the rate holds across server processes."""

from django.conf import settings
from rest_framework.throttling import UserRateThrottle


class FlowThrottle(UserRateThrottle):
    """KANDEV_FLOW_RATE, e.g. "120/minute": the flow page's refreshes (six figures at most
    every few seconds) fit; a loop over the heaviest requests does not."""

    scope = "flow"

    def get_rate(self):
        return settings.KANDEV_FLOW_RATE
