"""Pages outside the sections (glossary, ledger, errata, …) show no empty sidebar."""

from __future__ import annotations

from typing import Any

import pytest

from tests.site.pages import LANGUAGES
from tests.site.test_browser import open_page


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("doc", ["glossary", "claims", "errata", "compatibility", "interview"])
def test_page_without_sections_has_no_empty_sidebar(lang: str, doc: str, page: Any) -> None:
    open_page(page, f"{lang}/{doc}.html")
    assert page.locator("#pst-collapse-sidebar-button").count() == 0
    assert page.locator(".bd-sidebar-primary .bd-links__title").count() == 0
