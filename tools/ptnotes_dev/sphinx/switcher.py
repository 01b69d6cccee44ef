"""The language switcher: the pydata theme's version switcher, one entry per edition.

Config:
    ``ptnotes_switcher`` — the entries (``name``, ``version``, ``url``), from
    :func:`ptnotes_dev.site.switcher_entries`. The extension writes them to
    ``_static/switcher.json`` of every HTML build and sets the theme's ``version_match`` to
    the edition being built (``-D language=zh_CN`` is applied after ``conf.py`` runs, so this
    happens in a ``config-inited`` hook).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

SWITCHER_FILE = "_static/switcher.json"


def _set_version_match(app: Sphinx, config: Config) -> None:
    options = dict(config.html_theme_options)
    switcher = dict(options.get("switcher", {}))
    switcher.setdefault("json_url", SWITCHER_FILE)
    switcher["version_match"] = config.language or "en"
    options["switcher"] = switcher
    config.html_theme_options = options


def _write_switcher(app: Sphinx, exception: BaseException | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    path = Path(app.outdir) / SWITCHER_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(app.config.ptnotes_switcher, ensure_ascii=False, indent=2) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("ptnotes_switcher", [], "html", types=[list])
    app.connect("config-inited", _set_version_match)
    app.connect("build-finished", _write_switcher)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
