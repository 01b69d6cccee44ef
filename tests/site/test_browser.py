"""The built site as readers see it, in a real (headless) Chromium.

Both editions (en, zh_CN) are exercised: every page loads cleanly, the language switcher lands
on the same page in the other edition, search finds a term, the copy button copies only code,
the gallery's figures and downloads are served, and the root page picks the reader's language.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.site.pages import LANGUAGES, SCREENSHOTS, SETTINGS, PageProblems, language_pages

if TYPE_CHECKING:
    from playwright.sync_api import Page, Response

MODEL_PAGE = "tensors/tensor-vs-Tensor.html"
# Each edition's switcher leads to the next one (the last back to the first).
OTHER = dict(zip(LANGUAGES, (*LANGUAGES[1:], LANGUAGES[0]), strict=True))
HTML_LANG = {language.code: language.html_lang for language in SETTINGS.languages}
# copybutton's prompt setting (docs/conf.py: copybutton_prompt_text, as a regexp).
PROMPT = re.compile(r"^(>>> |\.\.\. |\$ )(.*)")

SWITCHERS_POPULATED = """() => {
    const menus = [...document.querySelectorAll('.version-switcher__menu')];
    return menus.every((menu) => menu.querySelector('a[data-version]') !== null);
}"""
IMAGES_LOADED = """(selector) => [...document.querySelectorAll(selector)].every(
    (img) => img.complete)"""


def open_page(page: Page, path: str) -> Response:
    """Go to ``path`` (relative to the server root), wait for ``load`` and the switcher's JS."""
    response = page.goto(f"/{path}", wait_until="load")
    assert response is not None, f"no response for /{path}"
    page.wait_for_function(SWITCHERS_POPULATED)
    return response


def navigation_response(page: Page) -> Any:
    """Context manager waiting for the response to the next top-level navigation of ``page``."""
    return page.expect_response(
        lambda r: r.request.is_navigation_request() and r.request.frame == page.main_frame
    )


# -- every page --------------------------------------------------------------------------


def test_page_loads_without_errors(site_page: str, reader_tab: Any) -> None:
    lang = site_page.split("/", 1)[0]
    page: Page = reader_tab(lang)
    problems = PageProblems().watch(page)
    try:
        response = open_page(page, site_page)
        html_lang = page.evaluate("document.documentElement.lang")
    finally:
        problems.unwatch()

    assert response.status == 200
    assert html_lang == HTML_LANG[lang]
    assert problems.external == [], f"/{site_page} requested other hosts: {problems.external}"
    assert not problems.problems, f"/{site_page}:\n{problems}"


# -- math, offline ------------------------------------------------------------------------

MATH_MARK = 'class="math notranslate'
MATHJAX_RENDERED = "() => document.querySelectorAll('mjx-container').length"


def math_pages(site: Path, lang: str) -> list[str]:
    """The pages of an edition that hold math (Sphinx marks it ``class="math notranslate"``)."""
    return [
        page
        for page in language_pages(site, lang)
        if MATH_MARK in (site / lang / page).read_text(encoding="utf-8")
    ]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_math_renders_with_the_network_blocked(lang: str, page: Page, site_dir: Path) -> None:
    """MathJax comes from the site itself: with every other host blocked, math is typeset."""
    pages = math_pages(site_dir, lang)
    assert pages, f"no page of {lang} holds math: nothing proves that math renders offline"
    problems = PageProblems().watch(page)
    for path in pages:
        open_page(page, f"{lang}/{path}")
        page.wait_for_function(f"({MATHJAX_RENDERED})() > 0", timeout=15_000)
        assert page.locator("mjx-container").count() > 0, f"{lang}/{path}: no MathJax output"
    assert problems.external == [], f"pages with math requested other hosts: {problems.external}"
    assert not problems.problems, str(problems)


# -- language switcher --------------------------------------------------------------------


def switch_language(page: Page, to: str, heads: list[tuple[str, int]]) -> None:
    """Open the navbar's language menu and pick ``to``, as a reader does."""
    page.locator(".version-switcher__button").filter(visible=True).click()
    item = page.locator(f".version-switcher__menu a[data-version='{to}']").filter(visible=True)
    target = item.evaluate("a => a.href")
    item.click()
    page.wait_for_url(target, wait_until="load")
    page.wait_for_function(SWITCHERS_POPULATED)
    assert (target, 200) in heads, f"the switcher did not check {target} with a HEAD first: {heads}"


