"""Sphinx configuration for the ptnotes site (English source; zh_CN from gettext catalogs)."""

from __future__ import annotations

from importlib.metadata import version as installed_version
from pathlib import Path

from ptnotes_dev import settings as project_settings
from ptnotes_dev.site import switcher_entries

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
SETTINGS = project_settings.load(ROOT)


project = "ptnotes"
author = "ptnotes contributors"
copyright = "2026, ptnotes contributors"
# The installed distribution's version: importing ptnotes would import torch on every build,
# no-op rebuilds included (seconds); autodoc imports it only when API pages are read.
release = version = installed_version("ptnotes")

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "sphinx.ext.graphviz",
    "sphinx_copybutton",
    "sphinx_design",
    "sphinx_gallery.gen_gallery",
    # Math from the site itself (MathJax 3 copied into _static/mathjax), not from a CDN:
    # offline readers see rendered math, not raw TeX.
    "sphinx-mathjax-offline",
    # The project's own extensions (tools/ptnotes_dev/sphinx/), one per job:
    "ptnotes_dev.sphinx.switcher",
    "ptnotes_dev.sphinx.torch_names",
    "ptnotes_dev.sphinx.zh_search",
    "ptnotes_dev.sphinx.claims",
    "ptnotes_dev.sphinx.interview",
    "ptnotes_dev.sphinx.matrix",
    "ptnotes_dev.sphinx.bench_tables",
    "ptnotes_dev.sphinx.gallery_titles",
    "ptnotes_dev.sphinx.autograd_graph",
    "ptnotes_dev.sphinx.proof",
    "ptnotes_dev.sphinx.practice",
    "ptnotes_dev.sphinx.notebooks",
    "ptnotes_dev.sphinx.reader_links",
    "ptnotes_dev.sphinx.offline",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "README.md",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.pickle",
    "locales",
    "claims",
    "_data",
]
nitpicky = True

# -- MyST ---------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "fieldlist"]
myst_heading_anchors = 3

# -- i18n ---------------------------------------------------------------------
language = SETTINGS.source_language.code
locale_dirs = ["locales/"]
gettext_compact = False  # one catalog per page: translators work page by page
gettext_location = False  # no line numbers: editing a page does not churn every catalog
gettext_uuid = False

# -- autodoc ------------------------------------------------------------------
autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True}  # any value, even False, would turn an option on
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# -- intersphinx: offline first (committed inventories), official docs as link targets --
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", ("_inv/python.inv", None)),
    "torch": ("https://docs.pytorch.org/docs/stable", ("_inv/torch.inv", None)),
}
intersphinx_timeout = 5
# NumPy publishes no inventory that can be had offline here (no Debian package, not in the
# wheel), so NumPy names (types in signatures, functions in prose) stay plain text instead of
# failing the nitpicky build.
nitpick_ignore_regex = [("py:(class|func|mod|data|obj)", r"(np|npt|numpy)(\..*)?")]
# A type variable of ptnotes.validation's signatures: autodoc names it, nothing documents it.
nitpick_ignore = [("py:class", "ptnotes.validation.T")]

# -- graphviz: autograd graphs ({autograd-graph}) drawn by `dot` from ptnotes.graph.graph_dot --
graphviz_output_format = "svg"
# A transparent background: in dark mode the drawing is inverted (_static/ptnotes.css) and
# sits on the page's own background instead of a grey box.
graphviz_dot_args = ["-Gbgcolor=transparent"]

# -- copybutton: a copied example holds only the code -------------------------
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True

# -- sphinx-gallery -----------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "gallery"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "min_reported_time": 10**9,  # never print timings: they would churn the catalogs
    "write_computation_times": False,
    "backreferences_dir": "gen_modules/backreferences",
    "doc_module": ("ptnotes",),
    "reference_url": {"ptnotes": None},
    "remove_config_comments": True,
    "show_memory": False,
    "download_all_examples": False,
    "matplotlib_animations": False,
    "image_srcset": [],
    "first_notebook_cell": None,
    "capture_repr": ("__repr__",),
}

