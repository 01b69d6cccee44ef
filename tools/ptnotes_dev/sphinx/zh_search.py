"""Chinese search: the glossary's terms as whole words, and a fix for Sphinx 9.0's stemmer.

* Chinese search knows the glossary's terms (a jieba user dictionary made from the glossary's
  catalog, ``ptnotes_search_glossary``), so that 叶子张量 is indexed as one word as well as
  叶子 + 张量: jieba splits the term when indexing, while the browser looks a query up as one
  word.
* Sphinx 9.0.x writes ``window.Stemmer = ChineseStemmer;`` into the zh edition's
  ``language_data.js``, a class that does not exist: every page logs a ReferenceError and
  search hangs (sphinx-doc/sphinx#14229, fixed upstream in releases that need Python 3.12).
  The Chinese search language ships the *English* snowball stemmer (for Latin words in
  Chinese text), so the generated line must name ``EnglishStemmer``. We register the
  Chinese search language again with that name; everything else is Sphinx's own.

Config:
    ``ptnotes_search_glossary`` — the glossary catalog, relative to the source folder, with
    ``{language}`` for the edition (default ``locales/{language}/LC_MESSAGES/glossary.po``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babel.messages.pofile import read_po
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.search.zh import SearchChinese

DEFAULT_GLOSSARY = "locales/{language}/LC_MESSAGES/glossary.po"


class SearchChineseFixedStemmer(SearchChinese):
    """Sphinx's Chinese search language, naming the JS stemmer it really ships."""

    language_name = "English"


def glossary_terms(catalog: Path) -> list[str]:
    """The glossary's translated terms: the part of each entry before its fullwidth
    parenthesis (the zh glossary writes "叶子张量" followed by "(leaf tensor)" in fullwidth).
    """
    if not catalog.exists():
        return []
    with catalog.open("rb") as handle:
        messages = read_po(handle)
    terms = []
    for message in messages:
        text = message.string if isinstance(message.string, str) else ""
        if "\uff08" in text and len(str(message.id)) < 40:
            terms.append(text.split("\uff08")[0].strip())
    return [term for term in terms if term]


def _search_dictionary(app: Sphinx, config: Config) -> None:
    if not (config.language or "").startswith("zh"):
        return
    catalog = Path(app.srcdir) / config.ptnotes_search_glossary.format(language=config.language)
    path = Path(app.doctreedir) / "jieba-glossary.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(f"{term} 100000 n\n" for term in glossary_terms(catalog)), encoding="utf-8"
    )
    config.html_search_options = {**config.html_search_options, "dict": str(path)}


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("ptnotes_search_glossary", DEFAULT_GLOSSARY, "html", types=[str])
    app.connect("config-inited", _search_dictionary)
    app.add_search_language(SearchChineseFixedStemmer)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
