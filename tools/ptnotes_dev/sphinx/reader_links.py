"""The links a reader expects on every page, when ``[tool.ptnotes.repository]`` names one.

* "Edit this page": the page's source on GitHub in the source edition; in a translated
  edition, the page's catalog (``docs/locales/<code>/LC_MESSAGES/<page>.po``), where its
  translation is edited.
* "Report a problem": a new issue, its title and body prefilled with the page and edition.
* "Open in Colab" (beside the notebook download, :mod:`ptnotes_dev.sphinx.notebooks`): the
  page's notebook where the built site is published (the repository's ``pages-branch``).

With no repository in the settings none of these links is rendered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation

from ptnotes_dev.settings import Repository, Settings, load
from ptnotes_dev.sphinx.matrix import CATALOG

_translate = get_translation(CATALOG)


def _(message: str) -> str:
    """``message`` in the language of the edition being built."""
    return str(_translate(message))


#: Every message this extension writes (a test checks that each catalog translates them all).
MESSAGES = ("Edit this page", "Report a problem")


def edit_url(repo: Repository, settings: Settings, language: str, source: str) -> str:
    """Where ``source`` (``tensors/add-dimension.md``, relative to docs/) is edited."""
    if language == settings.source_language.code:
        # A gallery page is generated from its script: the script is what is edited.
        gallery = source.startswith("auto_examples/plot_")
        path = f"gallery/{Path(source).stem}.py" if gallery else f"docs/{source}"
    else:
        path = f"docs/locales/{language}/LC_MESSAGES/{Path(source).with_suffix('.po').as_posix()}"
    return f"{repo.url}/edit/{repo.branch}/{quote(path)}"


def report_url(repo: Repository, settings: Settings, language: str, docname: str) -> str:
    """A new issue about ``docname`` in the edition ``language``, prefilled."""
    edition = settings.language(language).name
    query = urlencode(
        {
            "title": f"{docname} ({edition}): ",
            "body": f"Page: {docname}\nEdition: {edition} ({language})\n\nWhat is wrong:\n",
        }
    )
    return f"{repo.url}/issues/new?{query}"


def colab_url(repo: Repository, language: str, notebook: str) -> str:
    """The notebook ``notebook`` (``_notebooks/…``) of an edition, opened in Colab."""
    return (
        f"https://colab.research.google.com/github/{repo.slug}/blob/{repo.pages_branch}/"
        f"{language}/{quote(notebook)}"
    )


def reader_links(
    settings: Settings, language: str, docname: str, source: str
) -> list[tuple[str, str]]:
    """The (label, URL) pairs of one page: none without a repository."""
    repo = settings.repository
    if repo is None:
        return []
    return [
        (_("Edit this page"), edit_url(repo, settings, language, source)),
        (_("Report a problem"), report_url(repo, settings, language, docname)),
    ]


def _add_links(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html" or app.builder.name not in {"html", "dirhtml"}:
        return
    settings = load(Path(app.srcdir).parent)
    source = Path(app.env.doc2path(docname)).relative_to(app.srcdir).as_posix()
    pairs = reader_links(settings, app.config.language, docname, source)
    top = next(iter(doctree.findall(nodes.section)), None)
    if not pairs or top is None:
        return
    paragraph = nodes.paragraph("", "", classes=["ptnotes-reader-links"])
    paragraph["translatable"] = False
    for index, (label, url) in enumerate(pairs):
        if index:
            paragraph += nodes.Text(" · ")
        paragraph += nodes.reference("", label, refuri=url, internal=False)
    top += paragraph


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("doctree-resolved", _add_links)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
