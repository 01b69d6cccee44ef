"""Links to the copies of an edition a reader can take along: ``{offline-copy}`zip```.

``nox -s offline`` writes, for each edition, ``_offline/ptnotes-<language>.zip`` (the built
HTML edition), ``.epub`` (Sphinx's EPUB builder, checked by epubcheck) and ``.pdf`` (Sphinx's
LaTeX builder through xelatex) into the edition's output folder. The role links the current
edition's file of that kind, relative to the page; in the EPUB and the PDF, which hold no such
file, it writes the file's name alone.
"""

from __future__ import annotations

import argparse
import os
import re
import zipfile
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


def _own_link(language: str) -> re.Pattern[str]:
    href = rf"(?:\.\./)*{FOLDER}/{re.escape(file_name(language, 'zip'))}"
    return re.compile(rf'<a class="ptnotes-offline[^"]*" href="{href}">(.*?)</a>')


def write_archive(edition: Path, language: str) -> Path:
    """Write ``edition``'s zip into its ``_offline`` folder and return its path.

    The archive holds the built edition under ``ptnotes-<language>/``, with the EPUB and PDF
    already in ``_offline/`` (so the home page's links to them work inside the archive); its
    own link becomes plain text there, as the archive cannot hold itself. It is written beside
    its place first, so a half-written zip never takes the place of a whole one.
    """
    folder = edition / FOLDER
    target = folder / file_name(language, "zip")
    partial = folder / f".{target.name}.partial"
    own = _own_link(language)
    root = Path(target.stem)
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(edition.rglob("*")):
                relative = path.relative_to(edition)
                if not path.is_file() or path == target or path.name.startswith("."):
                    continue
                if path.suffix == ".html":
                    page = path.read_text(encoding="utf-8")
                    archive.writestr(str(root / relative), own.sub(r"<span>\1</span>", page))
                else:
                    archive.write(path, root / relative)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
    return target


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


#: A Chinese chapter heading, 第 2 章 (fncychap, Sphinx's default, prints "CHAPTER 2").
CHINESE_CHAPTERS = (
    r"\usepackage{titlesec}"
    r"\titleformat{\chapter}[display]{\normalfont\sffamily\huge\bfseries}"
    r"{第\,\thechapter\,章}{12pt}{\Huge}"
)


def _edition_settings(app: Sphinx, config: Any) -> None:
    """Per edition: the EPUB's language as BCP 47 writes it (``zh-CN``, not Sphinx's
    ``zh_CN``), and the PDF's chapter headings in Chinese for a Chinese edition."""
    settings = load(Path(app.srcdir).parent)
    codes = {lang.code: lang.html_lang for lang in settings.languages}
    config.epub_language = codes.get(config.language, config.language.replace("_", "-"))
    if config.language.startswith("zh"):
        elements = dict(config.latex_elements)
        elements["fncychap"] = ""
        elements["preamble"] = elements.get("preamble", "") + CHINESE_CHAPTERS
        config.latex_elements = elements


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
    app.connect("config-inited", _edition_settings)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> None:
    """``python -m ptnotes_dev.sphinx.offline EDITION LANGUAGE``: write the edition's zip."""
    parser = argparse.ArgumentParser(description=write_archive.__doc__)
    parser.add_argument("edition", type=Path, help="the built edition, e.g. build/html/en")
    parser.add_argument("language", help="its language code, e.g. en")
    args = parser.parse_args(argv)
    if not (args.edition / "index.html").is_file():
        parser.error(f"{args.edition} holds no built edition (no index.html)")
    print(write_archive(args.edition, args.language))


if __name__ == "__main__":
    main()
