"""The database: reads that see one state of it; PostgreSQL: parse timestamps in C.

Django registers its own timestamptz loader on top of psycopg's pure-Python one, which
makes parsing the timestamps the biggest cost of reading a large board (two per task).
This loader does exactly what Django's does (parse in the connection's time zone, which
Django sets to its own, then label the value with Django's tzinfo) on psycopg's C parser.
"""

from contextlib import contextmanager
from functools import cache

from django.db import connection, transaction
from django.db.backends.signals import connection_created
from django.dispatch import receiver


@contextmanager
def one_read():
    """The queries inside read one committed state of the database. Outside a transaction
    each statement reads its own (PostgreSQL's READ COMMITTED, SQLite's autocommit), so a
    change committed between two of them shows in the second only: a task in a step the
    first did not list. On PostgreSQL a read-only REPEATABLE READ transaction (no row
    locks, no waiting on writers); on SQLite its IMMEDIATE transaction, which writers
    wait for. Inside a transaction already, the queries read as it does."""
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


@cache
def _loader_for(tz):
    from psycopg import adapters, postgres, pq
    from psycopg.adapt import Loader

    parser = adapters.get_loader(postgres.types["timestamptz"].oid, pq.Format.TEXT)

    class TimestamptzLoader(Loader):
        timezone = tz  # Django's create_cursor compares this with the connection's zone

        def __init__(self, oid, context=None):
            super().__init__(oid, context)
            self._parser = parser(oid, context)  # the C class cannot be subclassed

        def load(self, data):
            return self._parser.load(data).replace(tzinfo=self.timezone)

    return TimestamptzLoader


@receiver(connection_created)
def load_timestamps_in_c(sender, connection, **kwargs):
    if connection.vendor == "postgresql" and connection.timezone is not None:
        loader = _loader_for(connection.timezone)
        connection.connection.adapters.register_loader("timestamptz", loader)
