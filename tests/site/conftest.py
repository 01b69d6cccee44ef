"""Fixtures for the tests of the built site: the site folder, a local server, one Chromium.

The site is what `nox -s docs` writes: ``build/html/`` holding ``en/``, ``zh_CN/`` and the root
``index.html`` that picks a language (``PTNOTES_SITE_DIR`` points elsewhere). It is served at
the server root, as a reader serves it (the language switcher's links are relative, and
tests/site/test_ui_language.py also reads the site from disk).
Chromium is Debian's (``/usr/bin/chromium``, ``PTNOTES_CHROMIUM`` overrides), driven through
plain Playwright (no browser download, no pytest-playwright plugin).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.site.pages import (
    LANGUAGES,
    default_site_dir,
    example_pages,
    language_pages,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, Playwright, Route

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVER_START_TIMEOUT_S = 15.0


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise over the pages found in the built site (one id per language/page).

    Without a built site there is nothing to walk: one placeholder parameter keeps the test
    in the run, and its ``site_dir`` fixture then fails with the instruction to build.
    """
    site = default_site_dir()
    if "site_page" in metafunc.fixturenames:
        pages = [f"{lang}/{page}" for lang in LANGUAGES for page in language_pages(site, lang)]
        metafunc.parametrize("site_page", pages or ["<site not built>"])
    if "example_page" in metafunc.fixturenames:
        examples = [f"{lang}/{page}" for lang in LANGUAGES for page in example_pages(site, lang)]
        metafunc.parametrize("example_page", examples or ["<site not built>"])


@pytest.fixture(scope="session")
def site_dir() -> Path:
    """The built site (``PTNOTES_SITE_DIR``, default ``build/html``); fails when it is missing."""
    site = default_site_dir()
    expected = [site / "index.html", *(site / lang / "index.html" for lang in LANGUAGES)]
    missing = [str(path) for path in expected if not path.is_file()]
    if missing:
        where = (
            f"PTNOTES_SITE_DIR={os.environ['PTNOTES_SITE_DIR']}"
            if os.environ.get("PTNOTES_SITE_DIR")
            else f"{site} (set PTNOTES_SITE_DIR to test another build)"
        )
        pytest.fail(
            f"the built site is missing: {', '.join(missing)} not found in {where}. "
            "Run `nox -s docs` first: it builds both editions into build/html.",
            pytrace=False,
        )
    return site


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def base_url(site_dir: Path) -> Iterator[str]:
    """``http://127.0.0.1:<port>``: the site served by ``python -m http.server``, at its root."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
        cwd=site_dir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            if server.poll() is not None:
                pytest.fail(f"http.server exited with code {server.returncode} before serving")
            try:
                with urllib.request.urlopen(f"{url}/index.html", timeout=1) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"http.server did not answer on {url} within {SERVER_START_TIMEOUT_S}s")
            time.sleep(0.05)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=5)


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - depends on the environment
        pytest.fail("Python playwright is not installed: pip install playwright", pytrace=False)
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One headless Chromium for the whole session; each test opens its own context(s)."""
    executable = os.environ.get("PTNOTES_CHROMIUM", "/usr/bin/chromium")
    if not Path(executable).is_file():
        pytest.fail(
            f"Chromium not found at {executable}: `apt-get install -y chromium`, or point "
            "PTNOTES_CHROMIUM at a Chromium binary (Playwright's own browser download is not used)",
            pytrace=False,
        )
    browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


def _block_external(route: Route) -> None:
    """Block a request that leaves the local server: the site must not need the network."""
    route.abort("blockedbyclient")


def _new_context(browser: Browser, base_url: str, **options: Any) -> BrowserContext:
    """An offline context: every request that leaves the local server is blocked."""
    options.setdefault("base_url", base_url)
    options.setdefault("locale", "en-US")
    context = browser.new_context(**options)
    context.set_default_timeout(15_000)
    context.route(re.compile(rf"^(?!{re.escape(base_url)}/)"), _block_external)
    return context


@pytest.fixture
def new_context(browser: Browser, base_url: str) -> Iterator[Any]:
    """A factory of fresh contexts, closed at teardown: ``new_context(locale="zh-CN")``."""
    contexts: list[BrowserContext] = []

    def make(**options: Any) -> BrowserContext:
        context = _new_context(browser, base_url, **options)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def reader_tab(browser: Browser, base_url: str) -> Iterator[Any]:
    """``reader_tab(lang)``: one tab per edition that goes from page to page, as a reader does.

    The every-page sweep navigates this tab instead of opening a context per page: a fresh
    context costs a new renderer process, about three quarters of the time of a page, and the
    sweep is most of the run. First-visit state (empty storage, cold cache) is still what
    every other test sees, in its own context.
    """
    tabs: dict[str, Page] = {}
    contexts: list[BrowserContext] = []

    def tab(lang: str) -> Page:
        if lang not in tabs:
            context = _new_context(browser, base_url)
            contexts.append(context)
            tabs[lang] = context.new_page()
        return tabs[lang]

    yield tab
    for context in contexts:
        context.close()


@pytest.fixture
def page(new_context: Any) -> Page:
    """A page in a fresh en-US context."""
    context: BrowserContext = new_context()
    return context.new_page()
