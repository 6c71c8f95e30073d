"""PostgreSQL: parse timestamps in C.

Django registers its own timestamptz loader on top of psycopg's pure-Python one, which
makes parsing the timestamps the biggest cost of reading a large board (two per task).
This loader does exactly what Django's does (parse in the connection's time zone, which
Django sets to its own, then label the value with Django's tzinfo) on psycopg's C parser.
"""

from functools import cache

from django.db.backends.signals import connection_created
from django.dispatch import receiver


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
