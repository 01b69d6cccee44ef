"""sphinx-gallery's thumbnail titles: code kept, and in the language of the edition.

**Code kept.**
sphinx-gallery turns an example's reST title into the plain text of its thumbnail
(``_sanitize_rst``): it drops the backquotes of an inline literal and then reads every pair
of ``*`` left in the string as emphasis, so the title
``What does ``loss = mean((x*w1 + w2) * (x*w1*w3))`` look like?`` showed on the gallery index
as ``loss = mean((xw1 + w2)  (xw1w3))``. This extension wraps the sanitizer: the text of each
inline literal is set aside before it runs and put back, verbatim, afterwards.

**Translated.** The thumbnails (title and hover text) are raw HTML that sphinx-gallery writes
from each script's docstring, in English; gettext does not see raw HTML. In a translated
edition this extension looks each one up in the gallery scripts' catalogs
(``locales/<language>/LC_MESSAGES/<gallery_dir>/*.po``): the message whose sanitized text is
the thumbnail's text gives the translation, sanitized the same way. A catalog edit re-reads
the pages with thumbnails (they depend on the catalogs).
"""

from __future__ import annotations

import html
import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from babel.messages.pofile import read_po
from docutils import nodes
from sphinx.application import Sphinx

#: An inline literal as the sanitizer recognises it: ``text``, after whitespace or at the start.
LITERAL = re.compile(r"(?<!\S)``([^`]+)``(?=\W|$)")
#: Placeholder of the n-th literal: characters no sanitizer rule touches.
HOLD = "\x00{}\x00"
HELD = re.compile("\x00(\\d+)\x00")


#: An inline literal anywhere: reST also starts one after CJK punctuation (``、``x````).
ANY_LITERAL = re.compile(r"(?<!`)``([^`]+)``(?!`)")


def keep_literals(
    sanitize: Callable[[str], str], literal: re.Pattern[str] = LITERAL
) -> Callable[[str], str]:
    """``sanitize``, except that inline literals come out as their text, unchanged."""

    def sanitize_keeping_literals(string: str) -> str:
        held: list[str] = []

        def hold(match: re.Match[str]) -> str:
            held.append(match.group(1))
            return HOLD.format(len(held) - 1)

        cleaned = sanitize(literal.sub(hold, string))
        return HELD.sub(lambda match: held[int(match.group(1))], cleaned)

    sanitize_keeping_literals.__wrapped__ = sanitize  # type: ignore[attr-defined]
    return sanitize_keeping_literals


#: A thumbnail's title and hover text in sphinx-gallery's raw HTML.
THUMB_TITLE = re.compile(r'(<div class="sphx-glr-thumbnail-title">)(.*?)(</div>)', re.S)
THUMB_TOOLTIP = re.compile(r'(<div class="sphx-glr-thumbcontainer"[^>]*?\btooltip=")([^"]*)(")')
#: reST's escaped whitespace (``\ *word*``): nothing in the text.
ESCAPED_SPACE = re.compile(r"(?<!\\)\\ ")


def _sanitizer() -> Callable[[str], str]:
    gen_rst = importlib.import_module("sphinx_gallery.gen_rst")  # untyped: no stubs
    sanitize: Callable[[str], str] = gen_rst._sanitize_rst
    return sanitize


def thumbnail_text(rest: str, *, translated: bool = False) -> str:
    """A message as sphinx-gallery shows it on a thumbnail (plain text, one line).

    A translation is read as reST reads it: an inline literal may follow CJK punctuation
    (a full-width colon or comma), where sphinx-gallery's English-minded sanitizer would
    keep the backquotes.
    """
    sanitize = _sanitizer()
    if translated:
        sanitize = keep_literals(getattr(sanitize, "__wrapped__", sanitize), ANY_LITERAL)
    return sanitize(ESCAPED_SPACE.sub("", " ".join(rest.split())))


def gallery_catalogs(app: Sphinx) -> list[Path]:
    """The catalogs of the gallery scripts in the language of the edition built."""
    language = app.config.language
    conf = getattr(app.config, "sphinx_gallery_conf", None) or {}
    gallery_dirs = conf.get("gallery_dirs", [])
    if isinstance(gallery_dirs, str):
        gallery_dirs = [gallery_dirs]
    found: list[Path] = []
    for locale_dir in app.config.locale_dirs:
        messages = Path(app.srcdir) / locale_dir / str(language) / "LC_MESSAGES"
        for gallery in gallery_dirs:
            found.extend(sorted((messages / str(gallery)).glob("*.po")))
    return found


def thumbnail_translations(catalogs: list[Path]) -> dict[str, str]:
    """English thumbnail text -> translated thumbnail text, from the scripts' catalogs."""
    translations: dict[str, str] = {}
    for path in catalogs:
        with path.open("rb") as source:
            catalog = read_po(source)
        for message in catalog:
            if not isinstance(message.id, str) or not message.id:
                continue
            if not isinstance(message.string, str) or not message.string or message.fuzzy:
                continue
            translations.setdefault(
                thumbnail_text(message.id), thumbnail_text(message.string, translated=True)
            )
    return translations


def translate_thumbnails(raw_html: str, translations: dict[str, str]) -> str:
    """``raw_html`` with each thumbnail title and hover text that has a translation replaced."""

    def replace(quote: bool) -> Callable[[re.Match[str]], str]:
        def sub(match: re.Match[str]) -> str:
            english = " ".join(html.unescape(match.group(2)).split())
            translated = translations.get(english)
            if translated is None:
                return match.group(0)
            return match.group(1) + html.escape(translated, quote=quote) + match.group(3)

        return sub

    translated = THUMB_TITLE.sub(replace(quote=False), raw_html)
    return THUMB_TOOLTIP.sub(replace(quote=True), translated)


def _translate_doctree(app: Sphinx, doctree: nodes.document) -> None:
    """Translate the thumbnails of a page of a translated edition (e.g. the gallery index)."""
    raws = [
        node
        for node in doctree.findall(nodes.raw)
        if "html" in node.get("format", "").split() and "sphx-glr-thumb" in node.astext()
    ]
    if not raws or not app.config.language:
        return
    catalogs = gallery_catalogs(app)
    for path in catalogs:
        app.env.note_dependency(str(path))
    translations = thumbnail_translations(catalogs)
    for node in raws:
        text = node.astext()
        translated = translate_thumbnails(text, translations)
        if translated != text:
            node.replace(node[0], nodes.Text(translated))


def setup(app: Sphinx) -> dict[str, Any]:
    gen_rst = importlib.import_module("sphinx_gallery.gen_rst")  # untyped: no stubs
    sanitize = gen_rst._sanitize_rst
    if not hasattr(sanitize, "__wrapped__"):
        gen_rst._sanitize_rst = keep_literals(sanitize)  # type: ignore[attr-defined]
    app.connect("doctree-read", _translate_doctree)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
