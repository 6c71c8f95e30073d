"""kandev's settings for the test run. Tests run with DEBUG off, as in production, which
refuses the public development key: this run gets a random SECRET_KEY of its own (inherited
by the servers and commands the tests start)."""

import os
import secrets

os.environ.setdefault("SECRET_KEY", "test-" + secrets.token_urlsafe(50))

from kandev.settings import *  # noqa: E402, F403
