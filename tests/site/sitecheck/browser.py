"""Debian's Chromium driven by Playwright, and what a reader's browser should see."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from playwright.sync_api import (
        Browser,
        ConsoleMessage,
        Error,
        Page,
        Playwright,
        Request,
        Response,
    )

__all__ = [
    "CHROMIUM_ARGS",
    "PageLog",
    "chromium_path",
    "launch",
    "open_logged",
    "switcher_problems",
]

# The system browser (`apt-get install chromium`); Playwright never downloads one here.
CHROMIUM_VARIABLE = "COMPPERF_CHROMIUM"
DEFAULT_CHROMIUM = "/usr/bin/chromium"
# Without the networking flags Chromium keeps calling hosts a closed network refuses.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium_path() -> Path:
    """The Chromium executable (``$COMPPERF_CHROMIUM``, else Debian's ``/usr/bin/chromium``).

    Raises
    ------
    FileNotFoundError
        If it does not exist, with the command that installs it.
    """
    path = Path(os.environ.get(CHROMIUM_VARIABLE) or DEFAULT_CHROMIUM)
    if not path.is_file():
        raise FileNotFoundError(
            f"no Chromium at {path}: install it with `apt-get install chromium` or point "
            f"{CHROMIUM_VARIABLE} at a Chromium executable (never `playwright install`)"
        )
    return path


def launch(playwright: Playwright) -> Browser:
    """Start headless Chromium from :func:`chromium_path`."""
    return playwright.chromium.launch(executable_path=chromium_path(), args=list(CHROMIUM_ARGS))


# Chromium asks every host for /favicon.ico on its own; the site declares no icon, and
# that probe is the browser's, not a request the page makes.
_BROWSER_PROBES = ("/favicon.ico",)


@dataclass
class PageLog:
    """What went wrong while a page loaded: console errors, script errors, bad requests."""

    problems: list[str] = field(default_factory=list)
    aborted_loads: list[str] = field(default_factory=list)  # page URLs, in order

    def _probe(self, url: str) -> bool:
        return urlsplit(url).path in _BROWSER_PROBES

    def console(self, message: ConsoleMessage) -> None:
        if message.type == "error" and not self._probe(message.location.get("url", "")):
            self.problems.append(f"console error: {message.text}")

    def page_error(self, error: Error) -> None:
        self.problems.append(f"script error: {error}")

    def request_failed(self, request: Request) -> None:
        if self._probe(request.url):
            return
        if request.is_navigation_request() and request.failure == "net::ERR_ABORTED":
            # Either the page sent the reader on (the root page's language choice) before
            # its own body had all arrived, or its load really was cut off: which one is
            # known only once the load ends (open_logged).
            self.aborted_loads.append(request.url)
            return
        self.problems.append(f"request failed: {request.url} ({request.failure})")

    def response(self, response: Response) -> None:
        if response.status >= 400 and not self._probe(response.url):
            self.problems.append(f"HTTP {response.status}: {response.url}")


_EVENTS = {
    "console": PageLog.console,
    "pageerror": PageLog.page_error,
    "requestfailed": PageLog.request_failed,
    "response": PageLog.response,
}


def open_logged(page: Page, url: str) -> list[str]:
    """Load ``url`` until the network is idle; return the problems seen on the way."""
    log = PageLog()
    handlers = {event: getattr(log, method.__name__) for event, method in _EVENTS.items()}
    for event, handler in handlers.items():
        page.on(event, handler)
    try:
        response = page.goto(url, wait_until="networkidle")
        if response is None or not response.ok:
            log.problems.append(f"HTTP {response.status if response else 'no response'}: {url}")
    finally:
        for event, handler in handlers.items():
            page.remove_listener(event, handler)
    # An aborted load is a problem unless the browser went on to another page: that is a
    # page replacing itself, whose rest the reader never needed.
    log.problems += [
        f"request failed: {aborted} (net::ERR_ABORTED)"
        for aborted in log.aborted_loads
        if _page_only(page.url) == _page_only(aborted)
    ]
    return log.problems


_LINKS_JS = (
    "() => [...document.querySelectorAll('a[href]')].map(a => [a.href, a.checkVisibility()])"
)


def _page_only(url: str) -> str:
    return url.split("#")[0]


def _back(page: Page) -> str:
    """The page's URL after going back one step in its history (waiting for the load)."""
    page.go_back(wait_until="load")
    return page.url


def switcher_problems(
    page: Page, site_url: str, language: str, path: str, others: list[str]
) -> list[str]:
    """Follow the page's link to the same page in each other language; say what fails.

    A switcher link is any visible link to ``<site_url><other>/<path>``; clicking it must
    land on that page, served with HTTP 200.
    """
    here = f"{site_url}{language}/{path}"
    statuses: dict[str, int] = {}  # page URL -> HTTP status of its last response

    def record(response: Response) -> None:
        statuses[_page_only(response.url)] = response.status

    problems = []
    opened = False
    for other in others:
        target = f"{site_url}{other}/{path}"
        # The page is opened once; after following a link the browser goes back to it
        # (from its history), and loads it afresh only where going back does not lead there.
        if not opened or (page.url != here and _back(page) != here):
            page.goto(here)
            opened = True
        links = page.evaluate(_LINKS_JS)
        index = next(
            (i for i, (href, shown) in enumerate(links) if shown and _page_only(href) == target),
            None,
        )
        if index is None:
            elsewhere = sorted({h for h, _ in links if h.startswith(f"{site_url}{other}/")})
            problems.append(
                f"{language}/{path}: no visible link to {other}/{path} "
                f"(its links into {other}/: {elsewhere[:3] or 'none'})"
            )
            continue
        statuses.clear()
        page.on("response", record)
        try:
            page.locator("a[href]").nth(index).click()
            page.wait_for_load_state("load")
        finally:
            page.remove_listener("response", record)
        landed = _page_only(page.url)
        if landed != target:
            problems.append(f"{language}/{path}: the {other} link led to {landed}, not {target}")
        elif statuses.get(landed) != 200:
            status = statuses.get(landed, "no response")
            problems.append(f"{language}/{path}: the {other} link to {target} gave HTTP {status}")
    return problems
