"""Sphinx configuration for the ptnotes site (English source; zh_CN from gettext catalogs)."""

from __future__ import annotations

import os
import sys
from importlib.metadata import version as _installed_version
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))


project = "ptnotes"
author = "ptnotes contributors"
copyright = "2026, ptnotes contributors"
# The installed distribution's version: importing ptnotes would import torch on every build,
# no-op rebuilds included (seconds); autodoc imports it only when API pages are read.
release = version = _installed_version("ptnotes")

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "sphinx_copybutton",
    "sphinx_design",
    "sphinx_gallery.gen_gallery",
    "ptnotes_site",  # docs/_ext/ptnotes_site.py: language switcher + zh search fix
    "ptnotes_claims",  # docs/_ext/ptnotes_claims.py: the claims ledger and errata
    "ptnotes_interview",  # docs/_ext/ptnotes_interview.py: the interview index
    "ptnotes_bench",  # docs/_ext/ptnotes_bench.py: the measured numbers
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
templates_path = ["_templates"]
nitpicky = True

# -- MyST ---------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "fieldlist"]
myst_heading_anchors = 3

# -- i18n ---------------------------------------------------------------------
language = "en"
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
# wheel), so NumPy types in signatures stay plain text instead of failing the nitpicky build.
nitpick_ignore_regex = [("py:class", r"(np|npt|numpy)\..*")]

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
html_css_files = ["ptnotes.css"]
html_favicon = "_static/favicon.svg"
html_last_updated_fmt = None
html_show_sourcelink = False
html_context = {"default_mode": "light"}
html_theme_options = {
    "navbar_end": ["version-switcher", "theme-switcher"],
    "switcher": {"json_url": "_static/switcher.json", "version_match": "en"},
    "check_switcher": False,
    "show_version_warning_banner": False,
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}

# Set by `nox -s docs` when it builds into build/html/<lang>/.
html_baseurl = os.environ.get("PTNOTES_BASE_URL", "")