@pytest.mark.parametrize("path", ["index.html", MODEL_PAGE])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_language_switcher_lands_on_same_page(
    lang: str, path: str, page: Page, base_url: str
) -> None:
    problems = PageProblems().watch(page)
    heads: list[tuple[str, int]] = []

    def record_head(response: Response) -> None:
        if response.request.method == "HEAD":
            heads.append((response.url, response.status))

    page.on("response", record_head)
    open_page(page, f"{lang}/{path}")

    switch_language(page, OTHER[lang], heads)
    assert page.url == f"{base_url}/{OTHER[lang]}/{path}"
    button = page.locator(".version-switcher__button").filter(visible=True)
    assert button.get_attribute("data-active-version") == OTHER[lang]

    switch_language(page, lang, heads)
    assert page.url == f"{base_url}/{lang}/{path}"
    assert not problems.problems, str(problems)


# -- search -------------------------------------------------------------------------------


def where_in_search_index(site_dir: Path, lang: str, term: str) -> str:
    """Which parts of an edition's search index hold ``term``, to explain an empty search."""
    text = (site_dir / lang / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    found = []
    for part in ("terms", "titleterms"):
        if term in index.get(part, {}):
            found.append(f"{part} (as a whole word)")
    for part in ("alltitles", "indexentries"):
        keys = [key for key in index.get(part, {}) if term in key]
        if keys:
            found.append(f"{part} inside {keys[:3]}")
    if not found:
        return f"{term!r} is not in {lang}/searchindex.js"
    return f"{term!r} is in {lang}/searchindex.js: " + "; ".join(found)


@pytest.mark.parametrize(
    ("lang", "term"),
    [
        ("en", "detach"),
        # A glossary term of the zh edition. Needs the translated glossary, a working zh
        # search (DESIGN.md: jieba, ChineseStemmer) and the term indexed as one word: jieba
        # splits it into 叶子 + 张量 while the browser searches for the unsplit query, so it
        # is found only as a whole word (a jieba user dictionary) or as most of a title or
        # index entry (Sphinx's rule: query length >= half the entry's length).
        ("zh_CN", "叶子张量"),
    ],
    ids=["en-detach", "zh_CN-leaf-tensor"],
)
def test_search_finds_term(lang: str, term: str, page: Page, site_dir: Path) -> None:
    problems = PageProblems().watch(page)
    open_page(page, f"{lang}/index.html")

    page.locator(".search-button__button").filter(visible=True).click()
    field = page.locator("#pst-search-dialog input[name='q']")
    field.fill(term)
    field.press("Enter")
    page.wait_for_url(re.compile(r"/search\.html\?q="), wait_until="load")

    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    results = page.locator("#search-results ul.search li a")
    try:
        results.first.wait_for(state="attached", timeout=10_000)
    except PlaywrightTimeout:
        summary = page.locator("#search-results").inner_text()
        pytest.fail(
            f"searching {term!r} in the {lang} edition found nothing; the page says "
            f"{summary!r}; {where_in_search_index(site_dir, lang, term)}\n{problems}",
            pytrace=False,
        )
    assert results.count() > 0

    with navigation_response(page) as first:
        results.first.click()
    assert first.value.status == 200, first.value.url
    page.wait_for_load_state("load")
    assert not problems.problems, str(problems)


# -- copy button --------------------------------------------------------------------------


def expected_copy(block_text: str) -> str:
    """What copybutton should copy: prompt lines without the prompt, and blank lines."""
    lines = []
    for line in block_text.split("\n"):
        match = PROMPT.match(line)
        if match:
            lines.append(match.group(2))
        elif not line.strip():
            lines.append(line)
    return "\n".join(lines).removesuffix("\n")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_copy_button_copies_only_code(lang: str, new_context: Any) -> None:
    context = new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    problems = PageProblems().watch(page)
    open_page(page, f"{lang}/{MODEL_PAGE}")

    block, text = None, ""
    for candidate in page.locator("div.highlight-pycon div.highlight").all():
        text = candidate.locator("pre").inner_text()
        if any(line.strip() and not PROMPT.match(line) for line in text.split("\n")):
            block = candidate  # an example that shows output as well as code
            break
    assert block is not None, f"no `>>>` example with output on {lang}/{MODEL_PAGE}"

    block.hover()
    block.locator("button.copybtn").click()
    copied = page.evaluate("navigator.clipboard.readText()")

    output_lines = [line for line in text.split("\n") if line.strip() and not PROMPT.match(line)]
    assert copied.strip(), "the copy button put nothing on the clipboard"
    assert ">>>" not in copied
    assert not set(output_lines) & set(copied.split("\n")), f"output lines were copied:\n{copied}"
    assert copied == expected_copy(text)
    assert not problems.problems, str(problems)


# -- gallery ------------------------------------------------------------------------------


def assert_images_render(page: Page, selector: str) -> int:
    """Every image matching ``selector`` decoded with a real size; returns how many."""
    images = page.locator(selector)
    for image in images.all():
        image.scroll_into_view_if_needed()
    page.wait_for_function(IMAGES_LOADED, arg=selector)
    sizes = images.evaluate_all("imgs => imgs.map((img) => [img.src, img.naturalWidth])")
    broken = [src for src, width in sizes if width <= 0]
    assert not broken, f"images that did not render: {broken}"
    return len(sizes)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_gallery_thumbnails_render(lang: str, page: Page) -> None:
    problems = PageProblems().watch(page)
    open_page(page, f"{lang}/auto_examples/index.html")

    count = assert_images_render(page, ".sphx-glr-thumbcontainer img")

    assert count > 0, "the gallery index shows no thumbnails"
    assert not problems.problems, str(problems)


def test_gallery_example_figures_and_downloads(example_page: str, reader_tab: Any) -> None:
    page: Page = reader_tab(example_page.split("/", 1)[0])
    problems = PageProblems().watch(page)
    try:
        open_page(page, example_page)
        figures = assert_images_render(page, "img.sphx-glr-single-img, img.sphx-glr-multi-img")
        downloads = {
            suffix: page.locator(f".sphx-glr-download-{kind} a.download").evaluate_all(
                "links => links.map((a) => a.href)"
            )
            for kind, suffix in [("python", ".py"), ("jupyter", ".ipynb")]
        }
    finally:
        problems.unwatch()

    assert figures > 0, f"{example_page} shows no figure"
    for suffix, urls in downloads.items():
        assert len(urls) == 1, f"{example_page}: {len(urls)} {suffix} download links"
        url = urls[0]
        assert url.endswith(suffix), url
        response = page.context.request.get(url)
        assert response.status == 200, f"{url}: HTTP {response.status}"
        body = response.text()
        if suffix == ".ipynb":
            assert json.loads(body)["cells"], f"{url}: a notebook without cells"
        else:
            assert "import" in body, f"{url}: not the example's script"
    assert not problems.problems, str(problems)


# -- root page: language choice -----------------------------------------------------------


@pytest.mark.parametrize(("locale", "lang"), [("en-US", "en"), ("zh-CN", "zh_CN"), ("fr-FR", "en")])
def test_root_redirects_by_browser_language(
    locale: str, lang: str, new_context: Any, base_url: str
) -> None:
    page = new_context(locale=locale).new_page()
    problems = PageProblems().watch(page)

    page.goto("/", wait_until="commit")
    page.wait_for_url(f"{base_url}/{lang}/index.html", wait_until="load")

    assert page.evaluate("document.documentElement.lang") == HTML_LANG[lang]
    assert not problems.problems, str(problems)


def test_root_choose_stays_on_chooser(new_context: Any, base_url: str) -> None:
    page = new_context(locale="zh-CN").new_page()
    problems = PageProblems().watch(page)

    response = page.goto("/index.html?choose", wait_until="load")

    assert response is not None
    assert response.status == 200
    assert page.url == f"{base_url}/index.html?choose"
    for lang in LANGUAGES:
        assert page.locator(f"a.lang[href='{lang}/index.html']").is_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "root-choose.png", full_page=True)
    assert not problems.problems, str(problems)


# -- screenshots --------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["index.html", MODEL_PAGE])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_screenshot(lang: str, path: str, page: Page) -> None:
    problems = PageProblems().watch(page)
    open_page(page, f"{lang}/{path}")
    page.evaluate("document.fonts.ready.then(() => true)")

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    target = SCREENSHOTS / f"{lang}-{Path(path).stem}.png"
    page.screenshot(path=target, full_page=True)

    assert target.stat().st_size > 10_000, f"{target} looks empty"
    assert not problems.problems, str(problems)
