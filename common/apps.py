from django.apps import AppConfig


class CommonConfig(AppConfig):
    """The ground floor every app stands on: one error type, validation, JSON in and out,
    pagination, the cache, outbound requests, metrics and the few SQL helpers."""

    name = "common"

    def ready(self):
        from common import db  # noqa: F401  timestamps parsed in C on PostgreSQL
