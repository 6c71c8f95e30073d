"""A small GitHub REST client (httpx) for review watches.

Requests go only where common.outbound allows (https on public addresses by default), and
what a user sees of a failure (a watch's `last_error`) names its class, never a remote
body: the address could be any service, and its answers are not the user's to read.

It honours GitHub's rate limit: once `X-RateLimit-Remaining` reaches 0 it sends nothing
before `X-RateLimit-Reset`, and a 403/429 (primary or secondary limit) raises `RateLimited`
with the time GitHub asked for (`Retry-After`, else the reset time). 5xx and transport
failures raise `GitHubUnavailable`; the watch backs off exponentially for those.
"""

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx
from django.utils import timezone

from common.errors import KandevError
from common.outbound import GuardedTransport, OutboundRefused
from common.validation import whole_number

MAX_PAGES = 10  # the search API serves at most 1000 results (10 pages of 100)
# GitHub's own charset: an owner is letters, digits and inner hyphens (at most 39); a
# repository name letters, digits, "-", "_" and "." (at most 100), but never "." or "..".
REPOSITORY = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/(?!\.\.?$)[A-Za-z0-9_.-]{1,100}")
REFUSALS = {401: " (the token was refused)", 403: " (the token may not read this)"}
TRANSPORT_FAILURES = (
    (httpx.TimeoutException, "timed out"),
    (httpx.ConnectError, "connection failed"),
    (httpx.RemoteProtocolError, "not an HTTP answer"),
)


class GitHubError(KandevError):
    status_code = 502
    code = "github_error"

    def __init__(self, detail: str, *, retry_at: datetime | None = None):
        super().__init__(detail)
        self.retry_at = retry_at


class RateLimited(GitHubError):
    code = "github_rate_limited"


class GitHubUnavailable(GitHubError):
    code = "github_unavailable"


@dataclass(frozen=True)
class PullRequest:
    repository: str  # owner/repo
    number: int
    title: str
    url: str

    @property
    def external_ref(self) -> str:
        return external_ref(self.repository, self.number)


def external_ref(repository: str, number: int) -> str:
    return f"github:{repository}#{number}"


def _epoch(value: str | None) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(value), tz=UTC) if value else None
    except ValueError:
        return None


class GitHub:
    def __init__(self, *, base_url: str, token: str, now: datetime | None = None, timeout: float = 10.0):
        self.base_url = base_url.rstrip("/")
        self.now = now or timezone.now()  # the poll's clock: a poll takes seconds
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "kandev-review-watch",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.client = httpx.Client(
            headers=headers, timeout=timeout, follow_redirects=False, transport=GuardedTransport()
        )
        self.blocked_until: datetime | None = None

    def close(self) -> None:
        self.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get(self, url: str, params: dict | None = None) -> httpx.Response:
        if not url.startswith(self.base_url + "/"):
            # A Link header pointing elsewhere must never receive the token.
            raise GitHubError(f"Refusing to follow {url} outside {self.base_url}.")
        if self.blocked_until is not None and self.now < self.blocked_until:
            raise RateLimited("GitHub rate limit exhausted.", retry_at=self.blocked_until)
        try:
            response = self.client.get(url, params=params)
        except OutboundRefused as refused:
            raise GitHubError(refused.detail) from None
        except httpx.HTTPError as exc:
            failure = next((w for kind, w in TRANSPORT_FAILURES if isinstance(exc, kind)), "failed")
            raise GitHubUnavailable(f"GitHub request {failure}.") from None
        reset = _epoch(response.headers.get("X-RateLimit-Reset"))
        exhausted = response.headers.get("X-RateLimit-Remaining") == "0"
        if response.status_code in (403, 429) and (
            exhausted or "Retry-After" in response.headers or response.status_code == 429
        ):
            retry_after = whole_number(response.headers.get("Retry-After", ""))
            retry_at = self.now + timedelta(seconds=retry_after) if retry_after is not None else reset
            raise RateLimited(f"GitHub rate limit ({response.status_code}).", retry_at=retry_at)
        if response.status_code >= 500:
            raise GitHubUnavailable(f"GitHub answered {response.status_code}.")
        if response.status_code >= 400 and response.status_code != 404:
            meaning = REFUSALS.get(response.status_code, "")
            raise GitHubError(f"GitHub answered {response.status_code}{meaning}.")
        if exhausted:
            self.blocked_until = reset
        return response

    def open_review_requests(self, *, repository: str, login: str) -> list[PullRequest]:
        """Open pull requests of `repository` awaiting `login`'s review, oldest first."""
        check_repository(repository)
        url = f"{self.base_url}/search/issues"
        params = {
            "q": f"is:pr is:open review-requested:{login} repo:{repository}",
            "sort": "created",
            "order": "asc",
            "per_page": 100,
        }
        found: list[PullRequest] = []
        for _ in range(MAX_PAGES):
            response = self.get(url, params)
            if response.status_code == 404:
                raise GitHubError(f"Repository {repository} not found (or the token cannot see it).")
            try:
                found.extend(
                    PullRequest(repository, int(item["number"]), str(item["title"]), str(item["html_url"]))
                    for item in response.json()["items"]
                )
            except (ValueError, KeyError, TypeError):
                raise GitHubError("GitHub's search answer was not the expected JSON.") from None
            following = response.links.get("next", {}).get("url")
            if not following:
                break
            url, params = following, None
        return found

    def is_closed(self, *, repository: str, number: int) -> bool:
        """True once the pull request is merged or closed (merged ones are closed too)."""
        check_repository(repository)
        response = self.get(f"{self.base_url}/repos/{repository}/pulls/{number}")
        if response.status_code == 404:
            return False  # unknown to this token: leave the task alone
        try:
            return response.json()["state"] == "closed"
        except (ValueError, KeyError, TypeError):
            raise GitHubError("GitHub's pull request answer was not the expected JSON.") from None


def check_repository(repository: str) -> None:
    """A stored name is checked again before it becomes part of a URL carrying the token."""
    if not REPOSITORY.fullmatch(repository):
        raise GitHubError(f"{repository!r} is not an owner/repo name.")
