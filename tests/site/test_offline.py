"""The copies to take along (``nox -s offline``) and the pages outside the sections.

Each edition's home page links its zip archive, EPUB and PDF; the files exist and are what
they say; a page with no section navigation shows no empty sidebar.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.site.pages import LANGUAGES
from tests.site.test_browser import open_page

KINDS = ("zip", "epub", "pdf")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_home_page_links_the_offline_copies(lang: str, page: Any, site_dir: Path) -> None:
    open_page(page, f"{lang}/index.html")
    links = page.locator("a.ptnotes-offline").evaluate_all("links => links.map((a) => a.href)")
    assert [url.rsplit(".", 1)[-1] for url in links] == list(KINDS)
    for url in links:
        response = page.context.request.get(url)
        assert response.status == 200, f"{url}: HTTP {response.status}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_archive_holds_the_whole_edition(lang: str, site_dir: Path) -> None:
    with zipfile.ZipFile(site_dir / lang / "_offline" / f"ptnotes-{lang}.zip") as archive:
        names = set(archive.namelist())
    root = f"ptnotes-{lang}/"
    built = {
        root + p.relative_to(site_dir / lang).as_posix()
        for p in (site_dir / lang).rglob("*.html")
        if "_offline" not in p.parts
    }
    assert built <= names
    assert not any("_offline" in name for name in names)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_epub_and_pdf_are_what_they_say(lang: str, site_dir: Path) -> None:
    folder = site_dir / lang / "_offline"
    with zipfile.ZipFile(folder / f"ptnotes-{lang}.epub") as epub:
        assert epub.read("mimetype") == b"application/epub+zip"
        pages = [n for n in epub.namelist() if n.endswith(".xhtml")]
    assert len(pages) > 50
    pdf = (folder / f"ptnotes-{lang}.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-")
    assert len(re.findall(rb"/Type\s*/Page\b", pdf)) > 100


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("doc", ["glossary", "claims", "errata", "compatibility", "interview"])
def test_page_without_sections_has_no_empty_sidebar(lang: str, doc: str, page: Any) -> None:
    open_page(page, f"{lang}/{doc}.html")
    assert page.locator("#pst-collapse-sidebar-button").count() == 0
    assert page.locator(".bd-sidebar-primary .bd-links__title").count() == 0
