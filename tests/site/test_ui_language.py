"""A translated edition speaks its language, and the language switcher works from disk.

* The theme's words (navbar, sidebars, footer, buttons, accessible names) are translated: on a
  sample of pages of every translated edition, the Latin-letter words of that chrome are only
  names from :data:`ALLOWED` (code and page titles are not chrome: the catalogs' own tests
  cover page text).
* The gallery's thumbnails (raw HTML that sphinx-gallery writes in English) show the
  translated titles and hover texts.
* Opened from disk (``file://``), every page's language switcher lists every edition and leads
  to the same page in it. Search snippets cannot work there (the search page fetches each
  result's page, which Chromium refuses on ``file://``): the README and the root page say how
  to serve the site, and a test checks that the root page says so.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.site.pages import LANGUAGES, SETTINGS, PageProblems
from tests.site.test_browser import MODEL_PAGE, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

TRANSLATED = LANGUAGES[1:]
UI_PAGES = ["index.html", MODEL_PAGE, "auto_examples/index.html", "api/index.html"]
#: Latin-letter words a translated edition's chrome may show: names, not UI words.
ALLOWED = frozenset(
    {
        "ptnotes",
        "PyTorch",
        "torch",
        "Python",
        "Sphinx",
        "pydata",
        "GitHub",
        "API",
        "CPU",
        "GPU",
        "CUDA",
        "NumPy",
        "Ctrl",  # the search button's keyboard shortcut, Ctrl+K
        "K",
        # each edition's name for itself, in the language switcher
        "English",
        *(word for language in SETTINGS.languages for word in language.name.split()),
    }
)
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")

#: Text and accessible names of the theme's chrome, with where each was found. Code, and links
#: that show a page's title or a heading (toctree, page contents, breadcrumbs, previous/next),
#: are content, not chrome.
CHROME_TEXT = """() => {
    const CHROME = [
        ".bd-header", ".bd-sidebar-primary", ".bd-sidebar-secondary", ".bd-header-article",
        ".bd-footer-article", ".prev-next-footer", ".bd-footer", ".search-button__wrapper",
        "#pst-back-to-top",
    ].join(", ");
    const CODE = "pre, code, kbd, .highlight, script, style";
    const TITLES = "a.reference, a.nav-internal, .prev-next-title, "
        + ".breadcrumb-item:not(.breadcrumb-home)";
    const where = (el) => el.tagName.toLowerCase()
        + (el.id ? "#" + el.id : "") + [...el.classList].slice(0, 2).map((c) => "." + c).join("");
    const found = [];
    for (const root of document.querySelectorAll(CHROME)) {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const parent = node.parentElement;
            if (parent.closest(CODE) || parent.closest(TITLES)) continue;
            const text = node.textContent.trim();
            if (text) found.push([where(parent), text]);
        }
    }
    const NAMES = [
        "aria-label", "title", "placeholder", "alt", "data-tooltip", "aria-roledescription",
    ];
    for (const el of document.body.querySelectorAll(NAMES.map((a) => `[${a}]`).join(", "))) {
        if (el.closest("a.reference")) continue;  // a reference's title names its target
        for (const attribute of NAMES) {
            const value = el.getAttribute(attribute);
            if (value) found.push([`${where(el)}[${attribute}]`, value]);
        }
    }
    for (const button of document.body.querySelectorAll("button, [role=button]")) {
        const text = button.innerText.trim();
        if (text && !button.closest(CHROME)) found.push([where(button), text]);
    }
    return found;
}"""


def english_words(texts: list[list[str]]) -> dict[str, str]:
    """Latin-letter words outside :data:`ALLOWED`, each with the first place it was found."""
    words: dict[str, str] = {}
    for where, text in texts:
        for word in LATIN_WORD.findall(text):
            if word not in ALLOWED:
                words.setdefault(word, f"{where}: {text[:60]!r}")
    return words


@pytest.mark.parametrize("path", UI_PAGES)
@pytest.mark.parametrize("lang", TRANSLATED)
def test_translated_chrome_has_no_english_word(lang: str, path: str, page: Page) -> None:
    problems = PageProblems().watch(page)
    open_page(page, f"{lang}/{path}")
    found = english_words(page.evaluate(CHROME_TEXT))
    assert found == {}, f"/{lang}/{path}: words of the theme's chrome left in English:\n" + (
        "\n".join(f"  {word}  ({where})" for word, where in found.items())
    )
    assert not problems.problems, str(problems)


# -- gallery thumbnails ---------------------------------------------------------------------

THUMBNAILS = """() => [...document.querySelectorAll('.sphx-glr-thumbcontainer')].map((card) => ({
    href: card.querySelector('a').getAttribute('href'),
    title: card.querySelector('.sphx-glr-thumbnail-title').textContent.trim(),
    tooltip: card.getAttribute('tooltip') || '',
}))"""


@pytest.mark.parametrize("lang", TRANSLATED)
def test_gallery_thumbnails_are_translated(lang: str, page: Page) -> None:
    source = LANGUAGES[0]
    open_page(page, f"{source}/auto_examples/index.html")
    english = {card["href"]: card for card in page.evaluate(THUMBNAILS)}
    open_page(page, f"{lang}/auto_examples/index.html")
    translated = {card["href"]: card for card in page.evaluate(THUMBNAILS)}
    heading = {
        href: page.locator(f".sphx-glr-thumbcontainer a[href='{href}'] span").text_content()
        for href in translated
    }

    assert english, "no thumbnails on the gallery index"
    assert translated.keys() == english.keys()
    for href, card in translated.items():
        assert card["title"] != english[href]["title"], f"{href}: title left in English"
        assert card["tooltip"] != english[href]["tooltip"], f"{href}: hover text left in English"
        # the thumbnail shows the title the example's page has in this edition
        assert " ".join(card["title"].split()) == " ".join(str(heading[href]).split())
        assert "``" not in card["title"] + card["tooltip"], f"{href}: reST markup shows"


# -- reading from disk ----------------------------------------------------------------------

DISK_PAGES = ["index.html", MODEL_PAGE, "auto_examples/index.html"]
SWITCHER_ITEMS = """() => [...document.querySelectorAll('.version-switcher__menu')]
    .filter((menu) => menu.offsetParent !== null || menu.parentElement.offsetParent !== null)
    .slice(0, 1)
    .flatMap((menu) => [...menu.querySelectorAll('a[data-version]')])
    .map((a) => ({ version: a.dataset.version, name: a.textContent.trim(), href: a.href }))"""


@pytest.fixture
def disk_page(browser: Browser) -> Any:
    """A page for ``file://`` urls; any request to a host is blocked (the site is offline)."""
    context = browser.new_context(locale="en-US")
    context.set_default_timeout(15_000)
    context.route(re.compile(r"^(https?|wss?)://"), lambda route: route.abort("blockedbyclient"))
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("path", DISK_PAGES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_language_switcher_works_from_disk(
    lang: str, path: str, disk_page: Page, site_dir: Path
) -> None:
    page = disk_page
    problems = PageProblems().watch(page)
    page.goto((site_dir / lang / path).as_uri(), wait_until="load")
    items = page.evaluate(SWITCHER_ITEMS)

    assert [item["version"] for item in items] == list(LANGUAGES)
    assert [item["name"] for item in items] == [language.name for language in SETTINGS.languages]
    for item in items:
        assert item["href"] == (site_dir / item["version"] / path).as_uri()

    other = next(code for code in LANGUAGES if code != lang)
    page.locator(".version-switcher__button").filter(visible=True).click()
    page.locator(f".version-switcher__menu a[data-version='{other}']").filter(visible=True).click()
    page.wait_for_url((site_dir / other / path).as_uri(), wait_until="load")
    button = page.locator(".version-switcher__button").filter(visible=True)
    assert button.get_attribute("data-active-version") == other
    assert problems.external == []
    assert not problems.problems, str(problems)


def test_root_page_says_how_to_serve_the_site(site_dir: Path) -> None:
    root = (site_dir / "index.html").read_text(encoding="utf-8")
    assert "python3 -m http.server --directory build/html" in root
