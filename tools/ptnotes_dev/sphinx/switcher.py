"""The language switcher and the theme's words, in the language of the edition built.

The switcher is the pydata theme's version switcher, rendered by the page itself
(``docs/_templates/version-switcher.html``) instead of filled in by the theme's script from a
fetched ``switcher.json``: a page opened from disk (``file://``) cannot fetch, and the
entries' root-absolute urls (``/en/``) lead nowhere there. Each page links to itself in every
edition by a relative url, so the switcher works served and from disk alike.

Config:
    ``ptnotes_switcher`` — the editions (``name``, ``version``, ``url``), from
    :func:`ptnotes_dev.site.switcher_entries`; ``url`` is the edition's folder, root-absolute
    (``/zh_CN/``) or a full ``https://`` url.

Template context (every page):
    ``ptnotes_editions`` — per edition: ``name``, ``version``, ``lang`` (its ``html-lang``),
    ``href`` (this page in that edition) and ``active``;
    ``ptnotes_edition`` — the entry of the edition built;
    ``ptnotes_ui`` — :data:`UI_MESSAGES` translated (``ptnotes_ui["Language"]``).

The theme's own words: its catalogs leave some in English (``Collapse Sidebar``,
``Breadcrumb``) and some are theme options (``header_dropdown_text``: ``More``). They come from
the project's extension catalog (``locales/<language>/LC_MESSAGES/ptnotes_dev.po``,
:data:`UI_MESSAGES`): the options are set per edition in a ``config-inited`` hook
(``-D language=zh_CN`` is applied after ``conf.py`` runs), and the template messages are put
in front of Sphinx's ``sphinx`` catalog, which the theme's templates translate with. Adding a
language stays one entry in ``[tool.ptnotes] languages`` plus its catalogs.
"""

from __future__ import annotations

import posixpath
from functools import cache
from gettext import GNUTranslations
from io import BytesIO
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from sphinx import locale as sphinx_locale
from sphinx.application import Sphinx
from sphinx.config import Config

from ptnotes_dev.settings import load

CATALOG = "ptnotes_dev"
#: The theme's words its catalogs leave in English (its zh catalog: empty, or "Breadcrumb"
#: for "Breadcrumb"); the theme's templates translate them with Sphinx's ``sphinx`` catalog.
THEME_MESSAGES = (
    "Collapse Sidebar",
    "Expand Sidebar",
    "Breadcrumb",
    "Color mode",
    "System Settings",
    "© Copyright %(copyright)s.",
    "Copyright %(copyright)s",
)
#: Theme options that are words, and their English value (the theme's default).
OPTION_MESSAGES = {
    "header_dropdown_text": "More",
    "search_bar_text": "Search the docs ...",
}
#: The language switcher's words (docs/_templates/version-switcher.html).
SWITCHER_MESSAGES = ("Language", "Language: {name}")
#: Every message of this extension (tests/site/test_ui_language.py finds any left in English).
UI_MESSAGES = (*THEME_MESSAGES, *OPTION_MESSAGES.values(), *SWITCHER_MESSAGES)


def _catalog(po: Path) -> dict[str, str]:
    """The translated messages of a catalog file (``{}`` when there is none)."""
    if not po.exists():
        return {}
    return _read_catalog(po, po.stat().st_mtime_ns)


@cache
def _read_catalog(po: Path, mtime_ns: int) -> dict[str, str]:
    """:func:`_catalog`, read once per version of the file."""
    with po.open("rb") as source:
        catalog = read_po(source)
    return {
        message.id: message.string
        for message in catalog
        if isinstance(message.id, str)
        and message.id
        and isinstance(message.string, str)
        and message.string
        and not message.fuzzy
    }


def _po(srcdir: str | Path, language: str) -> Path:
    return Path(srcdir) / "locales" / language / "LC_MESSAGES" / f"{CATALOG}.po"


def translations(srcdir: str | Path, language: str) -> dict[str, str]:
    """Every translated message of the extension catalog of ``language``."""
    return _catalog(_po(srcdir, language))


