"""reST inline markup in the zh_CN catalogs is still markup after translation.

The gallery (``auto_examples/``) and the API pages (``api/*.rst``) are reStructuredText, and
reST only recognises inline markup whose end is followed by whitespace or by one of a few
punctuation characters (and whose start is preceded by them). Chinese has no spaces, so
``采用 ``normal(0, 0.02)``（偏置为零）`` shows the backticks and sets the rest of the sentence
in monospace: ``（`` (an opening bracket) and CJK characters are not allowed after the end. The
fix is an escaped space, ``\\ ``, which reST removes: ````normal(0, 0.02)``\\ （``. The MyST
pages (everything else) do not have this rule. The built pages are checked as well, by
``tests/site/test_zh_markup.py``.
"""

# ruff: noqa: RUF001, RUF002  (Chinese text: fullwidth punctuation is the point)
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from ptnotes_dev.i18n import DOCS, LOCALE, messages, read_catalog


def _is_rest(catalog: Path) -> bool:
    """Whether the page of ``catalog`` is reST: a gallery example, or a ``.rst`` source."""
    relative = catalog.relative_to(LOCALE).with_suffix(".rst")
    return relative.parts[0] == "auto_examples" or (DOCS / relative).is_file()


RST_CATALOGS = sorted(p for p in LOCALE.rglob("*.po") if _is_rest(p))
IDS = [p.relative_to(LOCALE).as_posix() for p in RST_CATALOGS]

# Inline literals, and interpreted text with a role (``:func:`x```); in that order, so that a
# literal's backticks are not read as interpreted text.
INLINE = re.compile(r"``(?!\s).*?(?<!\s)``|(?::[\w.+:-]+:)?`(?!\s)[^`]*?(?<!\s)`_{0,2}")
# docutils' rules (docutils.parsers.rst.states.Inliner): what may precede a start-string and
# follow an end-string, besides whitespace.
BEFORE_ASCII = set("-:/'\"<([{")
BEFORE_CATEGORIES = {"Ps", "Pi", "Pf", "Pd", "Po"}
AFTER_ASCII = set("-.,:;!?\\/'\")]}>")
AFTER_CATEGORIES = {"Pe", "Pi", "Pf", "Pd", "Po"}


def _allowed(char: str, ascii_set: set[str], categories: set[str]) -> bool:
    return char.isspace() or char in ascii_set or unicodedata.category(char) in categories


def unparsed_markup(text: str) -> list[str]:
    """The inline markup of ``text`` that reST would not recognise, each with its neighbours."""
    found = []
    for match in INLINE.finditer(text):
        start, end = match.start(), match.end()
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not _allowed(before, BEFORE_ASCII, BEFORE_CATEGORIES) or not _allowed(
            after, AFTER_ASCII, AFTER_CATEGORIES
        ):
            found.append(text[max(start - 3, 0) : end + 3])
    return found


@pytest.mark.parametrize(
    "text",
    [
        "采用 ``normal(0, 0.02)``（偏置为零）",
        "权重``w``的",
        "见 :func:`ptnotes.training.train_step`的说明",
    ],
)
def test_unparsed_markup_finds_markup_glued_to_cjk(text: str) -> None:
    assert unparsed_markup(text) != []


@pytest.mark.parametrize(
    "text",
    [
        "采用 ``normal(0, 0.02)``\\ （偏置为零）",
        "（``tanh`` 会稍微压缩一点）",
        "``0.weight``、``1.running_mean`` 等。",
        "（:func:`ptnotes.training.train_step`）",
        "在 :class:`torch.no_grad` 下写入（绝不经由 ``.data``），原地修改",
        "见 `PyTorch <https://pytorch.org>`_。",
    ],
)
def test_unparsed_markup_accepts_spaces_escapes_and_allowed_punctuation(text: str) -> None:
    assert unparsed_markup(text) == []


def test_there_are_rest_catalogs() -> None:
    assert any(p.parent.name == "auto_examples" for p in RST_CATALOGS)
    assert any(p.parent.name == "api" for p in RST_CATALOGS)


@pytest.mark.parametrize("path", RST_CATALOGS, ids=IDS)
def test_rest_catalog_keeps_inline_markup_parseable(path: Path) -> None:
    problems = [
        f"{span!r} in: {msgstr[:60]}"
        for _, msgstr, _ in messages(read_catalog(path))
        for span in unparsed_markup(msgstr)
    ]
    assert problems == [], "write `\\ ` between the markup and the CJK text:\n" + "\n".join(
        problems
    )
