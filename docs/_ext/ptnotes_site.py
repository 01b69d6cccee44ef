"""Site glue for ptnotes: the language switcher, and a fix for Chinese search in Sphinx 9.0.

* The pydata theme's version switcher serves as the language switcher. ``-D language=zh_CN``
  is applied after ``conf.py`` runs, so the switcher's ``version_match`` is set here, in a
  ``config-inited`` hook, from the final ``language``.
* Sphinx 9.0.x writes ``window.Stemmer = ChineseStemmer;`` into the zh edition's
  ``language_data.js``, a class that does not exist: every page logs a ReferenceError and
  search hangs (sphinx-doc/sphinx#14229, fixed upstream in releases that need Python 3.12).
  The Chinese search language ships the *English* snowball stemmer (for Latin words in
  Chinese text), so the generated line must name ``EnglishStemmer``. We register the
  Chinese search language again with that name; everything else is Sphinx's own.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.search.zh import SearchChinese


class SearchChineseFixedStemmer(SearchChinese):
    """Sphinx's Chinese search language, naming the JS stemmer it really ships."""

    language_name = "English"


def _set_language_switcher(app: Sphinx, config: Config) -> None:
    options = dict(config.html_theme_options)
    switcher = dict(options.get("switcher", {}))
    switcher["version_match"] = config.language or "en"
    options["switcher"] = switcher
    config.html_theme_options = options


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _set_language_switcher)
    app.add_search_language(SearchChineseFixedStemmer)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