def ui_strings(srcdir: str | Path, language: str) -> dict[str, str]:
    """:data:`UI_MESSAGES` in ``language`` (English where the catalog lacks one)."""
    found = translations(srcdir, language)
    return {message: found.get(message, message) for message in UI_MESSAGES}


def _install_theme_messages(app: Sphinx) -> None:
    """Put :data:`THEME_MESSAGES` of the edition built first in Sphinx's ``sphinx`` catalog.

    First, not as a fallback: a theme catalog that "translates" a message into English
    (``Breadcrumb``) would otherwise win. Catalogs added later (the theme's) still fall back
    behind it.
    """
    found = translations(app.srcdir, app.config.language or "en")
    catalog = Catalog(locale=None, domain="sphinx")
    for message in THEME_MESSAGES:
        if message in found:
            catalog.add(message, found[message])
    buffer = BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    ours = GNUTranslations(buffer)
    previous = sphinx_locale.translators.get(("general", "sphinx"))
    if previous is not None:
        ours.add_fallback(previous)
    sphinx_locale.translators["general", "sphinx"] = ours
    app.translator = ours


def _configure_edition(app: Sphinx, config: Config) -> None:
    """Theme options of the edition built: its words, and no fetched switcher."""
    found = translations(app.srcdir, config.language or "en")
    options = dict(config.html_theme_options)
    for option, english in OPTION_MESSAGES.items():
        options[option] = found.get(english, english)
    # The switcher is rendered by the page (docs/_templates/version-switcher.html): the
    # theme's script must not fetch a switcher.json.
    options.pop("switcher", None)
    config.html_theme_options = options
    # The copyright holder, when the catalog names it in this language ("ptnotes 贡献者").
    author = str(config.author or "")
    if author in found and config.copyright:
        config.copyright = str(config.copyright).replace(author, found[author])
    # The words as a config value of the "html" kind: when a translation changes, Sphinx
    # sees a new build configuration and writes every page again, not just the edited ones.
    config.ptnotes_ui_translations = {
        message: found[message] for message in (*UI_MESSAGES, author) if message in found
    }


@cache
def _html_langs() -> dict[str, str]:
    """Each edition's ``lang`` attribute (``[tool.ptnotes] languages``)."""
    return {language.code: language.html_lang for language in load().languages}


def _relative_to_site(pagename: str) -> str:
    """The path from page ``pagename`` of an edition to the site root above the editions."""
    return "../" * (pagename.count("/") + 1)


def editions(app: Sphinx, pagename: str) -> list[dict[str, Any]]:
    """The switcher's entries for ``pagename``: this page in every edition."""
    current = app.config.language or "en"
    html_langs = _html_langs()
    up = _relative_to_site(pagename)
    entries = []
    for entry in app.config.ptnotes_switcher:
        url = str(entry["url"])
        base = url if "://" in url else up + url.lstrip("/")
        if base and not base.endswith("/"):
            base += "/"
        version = str(entry["version"])
        entries.append(
            {
                "name": str(entry["name"]),
                "version": version,
                "lang": html_langs.get(version, version.replace("_", "-")),
                "href": posixpath.join(base, f"{pagename}.html") if base else f"{pagename}.html",
                "active": version == current,
            }
        )
    return entries


def _page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    entries = editions(app, pagename)
    context["ptnotes_editions"] = entries
    context["ptnotes_edition"] = next((e for e in entries if e["active"]), None)
    context["ptnotes_ui"] = ui_strings(app.srcdir, app.config.language or "en")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("ptnotes_switcher", [], "html", types=[list])
    app.add_config_value("ptnotes_ui_translations", {}, "html", types=[dict])
    _install_theme_messages(app)
    app.connect("config-inited", _configure_edition)
    app.connect("html-page-context", _page_context)
    return {"version": "2.0", "parallel_read_safe": True, "parallel_write_safe": True}
