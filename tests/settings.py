"""kandev's settings for the test run. Tests run with DEBUG off, as in production, which
refuses the public development key: this run gets a random SECRET_KEY of its own (inherited
by the servers and commands the tests start).

Under pytest-xdist each worker (PYTEST_XDIST_WORKER gw0, gw1, ...) gets its own test
database (pytest-django suffixes its name), its own Redis database (REDIS_URL's index plus
the worker's number) and its own collectstatic target, all inherited by the servers it
starts: two workers never see each other's rows, channel groups or files.
"""

import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("SECRET_KEY", "test-" + secrets.token_urlsafe(50))

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
# Once per worker: the servers and commands it starts inherit its environment, these
# settings included, and must share its Redis database and static files, not shift them again.
if WORKER and os.environ.get("KANDEV_TEST_WORKER") != WORKER:
    os.environ["KANDEV_TEST_WORKER"] = WORKER
    number = int(WORKER.removeprefix("gw"))
    if os.environ.get("REDIS_URL"):
        parts = urlsplit(os.environ["REDIS_URL"])
        index = (int(parts.path.strip("/") or 0) + number) % 16  # Redis has databases 0-15
        os.environ["REDIS_URL"] = urlunsplit(parts._replace(path=f"/{index}"))
    root = os.environ.get("STATIC_ROOT") or str(Path(__file__).resolve().parents[1] / "staticfiles")
    os.environ["STATIC_ROOT"] = f"{root}-{WORKER}"

from kandev.settings import *  # noqa: E402, F403
