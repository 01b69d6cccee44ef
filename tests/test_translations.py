"""The zh_CN edition: complete, valid, consistent with the glossary, code left untouched."""

# ruff: noqa: RUF001  (Chinese text: fullwidth punctuation is the point)

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from ptnotes_dev.i18n import (
    LOCALE,
    fuzzy,
    glossary_terms,
    glossary_violations,
    interview_drift,
    messages,
    read_catalog,
    source_documents,
    stray_spaces,
    untranslated,
)

CATALOGS = sorted(LOCALE.rglob("*.po"))
IDS = [p.relative_to(LOCALE).as_posix() for p in CATALOGS]
CODE_SPAN = re.compile(r"``[^`]+``|(?<!`)`[^`]+`(?!`)")
LINK_TARGET = re.compile(r"<[^<>]+>`$")


def _kept(span: str) -> str:
    """What a translation must keep of a code span: all of it, or a link's ``<target>``.

    In ``:download:`Download the notebook <x.ipynb>``` the visible text is prose (translated)
    and only the target is code.
    """
    target = LINK_TARGET.search(span)
    return target.group(0)[:-1] if target else span


def test_there_are_catalogs() -> None:
    assert len(CATALOGS) >= len(source_documents())


@pytest.mark.parametrize("path", CATALOGS, ids=IDS)
def test_catalog_passes_msgfmt_check(path: Path) -> None:
    msgfmt = shutil.which("msgfmt")
    assert msgfmt, "msgfmt not found: install gettext (nox -s tests does this as root)"
    result = subprocess.run(
        [msgfmt, "--check", "-o", "/dev/null", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path", CATALOGS, ids=IDS)
def test_catalog_has_no_untranslated_entry(path: Path) -> None:
    assert untranslated(read_catalog(path)) == []


@pytest.mark.parametrize("path", CATALOGS, ids=IDS)
def test_catalog_has_no_fuzzy_entry(path: Path) -> None:
    assert fuzzy(read_catalog(path)) == []


@pytest.mark.parametrize("path", CATALOGS, ids=IDS)
def test_translation_keeps_code_spans_verbatim(path: Path) -> None:
    changed = []
    for msgid, msgstr, _ in messages(read_catalog(path)):
        if not msgstr:
            continue
        missing = [span for span in CODE_SPAN.findall(msgid) if _kept(span) not in msgstr]
        if missing:
            changed.append(f"{missing} not in: {msgstr[:80]}")
    assert changed == []


@pytest.mark.parametrize("docname", source_documents())
def test_every_english_page_has_a_zh_catalog(docname: str) -> None:
    assert (LOCALE / f"{docname}.po").exists(), f"run `nox -s i18n` and translate {docname}"


def test_every_glossary_term_has_a_chinese_term() -> None:
    terms = glossary_terms()
    assert len(terms) >= 15
    assert [t.english for t in terms if not t.chinese] == []


def test_glossary_leaf_tensor_is_the_agreed_term() -> None:
    assert {t.english: t.chinese for t in glossary_terms()}["leaf tensor"] == "叶子张量"


def test_catalogs_use_the_glossary_terms() -> None:
    assert glossary_violations() == []


@pytest.mark.parametrize(
    ("english", "chinese"),
    [
        ("in place", "原地"),
        ("backward", "反向传播"),
        ("pinned memory", "锁页内存"),
        ("GPU memory", "显存"),
        ("saved tensor", "保存的张量"),
        ("RNG state", "RNG 状态"),
        ("optimizer step", "优化器更新"),
        ("hook", "钩子"),
        ("view", "视图"),
        ("bucket", "桶"),
        ("scaler", "缩放器"),
        ("release matrix", "版本矩阵"),
    ],
)
def test_terms_once_written_two_ways_have_one_glossary_term(english: str, chinese: str) -> None:
    assert {t.english: t.chinese for t in glossary_terms()}[english] == chinese


def test_in_place_of_is_not_the_term_in_place() -> None:
    (term,) = [t for t in glossary_terms() if t.english == "in place"]
    assert term.pattern.search("modifies x in place")
    assert not term.pattern.search("put y in place of x")


def test_no_catalog_has_a_space_between_chinese_characters() -> None:
    assert stray_spaces() == []


def test_the_spacing_check_finds_a_space_left_around_a_substituted_term(tmp_path: Path) -> None:
    (tmp_path / "page.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n\n'
        'msgid "through autograd"\nmsgstr "通过 自动求导 一无所知；用 `x` 时"\n',
        encoding="utf-8",
    )
    assert stray_spaces(tmp_path) == [
        "page.po: '通过 自动求导 '",
        "page.po: ' 自动求导 一无所知；'",
    ]


def test_the_interview_index_translates_each_answer_as_its_page_does() -> None:
    """The index gathers the answers; its catalog must not drift from the pages' catalogs
    (``python -m ptnotes_dev.i18n interview`` copies them)."""
    assert interview_drift() == []
