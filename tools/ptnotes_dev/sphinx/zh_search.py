"""Site glue for ptnotes: the language switcher, and a fix for Chinese search in Sphinx 9.0.

* The pydata theme's version switcher serves as the language switcher. ``-D language=zh_CN``
  is applied after ``conf.py`` runs, so the switcher's ``version_match`` is set here, in a
  ``config-inited`` hook, from the final ``language``.
* autodoc names torch classes by their defining module (``torch.nn.modules.linear.Linear``);
  a ``missing-reference`` handler resolves them through their public names.
* Chinese search knows the glossary's terms (a jieba user dictionary made from the zh
  glossary catalog), so that 叶子张量 is indexed as one word as well as 叶子 + 张量.
* Sphinx 9.0.x writes ``window.Stemmer = ChineseStemmer;`` into the zh edition's
  ``language_data.js``, a class that does not exist: every page logs a ReferenceError and
  search hangs (sphinx-doc/sphinx#14229, fixed upstream in releases that need Python 3.12).
  The Chinese search language ships the *English* snowball stemmer (for Latin words in
  Chinese text), so the generated line must name ``EnglishStemmer``. We register the
  Chinese search language again with that name; everything else is Sphinx's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babel.messages.pofile import read_po
from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment
from sphinx.ext.intersphinx import missing_reference
from sphinx.search.zh import SearchChinese

#: Public namespaces under which torch documents objects that it defines in private modules
#: (``torch.nn.modules.linear.Linear`` is documented as ``torch.nn.Linear``), tried in order.
TORCH_PUBLIC_NAMESPACES = ("torch.nn", "torch.optim", "torch.utils.data", "torch.autograd", "torch")


class SearchChineseFixedStemmer(SearchChinese):
    """Sphinx's Chinese search language, naming the JS stemmer it really ships."""

    language_name = "English"


def _set_language_switcher(app: Sphinx, config: Config) -> None:
    options = dict(config.html_theme_options)
    switcher = dict(options.get("switcher", {}))
    switcher["version_match"] = config.language or "en"
    options["switcher"] = switcher
    config.html_theme_options = options


def _glossary_terms(srcdir: Path, language: str) -> list[str]:
    """The glossary's terms in ``language``: the part of each term before its fullwidth
    parenthesis (the zh glossary writes "叶子张量" followed by "(leaf tensor)" in fullwidth).
    """
    catalog = srcdir / "locales" / language / "LC_MESSAGES" / "glossary.po"
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
    """Teach jieba the glossary's terms, so that a search for 叶子张量 finds the term.

    jieba splits 叶子张量 into 叶子 + 张量 when indexing, while the browser looks the query
    up as one word: without a user dictionary, the glossary's own terms are unfindable.
    """
    if not (config.language or "").startswith("zh"):
        return
    terms = _glossary_terms(Path(app.srcdir), config.language)
    path = Path(app.doctreedir) / "jieba-glossary.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{term} 100000 n\n" for term in terms), encoding="utf-8")
    config.html_search_options = {**config.html_search_options, "dict": str(path)}


def _torch_public_name(
    app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: nodes.TextElement
) -> nodes.reference | None:
    """Resolve a torch object named by its defining module through its public name.

    autodoc writes type hints with the module where a class is defined
    (``torch.nn.modules.module.Module``, ``torch._C.Generator``); the torch inventory lists the
    public names. Try the object's name under each public namespace until intersphinx resolves
    one; leave everything else to the normal nitpicky warning.
    """
    target = node.get("reftarget", "")
    if not target.startswith("torch.") or node.get("refdomain") != "py":
        return None
    name = target.rsplit(".", 1)[-1]
    for namespace in TORCH_PUBLIC_NAMESPACES:
        candidate = f"{namespace}.{name}"
        if candidate == target:
            continue
        trial = node.deepcopy()
        trial["reftarget"] = candidate
        resolved = missing_reference(app, env, trial, contnode)
        if resolved is not None:
            return resolved
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _set_language_switcher)
    app.connect("config-inited", _search_dictionary)
    app.connect("missing-reference", _torch_public_name)
    app.add_search_language(SearchChineseFixedStemmer)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
