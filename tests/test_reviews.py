"""Every page has a current review record: read by a second reader after its last prose change."""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path

import pytest
from ptnotes_dev import reviews

ROOT = Path(__file__).resolve().parents[1]
PAGES = reviews.pages()
BY_PAGE = {r.page: r for r in reviews.read()}


def test_every_page_is_listed() -> None:
    assert {"glossary.md", "errata.md", "autograd/inplace.md", "api/checkpoint.rst"} <= set(PAGES)
    scripts = {f"auto_examples/{path.name}" for path in (ROOT / "gallery").glob("plot_*.py")}
    assert len(scripts) >= 7
    assert scripts | {"auto_examples/index.rst"} <= set(PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_page_has_a_current_review_record(page: str) -> None:
    review = BY_PAGE.get(page)
    assert review is not None, f"{page}: no review record in docs/dev/reviews.toml"
    assert reviews.problems(review) == []


def test_no_record_names_a_page_that_does_not_exist() -> None:
    assert sorted(set(BY_PAGE) - set(PAGES)) == []


def test_prose_leaves_examples_out() -> None:
    page = "Text.\n\n```pycon\n>>> 1 + 1\n2\n```\n\n:::{note}\nKept.\n:::\n"
    assert reviews.prose(page) == "Text.\n\n:::{note}\nKept.\n:::\n"


def test_adding_an_example_or_a_drill_keeps_the_hash() -> None:
    first = "Text.\n\n(p-a)=\n```pycon\n>>> 1\n1\n```\n\nMore.\n"
    drilled = first.replace("(p-a)=", "% practice\n(p-a)=")
    added = first.replace("\nMore.", "\n% practice\n(p-b)=\n\n```pycon\n>>> 2\n2\n```\n\nMore.")
    assert reviews.prose(first) == reviews.prose(drilled) == reviews.prose(added)
    assert reviews.prose(first) != reviews.prose(first.replace("More.", "Other."))


def test_an_output_change_keeps_the_hash_and_a_sentence_change_does_not() -> None:
    first = "Text.\n\n```pycon\n>>> x\n1\n```\n"
    assert reviews.prose(first) == reviews.prose(first.replace("1\n```", "2\n```"))
    assert reviews.prose(first) != reviews.prose(first.replace("Text.", "Other text."))


def test_docstrings_count_as_prose_of_api_pages_but_their_examples_do_not() -> None:
    doc = "Say what.\n\nExamples:\n    >>> f()\n    1\n\nAfter."
    assert reviews._without_examples(doc) == "Say what.\n\nExamples:\n\nAfter."


GALLERY_SCRIPT = '''"""
Title
=====

What the script shows.
"""

# %%
# A section
# ---------
# Text of the section.
import torch  # a comment in the code

x = torch.ones(2)  # sphinx-gallery shows this comment too
print("not # a comment")
# sphinx_gallery_thumbnail_number = 1
'''


def test_the_prose_of_a_gallery_script_is_its_docstring_and_comments() -> None:
    assert reviews.gallery_prose(GALLERY_SCRIPT) == (
        "Title\n=====\n\nWhat the script shows.\nA section\n---------\nText of the section.\n"
        "a comment in the code\nsphinx-gallery shows this comment too\n"
    )
    code_changed = GALLERY_SCRIPT.replace("torch.ones(2)", "torch.zeros(3)")
    assert reviews.gallery_prose(code_changed) == reviews.gallery_prose(GALLERY_SCRIPT)
    text_changed = GALLERY_SCRIPT.replace("Text of the section.", "Other text.")
    assert reviews.gallery_prose(text_changed) != reviews.gallery_prose(GALLERY_SCRIPT)


def test_a_gallery_page_is_named_as_the_site_names_it() -> None:
    name = reviews._page_name("gallery/plot_data_vs_detach.py", ROOT)
    assert name == "auto_examples/plot_data_vs_detach.py"
    assert reviews.source(name) == ROOT / "gallery" / "plot_data_vs_detach.py"
    assert reviews.catalog_path(name).relative_to(ROOT).as_posix() == (
        "docs/locales/zh_CN/LC_MESSAGES/auto_examples/plot_data_vs_detach.po"
    )
    assert reviews._page_name("gallery/GALLERY_HEADER.rst", ROOT) == "auto_examples/index.rst"
    with pytest.raises(ValueError, match=r"no page docs/auto_examples/plot_missing\.py"):
        reviews._page_name("gallery/plot_missing.py", ROOT)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project's settings with one page and its catalog."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "docs" / "locales" / "zh_CN" / "LC_MESSAGES").mkdir(parents=True)
    (tmp_path / "docs" / "page.md").write_text("# Title\n\nOne sentence.\n", encoding="utf-8")
    (tmp_path / "docs" / "locales" / "zh_CN" / "LC_MESSAGES" / "page.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgid "Title"\nmsgstr "标题"\n',
        encoding="utf-8",
    )
    return tmp_path


def test_a_record_becomes_stale_when_the_prose_changes(project: Path) -> None:
    path = project / "docs" / "dev" / "reviews.toml"
    reviews.record("docs/page.md", "reader", 3, 1, 1, [
        {"before": "Old.", "after": "One sentence.", "example": "label"},
    ], root=project, path=path)  # fmt: skip
    (record,) = reviews.read(path)
    assert record.date == datetime.date.today()
    assert reviews.problems(record, project) == []
    (project / "docs" / "page.md").write_text("# Title\n\nAnother sentence.\n", encoding="utf-8")
    assert reviews.problems(record, project) == [
        f"page.md: its prose changed after the review of {record.date}"
    ]


def test_a_record_becomes_stale_when_the_translation_changes(project: Path) -> None:
    path = project / "docs" / "dev" / "reviews.toml"
    reviews.record("page.md", "reader", 1, 0, 0, [], root=project, path=path)
    po = project / "docs" / "locales" / "zh_CN" / "LC_MESSAGES" / "page.po"
    po.write_text(po.read_text(encoding="utf-8").replace("标题", "题目"), encoding="utf-8")
    (record,) = reviews.read(path)
    assert reviews.problems(record, project) == [
        f"page.md: its zh_CN catalog changed after the review of {record.date}"
    ]


@pytest.mark.parametrize(
    ("checked", "refuted", "fixed", "listed", "message"),
    [
        (3, 1, 0, 1, "1 refuted sentence(s) not fixed"),
        (3, 2, 2, 1, "2 refuted but 1 listed"),
        (1, 2, 2, 2, "expected 0 <= fixed <= refuted <= checked"),
    ],
)
def test_an_inconsistent_record_is_refused_and_nothing_is_written(
    project: Path, checked: int, refuted: int, fixed: int, listed: int, message: str
) -> None:
    path = project / "docs" / "dev" / "reviews.toml"
    items = [{"before": "a", "after": "b", "example": "c"}] * listed
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        reviews.record("page.md", "reader", checked, refuted, fixed, items, root=project, path=path)
    assert not path.exists()


def test_a_record_round_trips_through_its_file(project: Path) -> None:
    path = project / "docs" / "dev" / "reviews.toml"
    written = reviews.record("page.md", "a \"quoted\" reader", 2, 1, 1, [
        {"before": "“引号” and \\ back", "after": "(cut)", "example": ""},
    ], root=project, path=path)  # fmt: skip
    assert reviews.read(path) == [written]


def test_recording_a_page_that_does_not_exist_is_refused(project: Path) -> None:
    with pytest.raises(ValueError, match=r"no page docs/missing\.md"):
        reviews.record("missing.md", "reader", 0, 0, 0, [], root=project)


def test_a_cross_reading_adds_to_the_first_reading(project: Path) -> None:
    path = project / "docs" / "dev" / "reviews.toml"
    first = {"before": "Old.", "after": "One sentence.", "example": "a"}
    reviews.record("page.md", "first", 3, 1, 1, [first], root=project, path=path)
    second = {"before": "One sentence.", "after": "One narrower sentence.", "example": "b"}
    reviews.record("page.md", "second", 2, 1, 1, [second], root=project, path=path,
                   cross_read=True)  # fmt: skip
    (review,) = reviews.read(path)
    assert (review.reviewer, review.checked, review.refuted, review.fixed) == (
        "first; cross-read by second",
        5,
        2,
        2,
    )
    assert review.refutation == [first, second]


def test_a_second_reading_without_cross_read_is_refused_and_the_record_kept(
    project: Path,
) -> None:
    path = project / "docs" / "dev" / "reviews.toml"
    first = {"before": "Old.", "after": "One sentence.", "example": "a"}
    reviews.record("page.md", "first", 3, 1, 1, [first], root=project, path=path)
    kept = path.read_bytes()
    with pytest.raises(ValueError, match=r"already has a record .*--cross-read.*--replace"):
        reviews.record("page.md", "second", 1, 0, 0, [], root=project, path=path)
    assert path.read_bytes() == kept
    reviews.record("page.md", "second", 1, 0, 0, [], root=project, path=path, replace=True)
    (review,) = reviews.read(path)
    assert (review.reviewer, review.checked, review.refutation) == ("second", 1, [])


def test_a_cross_reading_needs_a_first_reading(project: Path) -> None:
    with pytest.raises(ValueError, match="no earlier reading"):
        reviews.record("page.md", "second", 1, 0, 0, [], root=project, cross_read=True)


def test_the_report_lists_each_page_and_every_refuted_sentence(project: Path) -> None:
    path = project / "docs" / "dev" / "reviews.toml"
    reviews.record("page.md", "reader", 3, 1, 1, [
        {"before": "it always copies", "after": "it copies a view", "example": "page-copy"},
    ], root=project, path=path)  # fmt: skip
    lines = reviews.report(path).splitlines()
    assert "| page.md | 3 | 1 | 1 | yes |" in lines
    assert "| 1 pages | 3 | 1 | 1 | |" in lines
    assert "- 'it always copies' → 'it copies a view' (shown by: page-copy)" in lines


def test_the_committed_report_holds_every_recorded_refutation() -> None:
    text = reviews.report()
    listed = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(listed) == sum(len(r.refutation) for r in reviews.read()) > 0


def test_history_lists_what_earlier_fixes_wrote_oldest_first(project: Path) -> None:
    path = project / "docs" / "dev" / "reviews.toml"
    reviews.record("page.md", "first", 3, 2, 2, [
        {"before": "Old.", "after": "One sentence.", "example": "a"},
        {"before": "An aside.", "after": "(cut)", "example": ""},
    ], root=project, path=path)  # fmt: skip
    reviews.record("page.md", "second", 1, 1, 1, [
        {"before": "One sentence.", "after": "One narrower sentence.", "example": "b"},
    ], root=project, path=path, cross_read=True)  # fmt: skip
    assert reviews.history("docs/page.md", project, path) == [
        "One sentence.",
        "One narrower sentence.",
    ]
    with pytest.raises(ValueError, match=r"no page docs/missing\.md"):
        reviews.history("missing.md", project, path)


def test_only_unindented_anchors_and_plot_scripts_are_left_out_or_listed(tmp_path: Path) -> None:
    page = "Text.\n\n1. Item.\n\n   ```pycon\n   >>> 1\n   1\n   ```\n"
    anchored = page.replace("   ```pycon", "   (p-a)=\n   ```pycon")
    assert reviews.prose(anchored) != reviews.prose(page)  # an indented (label)= is prose
    (tmp_path / "docs").mkdir()
    (tmp_path / "gallery").mkdir()
    for name in ("plot_a.py", "other.py"):
        (tmp_path / "gallery" / name).write_text('"""\nA\n=\n"""\n', encoding="utf-8")
    assert reviews.pages(tmp_path / "docs") == ["auto_examples/plot_a.py"]
