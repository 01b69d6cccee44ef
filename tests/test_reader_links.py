"""The reader links (edit, report, Colab) follow ``[tool.ptnotes.repository]``, or are absent."""

from __future__ import annotations

import tomllib
from urllib.parse import parse_qs, urlparse

import pytest
from ptnotes_dev.settings import load, parse
from ptnotes_dev.sphinx import reader_links

SETTINGS = load()
ROOT = SETTINGS.root


def with_repository(**repository: str) -> object:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    data["tool"]["ptnotes"]["repository"] = repository
    return parse(data, ROOT)


def test_no_repository_no_links() -> None:
    plain = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    plain["tool"]["ptnotes"].pop("repository", None)
    assert reader_links.reader_links(parse(plain, ROOT), "en", "tensors/x", "tensors/x.md") == []


def test_source_edition_edits_the_page_and_translation_edits_its_catalog() -> None:
    settings = with_repository(url="https://github.com/example/ptnotes", branch="trunk")
    (_, en_edit), _ = reader_links.reader_links(settings, "en", "tensors/x", "tensors/x.md")
    (_, zh_edit), _ = reader_links.reader_links(settings, "zh_CN", "tensors/x", "tensors/x.md")
    assert en_edit == "https://github.com/example/ptnotes/edit/trunk/docs/tensors/x.md"
    assert zh_edit == (
        "https://github.com/example/ptnotes/edit/trunk/docs/locales/zh_CN/LC_MESSAGES/tensors/x.po"
    )


def test_report_link_prefills_page_and_edition() -> None:
    settings = with_repository(url="https://github.com/example/ptnotes")
    _, (_, report) = reader_links.reader_links(settings, "zh_CN", "tensors/x", "tensors/x.md")
    url = urlparse(report)
    assert url.path == "/example/ptnotes/issues/new"
    query = parse_qs(url.query)
    assert "tensors/x" in query["title"][0]
    assert "Edition: 简体中文 (zh_CN)" in query["body"][0]


def test_colab_opens_the_published_notebook() -> None:
    settings = with_repository(url="https://github.com/example/ptnotes", **{"pages-branch": "site"})
    assert settings.repository is not None
    assert reader_links.colab_url(settings.repository, "en", "_notebooks/tensors/x.ipynb") == (
        "https://colab.research.google.com/github/example/ptnotes/blob/site/en/_notebooks/"
        "tensors/x.ipynb"
    )


@pytest.mark.parametrize(
    ("repository", "message"),
    [
        ({}, "url must be"),
        ({"url": "http://github.com/a/b"}, "url must be"),
        ({"url": "https://github.com/a/b", "branch": ""}, "branch must be"),
        ({"url": "https://github.com/a/b", "owner": "a"}, "unknown key"),
    ],
)
def test_bad_repository_table_is_refused(repository: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        with_repository(**repository)


def test_gallery_page_edits_its_script() -> None:
    settings = with_repository(url="https://github.com/example/ptnotes")
    (_, edit), _ = reader_links.reader_links(
        settings, "en", "auto_examples/plot_weight_init", "auto_examples/plot_weight_init.rst"
    )
    assert edit.endswith("/edit/main/gallery/plot_weight_init.py")
