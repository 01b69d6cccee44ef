"""The practice drills: enough of them on every question page, each one readable on its own.

A drill is shown on the practice pages without the page around it, so its block must run
from the page's setup block alone and print what it says (tests/site/test_practice.py checks
the built reveal).
"""

from __future__ import annotations

import doctest
import functools
from pathlib import Path
from typing import Any

import pytest
from babel.messages.pofile import read_po
from ptnotes_dev import matrix
from ptnotes_dev.doctesting import OPTIONFLAGS, REQUIRES_CUDA, DeviceAgnosticChecker
from ptnotes_dev.settings import load
from ptnotes_dev.sphinx import practice
from ptnotes_dev.sphinx.proof import pinned_release

SETTINGS = load()
DOCS = SETTINGS.root / "docs"
QUESTION_PAGES = [
    f"{section}/{entry}.md"
    for section in practice.SECTIONS
    for entry in practice.toctree_entries(DOCS / section / "index.md")
]
DRILLS = [
    pytest.param(page, drill, id=f"{page}:{drill.label}")
    for page in QUESTION_PAGES
    for drill in practice.drills((DOCS / page).read_text(encoding="utf-8"))
]
MINIMUM = 3


def setup_block(page: str) -> str:
    """The page's first ``pycon`` block: the visible setup (imports, seed)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    _, _, rest = text.partition("```pycon\n")
    return rest.partition("```")[0]


@pytest.mark.parametrize("page", QUESTION_PAGES)
def test_question_page_has_enough_drills(page: str) -> None:
    found = practice.drills((DOCS / page).read_text(encoding="utf-8"))
    assert len(found) >= MINIMUM, f"{page}: {len(found)} drill(s), at least {MINIMUM} expected"


@functools.cache
def _matrix_data() -> dict[str, Any]:
    return matrix.load_data(SETTINGS.root / matrix.DATA_FILE)


def _recorded_outcomes(page: str, drill: practice.Drill, release: str) -> set[str]:
    """What the release matrix recorded for the drill's block on ``release``."""
    data = _matrix_data()
    last = drill.line + len(drill.text.splitlines())
    return {
        example["results"][release]["outcome"]
        for example in data["examples"].values()
        if example["doc"] == f"docs/{page}" and drill.line < example["line"] <= last
        if release in example["results"]
    }


@pytest.mark.parametrize(("page", "drill"), DRILLS)
def test_drill_runs_from_the_setup_block_alone(page: str, drill: practice.Drill) -> None:
    import torch

    release = torch.__version__.split("+")[0]
    if release != pinned_release():
        # Another release may print another answer: the page's version note says which.
        outcomes = _recorded_outcomes(page, drill, release)
        if outcomes != {"passed"}:
            pytest.skip(f"the release matrix records {sorted(outcomes)} for it on {release}")
    parser = doctest.DocTestParser()
    test = parser.get_doctest(
        setup_block(page) + drill.text + "\n", {"__name__": "__main__"}, drill.label, page, 0
    )
    assert not any(example.options.get(REQUIRES_CUDA) for example in test.examples), (
        "a drill must run on a CPU"
    )
    runner = doctest.DocTestRunner(checker=DeviceAgnosticChecker("cpu"), optionflags=OPTIONFLAGS)
    dtype, grad = torch.get_default_dtype(), torch.is_grad_enabled()
    torch.manual_seed(0)
    try:
        report: list[str] = []
        result = runner.run(test, out=report.append)
    finally:
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)
    assert result.attempted > 0
    assert result.failed == 0, "".join(report)


def test_a_marker_without_a_labelled_example_is_refused() -> None:
    with pytest.raises(ValueError, match="directly above a '\\(label\\)=' line"):
        practice.drills("% practice\n\n```pycon\n>>> 1\n1\n```\n")


def test_drill_separates_question_from_answer() -> None:
    (drill,) = practice.drills(
        "% practice\n(p-x)=\n\n```pycon\n>>> x = 1  # doctest: +ELLIPSIS\n>>> x + 1\n2\n```\n"
    )
    assert drill.label == "p-x"
    assert drill.code == ">>> x = 1\n>>> x + 1"
    assert drill.output == "2"


@pytest.mark.parametrize("module", ["practice", "notebooks", "reader_links", "offline"])
@pytest.mark.parametrize("language", [lang.code for lang in SETTINGS.translations])
def test_every_message_of_the_reader_extensions_is_translated(language: str, module: str) -> None:
    import importlib

    from tests._messages import messages_used

    extension = importlib.import_module(f"ptnotes_dev.sphinx.{module}")
    used = messages_used(extension)
    assert used == set(extension.MESSAGES)
    path = DOCS / "locales" / language / "LC_MESSAGES" / "ptnotes_dev.po"
    with Path(path).open("rb") as handle:
        catalog = {m.id: m.string for m in read_po(handle) if m.id and not m.fuzzy}
    assert [m for m in extension.MESSAGES if not catalog.get(m)] == []
