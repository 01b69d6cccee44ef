"""The built site says what the release matrix's data says: stamps, compatibility, ledger dates.

Each check derives what a page must show from ``docs/_data/matrix.json`` and today's examples
(the same data the build read), then reads the built HTML: a stale build, or an extension that
renders something else than the data, fails here.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from html import unescape
from pathlib import Path

import pytest
from ptnotes_dev import matrix

from tests.site.pages import LANGUAGES, REPO

DATA = matrix.load_data(REPO / matrix.DATA_FILE)
CPU = matrix.cpu_columns(DATA)
KEYS: dict[str, list[str]] = {}
LINES: dict[str, int] = {}
for _example in matrix.current_examples():
    KEYS.setdefault(_example.doc, []).append(_example.key)
    LINES[_example.key] = _example.line
PAGES = sorted(doc for doc in KEYS if doc.startswith("docs/") and doc.endswith(".md"))
TAG = re.compile(r"<[^>]+>")


@cache
def text_of(path: Path) -> str:
    return " ".join(unescape(TAG.sub(" ", path.read_text(encoding="utf-8"))).split())


def built(site_dir: Path, lang: str, doc: str) -> Path:
    return site_dir / lang / doc.removeprefix("docs/").replace(".md", ".html")


def stamp(site_dir: Path, lang: str, doc: str) -> str:
    html = built(site_dir, lang, doc).read_text(encoding="utf-8")
    match = re.search(r'class="[^"]*ptnotes-stamp[^"]*">(.*?)</div>', html, re.DOTALL)
    assert match, f"{doc}: no stamp in the {lang} edition"
    return " ".join(unescape(TAG.sub(" ", match.group(1))).split())


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("doc", PAGES)
def test_every_page_with_examples_has_its_stamp(site_dir: Path, lang: str, doc: str) -> None:
    status = matrix.page_status(DATA, KEYS[doc], CPU)
    text = stamp(site_dir, lang, doc)
    if status.passed_on:
        first, last = status.passed_on[0], status.passed_on[-1]
        assert first in text, (doc, lang, text)
        assert last in text, (doc, lang, text)
        passing = matrix.passing(DATA, KEYS[doc], status.passed_on)
        assert f" {len(passing)} " in text, (doc, lang, text)
    if status.failed_on:  # a run of releases is written first - last
        assert status.failed_on[0] in text, (doc, lang, text)
        assert status.failed_on[-1] in text, (doc, lang, text)
        # How many of the page's examples differ, out of how many: not "the page fails".
        differ = sum(any(matrix.outcome(DATA, k, c) == "failed" for c in CPU) for k in KEYS[doc])
        assert f"{differ} of {len(KEYS[doc])} " in text or (
            f"{len(KEYS[doc])} 个示例中有 {differ} 个" in text
        ), (doc, lang, text)
    if status.unrecorded:
        assert str(status.unrecorded) in text, (doc, lang, text)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_compatibility_page_lists_every_example_that_differs(site_dir: Path, lang: str) -> None:
    text = text_of(site_dir / lang / "compatibility.html")
    for doc, keys in KEYS.items():
        for key in keys:
            failing = [c for c in CPU if matrix.outcome(DATA, key, c) == "failed"]
            if not failing:
                continue
            line = LINES[key]  # where the example is today, not where it was when it ran
            assert f"{doc}:{line}" in text, f"{doc}:{line} differs on {failing}"
            since = matrix.holds_since(DATA, [key], CPU)
            if since is not None:
                assert since in text


def changed_claims() -> list[dict[str, str]]:
    claims = []
    for path in sorted((REPO / "docs" / "claims").glob("*.toml")):
        claims += [
            c for c in tomllib.loads(path.read_text(encoding="utf-8")).get("claim", [])
            if c.get("status") == "outdated"
        ]  # fmt: skip
    return claims


@pytest.mark.parametrize("lang", LANGUAGES)
def test_changed_claims_carry_the_release_the_data_gives(site_dir: Path, lang: str) -> None:
    if not CPU:
        pytest.fail("no matrix data: run `nox -s matrix`")
    html = (site_dir / lang / "errata.html").read_text(encoding="utf-8")
    since = re.findall(r'class="[^"]*ptnotes-since[^"]*">(.*?)</p>', html, re.DOTALL)
    releases = {r for sentence in since for r in re.findall(r"\d+\.\d+\.\d+", sentence)}
    assert since, "the errata page dates no changed claim"
    assert releases <= set(CPU)
    assert len(since) <= len(changed_claims())


RELEASE_LINK = re.compile(
    r'<a class="[^"]*ptnotes-release[^"]*"[^>]*title="([^"]*)"[^>]*>([^<]*)</a>'
)
ROLE = re.compile(r"\{torch-(since|span)\}`([^`]*)`")
#: Fenced blocks and double-backtick code spans, which may show the roles' syntax as code.
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?^[ \t]*\1[ \t]*$", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"``[^\n]+?``")


def release_roles(source: str) -> list[tuple[str, str]]:
    """The ``torch-since``/``torch-span`` roles of a MyST page, in order (not those in code)."""
    return ROLE.findall(CODE_SPAN.sub("", FENCE.sub("", source)))


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("doc", PAGES)
def test_releases_named_in_prose_are_rendered_from_the_data(
    site_dir: Path, lang: str, doc: str
) -> None:
    """Each {torch-since} shows its text with the data's release as title; each {torch-span}
    shows the span of releases on which its examples pass."""
    source = (REPO / doc).read_text(encoding="utf-8")
    roles = release_roles(source)
    links = RELEASE_LINK.findall(built(site_dir, lang, doc).read_text(encoding="utf-8"))
    assert len(links) == len(roles), (doc, lang, roles, links)
    for (kind, content), (title, text) in zip(roles, links, strict=True):
        label = re.sub(r"^.*<([\w-]+)>$", r"\1", content)
        span = matrix.labelled_lines(source, label)
        assert span is not None, (doc, label)
        keys = [k for k in KEYS[doc] if span[0] <= LINES[k] <= span[1]]
        since = matrix.holds_since(DATA, keys, CPU)
        if kind == "since":
            assert since is not None, (doc, content)
            assert since in unescape(title), (doc, lang, content, title)
            assert matrix.RELEASE.search(unescape(text)), (doc, lang, text)
        else:
            passed = matrix.page_status(DATA, keys, CPU).passed_on
            assert unescape(text).startswith(passed[0]), (doc, lang, text)
            assert unescape(text).endswith(passed[-1]), (doc, lang, text)
