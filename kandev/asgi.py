import gc
import os
from importlib import import_module

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev.settings")
django.setup(set_prefix=False)  # as django.core.asgi.get_asgi_application does

from django.conf import settings  # noqa: E402

from kandev.requests import RequestHandler  # noqa: E402
from kandev.urls import ANALYTICS_PATH  # noqa: E402

# Django's HTTP requests (kandev/requests.py), not Django's own ASGIHandler.
django_asgi = RequestHandler(
    read_threads=settings.KANDEV_READ_THREADS,
    write_threads=settings.KANDEV_WRITE_THREADS,
    analytics_threads=settings.KANDEV_ANALYTICS_THREADS,
    analytics_path=ANALYTICS_PATH,
)

# /mcp/: the MCP server over streamable HTTP (token auth); every other path is Django's.
from integrations.mcp_http import with_mcp  # noqa: E402

django_asgi = with_mcp(django_asgi)

# After Django is set up:
from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from accounts.websocket import HandshakeAuthMiddleware  # noqa: E402
from boards.routing import websocket_urlpatterns as board_sockets  # noqa: E402
from kandev.lifespan import with_lifespan  # noqa: E402
from notifications.routing import websocket_urlpatterns as inbox_sockets  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi,
        # A token handshake needs no Origin; a session one must come from an allowed origin.
        "websocket": AuthMiddlewareStack(HandshakeAuthMiddleware(URLRouter([*board_sockets, *inbox_sockets]))),
    }
)
# Startup and shutdown (the embedded default's background work, kandev.lifespan).
application = with_lifespan(application)

# The code and classes imported by now (every view, through the URLconf) live as long as the
# process: the cyclic collector need not scan them again. Unfrozen, each full collection walked
# ~130,000 of them, a pause of ~100 ms in the middle of whichever request it fell on.
import_module(settings.ROOT_URLCONF)
gc.freeze()
