"""kandev's ASGI handler for HTTP: Django's sync request path, whole, in one hop to a thread.

Django's own ASGI handler makes a thread for every request and hops between it and the
event loop five times (to the thread for the sync middleware, back to the loop for the view
resolver because WhiteNoise and the login throttle are sync-only, to the thread again for
the sync view, back, and once more to close the response). kandev's middleware and views
are all sync, so this handler runs the path WSGI uses (the sync middleware chain and the
view, then the response's close, which hands the database connection back to the pool) in
one hop, on threads that are kept.

The threads are bounded lanes per process: KANDEV_READ_THREADS for GET, HEAD and
OPTIONS and KANDEV_WRITE_THREADS for every other method, so a write never waits for a
thread behind reads (a write holds its board's locks, and every write of the board waits
for it), and the number of threads competing for the GIL stays bounded. A third lane,
KANDEV_ANALYTICS_THREADS (default 1), serves the paths `analytics_path` matches (the flow
figures): a figure costs up to a second of CPU, so however many are asked for, they take
no read thread and at most that many threads compete with the reads for the GIL. Requests
beyond a lane's threads wait on the event loop, holding no database connection.
"""

import re
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.urls import set_script_prefix

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class RequestHandler(ASGIHandler):
    def __init__(
        self,
        *,
        read_threads: int,
        write_threads: int,
        analytics_threads: int = 1,
        analytics_path: re.Pattern | None = None,
    ):
        BaseHandler.__init__(self)  # not ASGIHandler's: its middleware chain is the async one
        self.load_middleware(is_async=False)
        self.lanes = {
            "read": ThreadPoolExecutor(read_threads, thread_name_prefix="kandev-read"),
            "write": ThreadPoolExecutor(write_threads, thread_name_prefix="kandev-write"),
            "analytics": ThreadPoolExecutor(analytics_threads, thread_name_prefix="kandev-analytics"),
        }
        self.analytics_path = analytics_path

    def lane(self, scope) -> ThreadPoolExecutor:
        if self.analytics_path is not None and self.analytics_path.match(scope["path"]):
            return self.lanes["analytics"]
        return self.lanes["read" if scope["method"] in READ_METHODS else "write"]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django serves HTTP only, not {scope['type']}.")
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        lane = self.lane(scope)
        response = await sync_to_async(self.respond, thread_sensitive=False, executor=lane)(scope, body_file)
        if not response.streaming:
            await self.send_response(response, send)
            return
        try:
            await self.send_response(response, send)  # a file (WhiteNoise): read as it is sent
        finally:
            await sync_to_async(self.finish, thread_sensitive=False, executor=lane)(response, body_file)

    def respond(self, scope, body_file):
        """The request's whole sync part; a complete response is closed here already."""
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            response._handler_class = self.__class__
        if not response.streaming:
            self.finish(response, body_file)
        return response

    def finish(self, response, body_file):
        response.close()  # sends request_finished: the connection goes back to the pool
        body_file.close()
