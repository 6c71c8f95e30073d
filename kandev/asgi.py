import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev.settings")
django_asgi = get_asgi_application()

# /mcp/: the MCP server over streamable HTTP (token auth); every other path is Django's.
from integrations.mcp_http import with_mcp  # noqa: E402

django_asgi = with_mcp(django_asgi)

from channels.routing import ProtocolTypeRouter  # noqa: E402  (after Django is set up)

application = ProtocolTypeRouter({"http": django_asgi})
