"""What the site derives from the settings: the language switcher's editions and the root page.

Both list the editions of ``[tool.ptnotes] languages``; nothing else names them, so adding a
language is one entry in the table plus its catalogs.
"""

from __future__ import annotations

import argparse
import html
import json
import shutil
import sys
from importlib.resources import files
from pathlib import Path
from string import Template

from ptnotes_dev.settings import Settings, load

__all__ = ["root_page", "switcher_entries", "write_root"]


def switcher_entries(settings: Settings) -> list[dict[str, str]]:
    """The editions as the switcher extension takes them: name, code, and folder URL."""
    return [
        {"name": language.name, "version": language.code, "url": f"/{language.code}/"}
        for language in settings.languages
    ]


def root_page(settings: Settings) -> str:
    """The site's ``index.html``: a link per edition, and a redirect by browser language.

    Editions with a ``browser`` pattern are tried in order; a reader whose browser matches
    none goes to the source language's edition.
    """
    links = "\n".join(
        f'<a class="lang" id="lang-{html.escape(language.code)}" '
        f'href="{html.escape(language.code)}/index.html" '
        f'hreflang="{html.escape(language.html_lang)}">{html.escape(language.name)}</a>'
        for language in settings.languages
    )
    editions = [
        {"code": language.code, "browser": language.browser}
        for language in settings.translations
        if language.browser
    ]
    template = Template(files("ptnotes_dev").joinpath("templates/root.html").read_text("utf-8"))
    return template.substitute(
        html_lang=settings.source_language.html_lang,
        links=links,
        editions=json.dumps(editions, ensure_ascii=False),
        fallback=settings.source_language.code,
    )


def write_root(html_dir: Path, settings: Settings) -> list[Path]:
    """Write the root page and its favicon into ``html_dir`` (the folder of the editions)."""
    html_dir.mkdir(parents=True, exist_ok=True)
    page = html_dir / "index.html"
    page.write_text(root_page(settings), encoding="utf-8")
    favicon = html_dir / "favicon.svg"
    shutil.copyfile(settings.root / "docs" / "_static" / "favicon.svg", favicon)
    return [page, favicon]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the site's root page (index.html).")
    parser.add_argument("html_dir", type=Path, help="the folder that holds the editions")
    args = parser.parse_args(argv)
    for path in write_root(args.html_dir, load()):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
