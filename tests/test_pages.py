"""Every reference page has the shape readers rely on (docs/dev/contributing.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ptnotes_dev.sphinx.interview import question_and_answer, toctree_entries

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

SECTIONS = ("tensors", "autograd", "modules", "training", "devices")
PAGES = [
    DOCS / section / f"{entry}.md"
    for section in SECTIONS
    for entry in toctree_entries(DOCS / section / "index.md")
]
IDS = [p.relative_to(DOCS).with_suffix("").as_posix() for p in PAGES]


def test_every_section_lists_pages() -> None:
    for section in SECTIONS:
        assert toctree_entries(DOCS / section / "index.md"), f"{section}/index.md lists no page"


def test_every_page_of_a_section_folder_is_in_its_toctree() -> None:
    listed = set(PAGES)
    on_disk = {p for s in SECTIONS for p in (DOCS / s).glob("*.md") if p.name != "index.md"}
    assert sorted(map(str, on_disk - listed)) == []


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_page_title_is_the_readers_question(page: Path) -> None:
    question, _ = question_and_answer(page)
    assert question.endswith("?"), question


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_page_has_an_interview_answer_and_see_also(page: Path) -> None:
    _, answer = question_and_answer(page)
    assert len(answer.split()) >= 25, "the interview answer is a paragraph, not a line"
    assert "\n## See also\n" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_page_starts_from_a_seeded_setup_block(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    first_example = text.find("```pycon")
    assert first_example != -1, "no executed example"
    assert "torch.manual_seed(" in text[first_example : first_example + 400]
