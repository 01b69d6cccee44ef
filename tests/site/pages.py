"""Where the built site is, which pages it has, and what a browser reported while loading one."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from playwright.sync_api import ConsoleMessage, Error, Page, Request, Response

from ptnotes_dev.settings import load

SETTINGS = load()
REPO = SETTINGS.root
LANGUAGES = SETTINGS.language_codes
# Sphinx's asset folders: no pages of their own.
ASSET_DIRS = frozenset({"_static", "_sources", "_downloads", "_images"})
SCREENSHOTS = REPO / "build" / "screenshots"
# The tests run offline and the site must not need the network: every request to a host other
# than the local test server is blocked (tests/site/conftest.py) and reported as a problem of
# the page that made it (math included: MathJax is served from the site's own _static/).
LOCAL_HOST = "127.0.0.1"


def default_site_dir() -> Path:
    """``PTNOTES_SITE_DIR`` if set, else ``<repo>/build/html`` (where `nox -s docs` writes)."""
    return Path(os.environ.get("PTNOTES_SITE_DIR") or REPO / "build" / "html").resolve()


def html_pages(root: Path) -> list[Path]:
    """Every ``*.html`` under ``root`` outside the asset folders, sorted, relative to ``root``."""
    if not root.is_dir():
        return []
    return sorted(
        path.relative_to(root)
        for path in root.rglob("*.html")
        if not ASSET_DIRS.intersection(path.relative_to(root).parts[:-1])
    )


def language_pages(site: Path, lang: str) -> list[str]:
    """The pages of one edition, as posix paths relative to the edition's folder."""
    return [page.as_posix() for page in html_pages(site / lang)]


def example_pages(site: Path, lang: str) -> list[str]:
    """The sphinx-gallery example pages of one edition (``auto_examples/*.html``, no index)."""
    return [
        page
        for page in language_pages(site, lang)
        if page.startswith("auto_examples/") and page != "auto_examples/index.html"
    ]


def is_local(url: str) -> bool:
    """Whether ``url`` stays on this machine: the local test server, or no host at all
    (``data:``, ``blob:``, ``about:``)."""
    parts = urlsplit(url)
    return parts.scheme not in {"http", "https", "ws", "wss"} or parts.hostname == LOCAL_HOST


@dataclass(repr=False)
class PageProblems:
    """What a page reported while it loaded: console errors, uncaught exceptions, bad requests.

    ``net::ERR_ABORTED`` is a cancellation by the page, not a failed load: a page that leaves
    cancels what it still has in flight (the language switcher's HEAD check, the result
    snippets search.html fetches), and Chromium may report that before or after the next
    navigation's own request. A missing file shows as HTTP 404 and a broken server as another
    net error, so an aborted subresource is not reported; an aborted navigation is, unless a
    later navigation replaced it. Requests made before this collector watched are ignored.
    """

    _found: list[str] = field(default_factory=list)
    # (message, navigations seen when the aborted navigation was made)
    _aborted: list[tuple[str, int]] = field(default_factory=list)
    _navigations: int = 0
    # id(request) -> (request, navigations seen when it was made); holding the request keeps
    # its id from being reused.
    _requests: dict[int, tuple[Request, int]] = field(default_factory=dict)
    _page: Page | None = None
    #: Every url of another host than the local server that the page requested (blocked).
    external: list[str] = field(default_factory=list)

    def watch(self, page: Page) -> PageProblems:
        self._page = page
        for event, handler in self._handlers():
            page.on(event, handler)
        return self

    def unwatch(self) -> None:
        if self._page is not None:
            for event, handler in self._handlers():
                self._page.remove_listener(event, handler)
            self._page = None

    def _handlers(self) -> list[tuple[Any, Any]]:
        return [
            ("console", self._console),
            ("pageerror", self._pageerror),
            ("request", self._request),
            ("requestfailed", self._requestfailed),
            ("response", self._response),
        ]

    @property
    def problems(self) -> list[str]:
        aborted = [message for message, seen in self._aborted if seen == self._navigations]
        return self._found + aborted

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in {"error", "assert"}:
            where = message.location.get("url", "")
            self._found.append(f"console {message.type}: {message.text} ({where})")

    def _pageerror(self, error: Error) -> None:
        self._found.append(f"pageerror: {error.name}: {error.message}")

    def _request(self, request: Request) -> None:
        if request.is_navigation_request() and request.frame.parent_frame is None:
            self._navigations += 1
        self._requests[id(request)] = (request, self._navigations)
        if not is_local(request.url):
            self.external.append(request.url)
            self._found.append(
                f"request to another host than the local server (the site must work offline): "
                f"{request.method} {request.url}"
            )

    def _requestfailed(self, request: Request) -> None:
        seen = self._requests.get(id(request))
        if seen is None:
            return  # made by a page loaded before this collector watched
        message = f"request failed: {request.method} {request.url}: {request.failure}"
        if request.failure == "net::ERR_ABORTED":
            if request.is_navigation_request() and request.frame.parent_frame is None:
                self._aborted.append((message, seen[1]))
        elif not is_local(request.url):
            return  # reported when it was requested
        else:
            self._found.append(message)

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self._found.append(f"HTTP {response.status}: {response.request.method} {response.url}")

    def __str__(self) -> str:
        return "\n".join(self.problems)

    __repr__ = __str__
