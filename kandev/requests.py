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

A body is read whole before its request reaches Django (Django's ASGI handler spools it to a
temporary file), so it is bounded here first: one larger than anything kandev reads
(`settings.KANDEV_MAX_REQUEST_BYTES`: the largest attachment, import or JSON body, plus room
for a form's framing) is a 413 as soon as its Content-Length says so or its bytes pass it.
Each endpoint's own, smaller bound is checked where its body is parsed.
"""

import re
import tempfile
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.urls import set_script_prefix

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TOO_LARGE = b'{"code": "too_large", "detail": "The request body is larger than this server accepts."}'


class BodyTooLarge(Exception):
    pass


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
            body_file = await self.read_body(receive, declared=declared_length(scope))
        except RequestAborted:
            return
        except BodyTooLarge:
            await send(
                {
                    "type": "http.response.start",
                    "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(TOO_LARGE))],
                }
            )
            await send({"type": "http.response.body", "body": TOO_LARGE})
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

    async def read_body(self, receive, *, declared: int = 0):
        """Django's, bounded by KANDEV_MAX_REQUEST_BYTES: refused unread when the declared
        length passes it, else as soon as the bytes do."""
        limit = settings.KANDEV_MAX_REQUEST_BYTES
        if declared > limit:
            raise BodyTooLarge
        body_file = tempfile.SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE, mode="w+b")
        received = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                body_file.close()
                raise RequestAborted()
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > limit:
                body_file.close()
                raise BodyTooLarge
            body_file.write(chunk)
            if not message.get("more_body", False):
                break
        body_file.seek(0)
        return body_file

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


def declared_length(scope) -> int:
    """The request's Content-Length (0 when absent or malformed: the bytes are counted anyway)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return int(value) if value.isdigit() else 0
    return 0