# -- HTML ---------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "ptnotes"
html_static_path = ["_static"]
# Overrides of the theme's components (the language switcher, the search button).
templates_path = ["_templates"]
html_css_files = ["ptnotes.css"]
html_js_files = [("ptnotes-switcher.js", {"defer": "defer"})]
html_favicon = "_static/favicon.svg"
html_last_updated_fmt = None
html_show_sourcelink = False
html_context = {"default_mode": "light"}
# Pages outside the sections (glossary, claims, errata, compatibility, bench, interview) have
# no section navigation: no primary sidebar rather than an empty one
# with a "Collapse Sidebar" button. `*` matches top-level documents only.
html_sidebars = {"*": []}
html_theme_options = {
    "navbar_end": ["version-switcher", "theme-switcher"],
    # "version-switcher" is the language switcher, rendered with each page from
    # ptnotes_switcher (docs/_templates/version-switcher.html, ptnotes_dev.sphinx.switcher);
    # header_dropdown_text ("More") is set per edition by the same extension.
    "show_version_warning_banner": False,
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}

# -- the project's extensions -------------------------------------------------
ptnotes_switcher = switcher_entries(SETTINGS)
ptnotes_claims_dir = "claims"
ptnotes_claim_seeds = {
    "000": "Note A — tensor vs Tensor, detach and .data",
    "002": "Note B — clone, detach and .data",
    "003": "Note C — interview questions on autograd and nn",
}
ptnotes_bench_file = "_data/bench.json"
ptnotes_matrix_file = "_data/matrix.json"
ptnotes_matrix_page = "compatibility"
ptnotes_search_glossary = "locales/{language}/LC_MESSAGES/glossary.po"


# -- the copies to take along (nox -s offline) ---------------------------------
# EPUB: Sphinx's own builder; epubcheck validates the file.
epub_basename = "ptnotes"
epub_show_urls = "no"
# The gallery's downloads (.py, .ipynb, .zip) have no EPUB media type: left out, not warned.
epub_exclude_files = [
    "search.html",
    "_static/ptnotes.css",  # its :has() filters are not EPUB CSS (ptnotes_dev.sphinx.offline)
    "_static/jupyterlite_badge_logo.svg",  # sphinx-gallery's; no JupyterLite in an EPUB
]
# The reading order of the navigation: pages and their sections, not deeper (an index page's
# own sections come after its toctree, which EPUB's navigation may not list out of order).
epub_tocdepth = 1
suppress_warnings = ["epub.unknown_project_files"]
# PDF: Sphinx's LaTeX builder through xelatex, in Debian's DejaVu fonts (Greek, arrows, the
# box drawing of the autograd trees) and, for Chinese, xeCJK with the Noto CJK fonts; both
# editions load xeCJK (the English one names 简体中文 too). No index: the site has none.
latex_engine = "xelatex"
latex_documents = [("index", "ptnotes.tex", "ptnotes", author, "manual")]
latex_domain_indices = False
latex_use_xindy = False  # makeindex comes with TeX Live; xindy is another Debian package
latex_elements = {
    "fontenc": r"\usepackage{xeCJK}",
    "fontpkg": (
        r"\setmainfont{DejaVu Serif}\setsansfont{DejaVu Sans}"
        r"\setmonofont{DejaVu Sans Mono}[Scale=0.85]"
        r"\setCJKmainfont{Noto Serif CJK SC}"
        r"\setCJKsansfont{Noto Sans CJK SC}"
        r"\setCJKmonofont{Noto Sans Mono CJK SC}"
    ),
    "fvset": r"\fvset{fontsize=\small,formatcom=\xeCJKVerbAddon}",
    "preamble": r"\usepackage{newunicodechar}\newunicodechar{✓}{\checkmark}"
    r"\newunicodechar{✗}{$\times$}",
    "makeindex": "",
    "printindex": "",
}
latex_show_urls = "no"
