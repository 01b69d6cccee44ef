"""No source markup leaks into the text of the built zh_CN pages.

A translation can break the markup it carries: in a reST catalog (the gallery, the API pages) an
inline literal directly followed by a CJK character is not recognised, and the reader sees the
backticks and half a sentence in the wrong font; a mistyped MyST role shows as ``{ref}`...```.
This walks every zh_CN page of the built site (``PTNOTES_SITE_DIR``, default ``build/html``) and
looks at its visible text outside code (``pre``, ``code``, ``kbd``, ``samp``, math, scripts,
signatures) and outside quotations of the original notes for
what markup leaves behind: backticks, role syntax (``:py:``, ``:doc:``, ``{ref}``...) and ``**``.
The catalogs themselves are checked, faster and before a build, by
``tests/test_zh_markup_catalogs.py``.
"""

# ruff: noqa: RUF001  (the examples are Chinese text: fullwidth punctuation is the point)
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.site.pages import default_site_dir, language_pages

LANG = "zh_CN"
# Elements whose text is code (or not text): their content may hold backticks legitimately.
CODE_TAGS = frozenset({"pre", "code", "kbd", "samp", "tt", "script", "style", "textarea", "math"})
# Classes whose text is verbatim: math (MathJax's source stays in the page until it is
# typeset), code (Sphinx wraps code tokens in ``span.pre``; API signatures, ``**kwargs``
# included, are ``dt.sig``), and the claims ledger's quotations of the original notes, which
# keep the notes' own characters (``torch.nn.****``).
CODE_CLASSES = frozenset({"math", "highlight", "notranslate", "pre", "sig", "ptnotes-quote"})
VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
LEFTOVER = re.compile(
    r"`"  # a backtick of an unparsed literal, role or link
    r"|\*\*(?![A-Za-z_]\w*(?!\w|\*))"  # unparsed strong emphasis (not a parameter: **extra)
    r"|:(?:py:)?(?:func|class|meth|mod|attr|doc|ref|term|math|data|exc|obj|download):"  # reST role
    r"|:py:"
    r"|\{(?:py:[a-z]+|doc|ref|term|math|download|numref|eq)\}"  # MyST role
)


class ProseText(HTMLParser):
    """The text of a page outside code elements, one string per text node."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: is it (inside) code?
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID_TAGS:
            return
        classes = set((dict(attrs).get("class") or "").split())
        inside = bool(self.stack and self.stack[-1])
        self.stack.append(inside or tag in CODE_TAGS or bool(classes & CODE_CLASSES))

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID_TAGS and self.stack:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if not (self.stack and self.stack[-1]) and data.strip():
            self.texts.append(data)


def leftovers(html: str) -> list[str]:
    """Each text fragment of ``html`` (outside code) that still shows markup, with context."""
    parser = ProseText()
    parser.feed(html)
    parser.close()
    found = []
    for text in parser.texts:
        for match in LEFTOVER.finditer(text):
            start = max(match.start() - 30, 0)
            found.append(f"{match.group()!r} in …{text[start : match.end() + 30].strip()}…")
    return found


def test_leftovers_finds_a_literal_that_rest_did_not_parse() -> None:
    html = "<p>采用 ``normal(0, 0.02)``（偏置为零）时</p><pre>x = `ok`</pre>"
    assert leftovers(html) == ["'`' in …采用 ``normal(0, 0.02)``（偏置为零）时…"] * 4


@pytest.mark.parametrize(
    "html",
    [
        '<p>采用 <code class="docutils literal"><span class="pre">normal(0,</span></code>（</p>',
        '<p>比例 <span class="math notranslate nohighlight">\\(1/\\sqrt{3}\\)</span></p>',
        "<div class='highlight'><pre>a ** 2  # `b`</pre></div>",
        "<li><p><strong>**extra</strong> -- 其他要保存的值</p></li>",
    ],
)
def test_leftovers_ignores_code_and_math(html: str) -> None:
    assert leftovers(html) == []


@pytest.mark.parametrize(
    "html", ["<p>见 {ref}`x`</p>", "<p>见 :doc:`x`</p>", "<p>**加粗**</p>", "<p>:py:func:</p>"]
)
def test_leftovers_finds_role_and_strong_syntax(html: str) -> None:
    assert leftovers(html) != []


def _zh_pages() -> list[str]:
    return language_pages(default_site_dir(), LANG) or ["<site not built>"]


@pytest.fixture(scope="module")
def zh_site() -> Path:
    """The built zh_CN edition; fails (does not skip) when it is missing."""
    edition = default_site_dir() / LANG
    if not (edition / "index.html").is_file():
        pytest.fail(
            f"no built {LANG} edition in {edition}: run `nox -s docs` first (or point "
            "PTNOTES_SITE_DIR at a folder that holds zh_CN/index.html)",
            pytrace=False,
        )
    return edition


@pytest.mark.parametrize("page", _zh_pages())
def test_zh_page_text_has_no_markup_left(page: str, zh_site: Path) -> None:
    found = leftovers((zh_site / page).read_text(encoding="utf-8"))
    assert found == [], f"{LANG}/{page} shows source markup as text:\n" + "\n".join(found)
