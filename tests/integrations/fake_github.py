"""A local stand-in for GitHub's REST API (the outside world kandev cannot reach in tests).

Serves `GET /search/issues` (the review-requested query, paginated with a Link header) and
`GET /repos/<owner>/<repo>/pulls/<n>`, checks the bearer token, sends rate-limit headers,
records every request, and can be scripted to answer the next requests with errors.
"""

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse


@dataclass
class Pull:
    repository: str
    number: int
    title: str
    reviewers: set = field(default_factory=set)
    state: str = "open"
    merged: bool = False


@dataclass
class Scripted:
    status: int
    headers: dict = field(default_factory=dict)
    body: dict = field(default_factory=lambda: {"message": "scripted"})


@dataclass
class Seen:
    path: str
    query: dict
    authorization: str | None
    host: str | None = None


class FakeGitHub:
    def __init__(self, *, token: str = "ghp-test-token", page_size: int = 100):
        self.token = token
        self.page_size = page_size  # GitHub allows 100 per page; smaller forces pagination
        self.pulls: dict[tuple[str, int], Pull] = {}
        self.requests: list[Seen] = []
        self.script: list[Scripted] = []
        self.rate_remaining = 5000
        self.rate_reset = 1_900_000_000
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def open_pull(self, repository: str, number: int, title: str = "", reviewer: str = "rita"):
        self.pulls[(repository, number)] = Pull(repository, number, title or f"PR {number}", {reviewer})

    def close_pull(self, repository: str, number: int, *, merged: bool = False):
        pull = self.pulls[(repository, number)]
        pull.state, pull.merged = "closed", merged

    def searches(self) -> list[Seen]:
        return [r for r in self.requests if r.path == "/search/issues"]

    # --- the HTTP side ---------------------------------------------------------------

    def _answer(self, path: str, query: dict, authorization: str | None, host: str | None = None):
        with self.lock:
            self.requests.append(Seen(path, query, authorization, host))
            if self.script:
                scripted = self.script.pop(0)
                return scripted.status, scripted.headers, scripted.body
            if authorization != f"Bearer {self.token}":
                return 401, {}, {"message": "Bad credentials"}
            self.rate_remaining = max(self.rate_remaining - 1, 0)
            limits = {
                "X-RateLimit-Remaining": str(self.rate_remaining),
                "X-RateLimit-Reset": str(self.rate_reset),
            }
            if path == "/search/issues":
                return 200, *self._search(query, limits)
            match = re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)", path)
            pull = match and self.pulls.get((match[1], int(match[2])))
            if not pull:
                return 404, limits, {"message": "Not Found"}
            body = {"number": pull.number, "state": pull.state, "merged": pull.merged}
            return 200, limits, body

    def _search(self, query: dict, headers: dict):
        terms = dict(t.split(":", 1) for t in query["q"][0].split() if ":" in t)
        matching = sorted(
            (
                p
                for p in self.pulls.values()
                if p.repository == terms["repo"] and p.state == "open" and terms["review-requested"] in p.reviewers
            ),
            key=lambda p: p.number,
        )
        per_page = min(int(query.get("per_page", ["30"])[0]), self.page_size)
        page = int(query.get("page", ["1"])[0])
        items = matching[(page - 1) * per_page : page * per_page]
        if page * per_page < len(matching):
            following = {"q": query["q"][0], "per_page": per_page, "page": page + 1}
            headers = {
                **headers,
                "Link": f'<{self.base_url}/search/issues?{urlencode(following)}>; rel="next"',
            }
        body = {
            "total_count": len(matching),
            "items": [
                {
                    "number": p.number,
                    "title": p.title,
                    "html_url": f"https://github.com/{p.repository}/pull/{p.number}",
                    "pull_request": {},
                }
                for p in items
            ],
        }
        return headers, body

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                url = urlparse(self.path)
                status, headers, body = fake._answer(
                    url.path,
                    parse_qs(url.query),
                    self.headers.get("Authorization"),
                    self.headers.get("Host"),
                )
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        return Handler
