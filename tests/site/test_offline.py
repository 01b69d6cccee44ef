"""The copies to take along, checked by ``nox -s offline`` after it builds them.

Each edition's home page links its zip archive, EPUB and PDF; the files exist and are what
they say; the Chinese PDF is set in the Noto CJK fonts. (EPUB validity is epubcheck's, run by
the session.)
"""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.site.pages import LANGUAGES

KINDS = ("zip", "epub", "pdf")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_home_page_links_the_offline_copies(lang: str, site_dir: Path) -> None:
    home = site_dir / lang / "index.html"
    links = re.findall(r'class="[^"]*ptnotes-offline[^"]*" href="([^"]+)"', home.read_text())
    if not links:
        links = re.findall(r'href="([^"]+)"[^>]*class="[^"]*ptnotes-offline', home.read_text())
    assert [url.rsplit(".", 1)[-1] for url in links] == list(KINDS)
    for url in links:
        assert (home.parent / url).is_file(), url


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


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang.startswith("zh")])
def test_chinese_pdf_embeds_the_cjk_fonts(lang: str, site_dir: Path) -> None:
    fonts = subprocess.run(
        ["pdffonts", str(site_dir / lang / "_offline" / f"ptnotes-{lang}.pdf")],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "NotoSerifCJK" in fonts or "NotoSansCJK" in fonts, fonts
