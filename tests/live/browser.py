"""The Chromium of the browser tests (Debian's, through Playwright), one per worker at a time."""

import os

from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


class WatchedBrowser:
    """Chromium, whose every page reports what the Content Security Policy refused: each
    test using it fails on such a violation in the console (`no_csp_violation`)."""

    def __init__(self, browser):
        self.browser = browser
        self.csp_violations = []

    def new_context(self, **options):
        context = self.browser.new_context(**options)
        context.on("console", self.note)
        return context

    def note(self, message):
        if "Content Security Policy" in message.text:
            self.csp_violations.append(message.text)


class SharedChromium:
    """One Chromium for a worker's browser tests, launched by the first and kept while the
    tests that follow use it; stopped before any test that does not (tests/conftest.py), as
    Playwright's sync API keeps an event loop in the test thread while it runs, and async
    code such as async_to_sync refuses to run beside it."""

    def __init__(self):
        self.playwright = self.watched = None

    def get(self) -> WatchedBrowser:
        if self.watched is None:
            # The tests' own ORM calls are plain synchronous code between Playwright's
            # calls, so Django's async-context guard is a false alarm.
            os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
            self.playwright = sync_playwright().start()
            browser = self.playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            self.watched = WatchedBrowser(browser)
        return self.watched

    def stop(self) -> None:
        if self.watched is not None:
            self.watched.browser.close()
            self.playwright.stop()
            self.playwright = self.watched = None


SHARED_CHROMIUM = SharedChromium()
