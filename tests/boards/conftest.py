"""Fixtures of the board tests."""

import json
import re

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection

from boards.events import board_group


@pytest.fixture
def broadcasts(django_capture_on_commit_callbacks):
    """Run `operation` to its commit and return the live messages it sent to the board's viewers.

    A marker sent after the commit ends the list, so "exactly these messages" needs no timeout.
    All receives run in one event loop: channels_redis keeps a received message in an
    in-flight backup until a cleaner task of that loop drops it, so a receive per loop
    (`async_to_sync(layer.receive)` each time) can get the previous message again.
    """

    def run(workflow, operation):
        layer = get_channel_layer()
        group = board_group(workflow.pk)
        viewer = async_to_sync(layer.new_channel)()
        async_to_sync(layer.group_add)(group, viewer)
        with django_capture_on_commit_callbacks(execute=True):
            operation()
        async_to_sync(layer.group_send)(group, {"type": "test.end", "text": "null"})

        async def received():  # one event loop for all (channels_redis buffers per loop)
            messages = []
            while (event := await layer.receive(viewer))["type"] != "test.end":
                messages.append(json.loads(event["text"]))
            return messages

        return async_to_sync(received)()

    return run


@pytest.fixture
def spelt():
    """A captured query's statements as the database ran them: on PostgreSQL the statements
    that common/sql.py prepares are sent as EXECUTE (after their PREPARE, the first time), and
    each is spelt out from pg_prepared_statements (whose `statement` is the whole query
    string that prepared it). None of these statements holds "; "."""

    def spell(query: str) -> str:
        if connection.vendor != "postgresql":
            return query
        with connection.cursor() as cursor:
            cursor.execute("SELECT name, statement FROM pg_prepared_statements")
            sources = cursor.fetchall()
        defined = {}
        for _, source in sources:
            for part in source.split("; "):
                if part.startswith("PREPARE "):
                    name, _, statement = part.removeprefix("PREPARE ").partition(" AS ")
                    defined[name] = statement
        ran = [part for part in query.split("; ") if not part.startswith(("PREPARE ", "DEALLOCATE "))]
        return "; ".join(re.sub(r"^EXECUTE (kandev_\w+).*", lambda m: defined[m[1]], part) for part in ran)

    return spell
