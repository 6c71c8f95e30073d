import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev.settings")
django_asgi = get_asgi_application()

# /mcp/: the MCP server over streamable HTTP (token auth); every other path is Django's.
from integrations.mcp_http import with_mcp  # noqa: E402

django_asgi = with_mcp(django_asgi)

# After Django is set up:
from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from accounts.websocket import HandshakeAuthMiddleware  # noqa: E402
from boards.routing import websocket_urlpatterns  # noqa: E402
from kandev.lifespan import with_lifespan  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi,
        # A token handshake needs no Origin; a session one must come from an allowed origin.
        "websocket": AuthMiddlewareStack(HandshakeAuthMiddleware(URLRouter(websocket_urlpatterns))),
    }
)
# Startup and shutdown (the embedded default's background work, kandev.lifespan).
application = with_lifespan(application)
