"""The ASGI lifespan protocol in front of kandev's application (Django's handler refuses it).

With KANDEV_BACKGROUND=embedded (the one-process default) each server process runs the
background work itself: a thread doing kandev_worker's pass every
KANDEV_RECONCILE_INTERVAL_SECONDS, and a task-queue worker (notifications/queue.py: e-mail
batches, webhook deliveries), started at startup and, at shutdown, told to stop and waited
for (a pass or a task under way finishes first).
"""

import asyncio
import logging
import threading

from django.conf import settings
from django.db import connection

from agents.management.commands.kandev_worker import run_until
from notifications.queue import QueueThread

logger = logging.getLogger(__name__)


class BackgroundWork:
    def __init__(self):
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="kandev-background")
        self.queue = QueueThread()

    def _run(self) -> None:
        try:
            run_until(self.stopping, settings.KANDEV_RECONCILE_INTERVAL_SECONDS, logger.info)
        finally:
            connection.close()

    def start(self) -> None:
        self.thread.start()
        self.queue.start()
        logger.info("background work started in this server process (KANDEV_BACKGROUND=embedded)")

    def stop(self) -> None:
        self.stopping.set()
        self.queue.stop()
        self.thread.join()
        logger.info("background work stopped")


def with_lifespan(app):
    """`app` for HTTP and WebSocket; startup and shutdown answered here."""

    async def application(scope, receive, send):
        if scope["type"] != "lifespan":
            return await app(scope, receive, send)
        background = BackgroundWork() if settings.KANDEV_BACKGROUND == "embedded" else None
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if background is not None:
                    background.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if background is not None:
                    await asyncio.to_thread(background.stop)  # keep the event loop free meanwhile
                await send({"type": "lifespan.shutdown.complete"})
                return

    return application
