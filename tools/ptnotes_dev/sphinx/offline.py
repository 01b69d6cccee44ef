"""Links to the copies of an edition a reader can take along: ``{offline-copy}`zip```.

``nox -s offline`` writes, for each edition, ``_offline/ptnotes-<language>.zip`` (the built
HTML edition), ``.epub`` (Sphinx's EPUB builder, checked by epubcheck) and ``.pdf`` (Sphinx's
LaTeX builder through xelatex) into the edition's output folder. The role links the current
edition's file of that kind, relative to the page; in the EPUB and the PDF, which hold no such
file, it writes the file's name alone.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.util.docutils import SphinxRole

from ptnotes_dev.settings import load
from ptnotes_dev.sphinx.matrix import CATALOG

_translate = get_translation(CATALOG)
FOLDER = "_offline"
KINDS = ("zip", "epub", "pdf")


def _(message: str) -> str:
    """``message`` in the language of the edition being built."""
    return str(_translate(message))


#: Every message this extension writes (a test checks that each catalog translates them all).
MESSAGES = (
    "the whole edition as a zip archive (open index.html)",
    "an EPUB for e-readers",
    "a PDF to print",
)


def file_name(language: str, kind: str) -> str:
    """The name of one edition's offline copy of ``kind`` (zip, epub, pdf)."""
    return f"ptnotes-{language}.{kind}"


class OfflineCopy(SphinxRole):
    """``{offline-copy}`pdf``` — a link to this edition's PDF (or zip, or EPUB)."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        kind = self.text.strip()
        if kind not in KINDS:
            message = self.inliner.reporter.error(
                f"offline-copy: unknown kind {kind!r} (one of {', '.join(KINDS)})",
                line=self.lineno,
            )
            return [], [message]
        labels = {
            "zip": _("the whole edition as a zip archive (open index.html)"),
            "epub": _("an EPUB for e-readers"),
            "pdf": _("a PDF to print"),
        }
        name = file_name(self.config.language, kind)
        if self.env.app.builder.name not in {"html", "dirhtml"}:
            return [nodes.Text(f"{labels[kind]} ({name})")], []
        depth = self.env.docname.count("/")
        uri = "../" * depth + f"{FOLDER}/{name}"
        reference = nodes.reference("", labels[kind], refuri=uri, internal=False)
        reference["classes"].append("ptnotes-offline")
        return [reference, nodes.Text(f" ({name})")], []


_INPUT = re.compile(r"<input\b([^>]*?)\s*/?>")
_BARE = re.compile(r"\s(checked|disabled|selected|readonly)(?=[\s/>]|$)")
_SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
_TOOLTIP = re.compile(r'\s+tooltip="[^"]*"')


def xhtml(body: str) -> str:
    """``body`` as EPUB 3 wants its XHTML: void ``<input>`` closed with its boolean
    attributes given values, no inline SVG (sphinx-design's decorative icons, which the
    package would have to declare), and no ``tooltip`` attribute (sphinx-gallery's)."""
    body = _INPUT.sub(lambda m: "<input" + _BARE.sub(r' \1="\1"', m.group(1)) + " />", body)
    body = _SVG.sub("", body)
    return _TOOLTIP.sub("", body)


def _epub_language(app: Sphinx, config: Any) -> None:
    """The EPUB's language as BCP 47 writes it (``zh-CN``), not Sphinx's ``zh_CN``."""
    settings = load(Path(app.srcdir).parent)
    codes = {lang.code: lang.html_lang for lang in settings.languages}
    config.epub_language = codes.get(config.language, config.language.replace("_", "-"))


def _epub_page(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    if app.builder.name != "epub":
        return
    if "body" in context:
        context["body"] = xhtml(context["body"])
    # ptnotes.css filters tables with :has(), which EPUB's CSS 2 profile refuses; an e-reader
    # shows the pages in its own style.
    context["css_files"] = [c for c in context.get("css_files", []) if "ptnotes.css" not in str(c)]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_role("offline-copy", OfflineCopy())
    app.connect("html-page-context", _epub_page)
    app.connect("config-inited", _epub_language)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
