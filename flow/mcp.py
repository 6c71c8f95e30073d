"""The flow figures an agent asks for over MCP: "when will these be done?". Registered with
the MCP server from FlowConfig.ready(); the same parameters, bounds and answer as
`GET .../flow/forecast/`."""

from datetime import timedelta
from typing import Any

from django.utils import timezone
from mcp.server.mcpserver import Context
from pydantic import Field

from common.validation import validated
from flow import bounds
from flow import forecast as forecasting
from flow.kinds import BoardSteps
from flow.serializers import ForecastParams, ForecastSerializer
from integrations.mcp_tools import Toolkit, as_json, given


def add_tools(kit: Toolkit) -> None:
    @kit.tool
    def forecast(
        ctx: Context,
        workflow_id: str,
        items: int | None = Field(None, description="When will this many more tasks be done?"),
        until: str | None = Field(None, description="How many tasks will be done by this date (YYYY-MM-DD)?"),
        history_days: int = Field(30, ge=1, le=366, description="The throughput history: this many days up to now"),
        seed: int | None = Field(None, description="The same seed, history and question give the same answer"),
    ) -> dict[str, Any]:
        """When will it be done: a Monte Carlo forecast over the board's daily throughput
        (10,000 trials). Give `items` (days and dates for N more tasks) or `until` (how many
        tasks by a date); the answer has the 50th/85th/95th percentiles and the histogram."""
        workflow = kit.member_workflow(kit.acting_user(ctx), workflow_id)
        start = timezone.now() - timedelta(days=history_days)
        params = validated(ForecastParams, {"from": start.isoformat(), **given(items=items, until=until, seed=seed)})
        board = BoardSteps.of(workflow)
        bounds.check(
            figure="forecast", workflow_id=workflow.pk, window=params["window"], interval=None, steps=len(board.steps)
        )
        answer = forecasting.forecast(workflow, params, board, params["today"])
        return as_json(ForecastSerializer(answer).data)
