"""The built site shows the reader links exactly when ``[tool.ptnotes.repository]`` is set."""

from __future__ import annotations

from pathlib import Path

import pytest
from ptnotes_dev.settings import load

from tests.site.pages import LANGUAGES, language_pages

REPOSITORY = load().repository


@pytest.mark.parametrize("lang", LANGUAGES)
def test_reader_links_follow_the_settings(site_dir: Path, lang: str) -> None:
    pages = [p for p in language_pages(site_dir, lang) if not p.startswith(("genindex", "search"))]
    with_links = [
        page
        for page in pages
        if "ptnotes-reader-links" in (site_dir / lang / page).read_text(encoding="utf-8")
    ]
    colab = [
        page
        for page in pages
        if "ptnotes-colab" in (site_dir / lang / page).read_text(encoding="utf-8")
    ]
    if REPOSITORY is None:
        assert with_links == []
        assert colab == []
    else:
        assert sorted(set(pages) - set(with_links)) == []
        assert colab
