"""The server reads no body larger than anything kandev parses (KANDEV_MAX_REQUEST_BYTES):
refused unread when its Content-Length says so, else as soon as its bytes pass the bound.
Driven in-process through the ASGI interface, as tests/test_requests.py does."""

import asyncio

import pytest

from kandev.requests import RequestHandler

LIMIT = 1024


def scope(headers):
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/v1/tasks/",
        "raw_path": b"/api/v1/tasks/",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }


def post(headers, chunks):
    """(status, body, how many chunks the server received) of one request."""
    handler = RequestHandler(read_threads=1, write_threads=1)
    pending = list(chunks)
    received, sent = [], []

    async def receive():
        chunk = pending.pop(0)
        received.append(chunk)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message):
        sent.append(message)

    asyncio.run(handler(scope(headers), receive, send))
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], body, len(received)


@pytest.fixture(autouse=True)
def small_bound(settings):
    settings.KANDEV_MAX_REQUEST_BYTES = LIMIT


def test_a_body_declared_past_the_bound_is_refused_unread():
    status, body, read = post([(b"content-length", str(10**9).encode())], [b"x" * 100] * 3)
    assert (status, read) == (413, 0)
    assert b'"too_large"' in body


def test_a_body_without_a_length_is_refused_once_its_bytes_pass_the_bound():
    status, _, read = post([(b"transfer-encoding", b"chunked")], [b"x" * 600] * 10)
    assert (status, read) == (413, 2)


@pytest.mark.django_db(transaction=True)
def test_a_body_within_the_bound_reaches_the_application():
    status, _, read = post([(b"content-type", b"application/json"), (b"content-length", b"2")], [b"{}"])
    assert (status, read) == (401, 1)  # read whole, then refused by the API for want of a sign-in
