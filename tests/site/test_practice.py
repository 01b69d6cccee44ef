"""Practice drills in a real browser: the answer stays hidden until revealed, and it is the
page's expected output (ptnotes_dev.sphinx.practice; the drills are marked in the sources)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ptnotes_dev.settings import load

from tests.site.pages import LANGUAGES
from tests.site.test_browser import open_page

DOCS = load().root / "docs"
MARKER = re.compile(r"^% practice\n\(([\w-]+)\)=\n\n?```pycon\n(.*?)```", re.MULTILINE | re.DOTALL)


def first_drill(section: str) -> tuple[str, str, str]:
    """(page, label, expected block) of the first drill of a section's first page with one."""
    index = (DOCS / section / "index.md").read_text(encoding="utf-8")
    entries = re.search(r"```\{toctree\}\n(.*?)```", index, re.DOTALL)
    assert entries
    for entry in (line.strip() for line in entries.group(1).splitlines()):
        if not entry or entry.startswith(":"):
            continue
        text = (DOCS / section / f"{entry}.md").read_text(encoding="utf-8")
        match = MARKER.search(text)
        if match:
            return f"{section}/{entry}", match.group(1), match.group(2)
    raise AssertionError(f"no drill in {section}")


def output_lines(block: str) -> list[str]:
    lines = [ln.split("  # doctest:")[0].rstrip() for ln in block.splitlines()]
    return [ln for ln in lines if ln and not ln.startswith((">>>", "..."))]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("where", ["page", "practice"])
def test_drill_answer_is_hidden_until_revealed(
    lang: str, where: str, page: Any, site_dir: Path
) -> None:
    doc, label, block = first_drill("tensors")
    open_page(page, f"{lang}/{doc}.html" if where == "page" else f"{lang}/practice/tensors.html")
    drill = page.locator(f"#drill-{label}")
    answer = drill.locator(".ptnotes-drill-answer")
    question = drill.locator("pre").first
    assert question.is_visible()
    for line in output_lines(block):
        assert line not in question.inner_text(), "the question shows the answer"
    assert not answer.is_visible(), "the answer shows before it is revealed"
    drill.locator("summary").click()
    assert answer.is_visible()
    shown = answer.inner_text()
    for line in output_lines(block):
        assert line in shown, f"{line!r} missing from the revealed answer"
    link = drill.locator("a.reference.internal").last
    assert link.get_attribute("href", timeout=1000) is not None


@pytest.mark.parametrize("lang", LANGUAGES)
def test_practice_pages_gather_every_drill(lang: str, site_dir: Path) -> None:
    marked = 0
    for section in ("tensors", "autograd", "modules", "training", "devices"):
        html = (site_dir / lang / "practice" / f"{section}.html").read_text(encoding="utf-8")
        for path in (DOCS / section).glob("*.md"):
            for label, _block in MARKER.findall(path.read_text(encoding="utf-8")):
                assert f'id="drill-{label}"' in html, f"{section}: drill {label} missing"
                marked += 1
    everything = (site_dir / lang / "practice" / "index.html").read_text(encoding="utf-8")
    assert marked > 0
    assert len(re.findall(r'id="drill-', everything)) == marked
