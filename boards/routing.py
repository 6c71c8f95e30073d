from django.urls import path

from boards.consumers import BoardConsumer

websocket_urlpatterns = [
    path("ws/workflows/<uuid:workflow_id>/", BoardConsumer.as_asgi()),
]
