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
def test_archive_holds_the_whole_edition_and_the_other_copies(lang: str, site_dir: Path) -> None:
    own = site_dir / lang / "_offline" / f"ptnotes-{lang}.zip"
    with zipfile.ZipFile(own) as archive:
        names = set(archive.namelist())
        home = archive.read(f"ptnotes-{lang}/index.html").decode()
    root = f"ptnotes-{lang}/"
    built = {
        root + p.relative_to(site_dir / lang).as_posix()
        for p in (site_dir / lang).rglob("*")
        if p.is_file() and p != own and not p.name.startswith(".")
    }
    assert built == names
    # Inside the archive the home page's links to the EPUB and PDF work; its own is text.
    links = re.findall(r'class="[^"]*ptnotes-offline[^"]*" href="([^"]+)"', home)
    assert [url.rsplit(".", 1)[-1] for url in links] == ["epub", "pdf"]
    assert all(root + url in names for url in links)
    assert f"(ptnotes-{lang}.zip)" in home


@pytest.mark.parametrize("lang", LANGUAGES)
def test_epub_and_pdf_are_what_they_say(lang: str, site_dir: Path) -> None:
    folder = site_dir / lang / "_offline"
    with zipfile.ZipFile(folder / f"ptnotes-{lang}.epub") as epub:
        assert epub.read("mimetype") == b"application/epub+zip"
        pages = [n for n in epub.namelist() if n.endswith(".xhtml")]
    assert len(pages) > 50
    pdf = folder / f"ptnotes-{lang}.pdf"
    assert pdf.read_bytes().startswith(b"%PDF-")
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    pages = int(re.search(r"^Pages:\s+(\d+)", info.stdout, re.MULTILINE).group(1))
    assert pages > 100, info.stdout


@pytest.mark.parametrize("lang", LANGUAGES)
def test_pdf_question_pages_end_with_their_drills(lang: str, site_dir: Path) -> None:
    """Each question page's Practice section is in the PDF, as on the site."""
    pdf = site_dir / lang / "_offline" / f"ptnotes-{lang}.pdf"
    command = ["pdftotext", "-enc", "UTF-8", str(pdf), "-"]
    text = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    pages = [p for p in (site_dir / lang).rglob("*.html") if 'id="practice"' in p.read_text()]
    heading = re.search(r'<section id="practice">\s*<h2>(.*?)<a', pages[0].read_text()).group(1)
    assert len(pages) > 40
    assert text.count(heading.strip()) >= len(pages), heading  # the contents list it too


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang.startswith("zh")])
def test_chinese_pdf_embeds_the_cjk_fonts(lang: str, site_dir: Path) -> None:
    fonts = subprocess.run(
        ["pdffonts", str(site_dir / lang / "_offline" / f"ptnotes-{lang}.pdf")],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "NotoSerifCJK" in fonts or "NotoSansCJK" in fonts, fonts


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang.startswith("zh")])
def test_chinese_pdf_numbers_its_chapters_in_chinese(lang: str, site_dir: Path) -> None:
    pdf = site_dir / lang / "_offline" / f"ptnotes-{lang}.pdf"
    command = ["pdftotext", "-enc", "UTF-8", str(pdf), "-"]
    text = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert re.search(r"第\s*2\s*章", text)
    assert "CHAPTER" not in text
