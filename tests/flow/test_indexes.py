"""The flow figures' partial index holds exactly the events the statements read as state
events: a condition that drifted from the index's would leave the index unused, silently."""

import importlib

from flow import queries

migration = importlib.import_module("flow.migrations.0001_state_events_by_time")


def test_the_state_events_index_is_partial_on_the_statements_condition():
    assert queries.state_event().replace('"', "") == migration.STATE_EVENT
