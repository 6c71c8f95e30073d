"""Log filters. API keys must never reach a log line: old WebSocket clients
still send `?token=<key>`, and uvicorn prints every path with its query string."""

import logging
import re

SECRET_PARAMETER = re.compile(r"([?&]token=)[^&#\s\"']*", re.IGNORECASE)


def redact(value):
    return SECRET_PARAMETER.sub(r"\1[redacted]", value) if isinstance(value, str) else value


class RedactSecrets(logging.Filter):
    """Replaces the value of `token=` query parameter in a record's message and
    arguments (uvicorn's access formatter reads the arguments one by one, so they stay a tuple)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(arg) for arg in record.args)
        elif isinstance(record.args, dict):
            record.args = {name: redact(arg) for name, arg in record.args.items()}
        return True
