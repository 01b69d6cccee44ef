"""Every sentence of an "In an interview" answer links to the example that shows it.

An answer is what a reader repeats in an interview, so each of its sentences carries a
``{proof}`label``` link to the labelled section or code block of its page that shows it: an
executed example, or (for what cannot run on a CPU) a ``{torch-source}`` note. The build
checks each link too (``ptnotes_dev.sphinx.proof``); this test names every sentence without
one, without building the site.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ptnotes_dev.sphinx.interview import question_and_answer, toctree_entries
from ptnotes_dev.sphinx.proof import proof_problem

DOCS = Path(__file__).resolve().parents[1] / "docs"
SECTIONS = ("tensors", "autograd", "modules", "training", "devices")
QUESTION_PAGES = [
    f"{section}/{entry}.md"
    for section in SECTIONS
    for entry in toctree_entries(DOCS / section / "index.md")
]
PROOF = re.compile(r"\{proof\}`([^`]+)`")
_CODE = re.compile(r"\{[\w:-]+\}`[^`]*`|``.*?``|`[^`]*`")
_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|vs|etc|cf)\.$")


def sentences(answer: str) -> list[str]:
    """The sentences of an answer: split after . ! ? outside code and roles."""
    spans = {m.start(): m.end() for m in _CODE.finditer(answer)}
    out, start, i = [], 0, 0
    while i < len(answer):
        if i in spans:
            i = spans[i]
            continue
        char = answer[i]
        after = answer[i + 1 : i + 2]
        if char in ".!?" and (after == "" or after.isspace()):
            candidate = answer[start : i + 1].strip()
            if not _ABBREVIATIONS.search(candidate):
                out.append(candidate)
                start = i + 1
        i += 1
    if answer[start:].strip():
        out.append(answer[start:].strip())
    return [s for s in out if s]


def test_sentences_split_outside_code_and_abbreviations() -> None:
    answer = "Use `x.grad.zero_()`. It resets, e.g. after a step {proof}`a`. Done {proof}`b`."
    assert sentences(answer) == [
        "Use `x.grad.zero_()`.",
        "It resets, e.g. after a step {proof}`a`.",
        "Done {proof}`b`.",
    ]


def test_there_are_question_pages() -> None:
    assert len(QUESTION_PAGES) >= 30


@pytest.mark.parametrize("page", QUESTION_PAGES)
def test_every_answer_sentence_links_to_its_proof(page: str) -> None:
    _question, answer = question_and_answer(DOCS / page)
    unproven = [s for s in sentences(answer) if not PROOF.search(s)]
    assert unproven == [], f"{page}: answer sentences without a {{proof}} link"


@pytest.mark.parametrize("page", QUESTION_PAGES)
def test_every_proof_target_holds_an_example_or_a_source_note(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    _question, answer = question_and_answer(DOCS / page)
    problems = {label: proof_problem(text, label) for label in PROOF.findall(answer)}
    assert {label: p for label, p in problems.items() if p} == {}


PAGE = """\
# A question

(with-example)=
## A section

```pycon
>>> 1 + 1
2
```

(a-block)=
```pycon
>>> 2
2
```

(cited)=
## CUDA internals

:::{torch-source} torch/cuda/memory.py
:function: memory_stats
What it returns.
:::

(prose-only)=
## Another

Only words.
"""


@pytest.mark.parametrize("label", ["with-example", "a-block", "cited"])
def test_a_target_with_an_example_or_a_source_note_is_proof(label: str) -> None:
    assert proof_problem(PAGE, label) is None


def test_a_target_with_only_prose_is_not_proof() -> None:
    assert "no executed example" in (proof_problem(PAGE, "prose-only") or "")


def test_a_missing_target_is_not_proof() -> None:
    assert "no target (nowhere)=" in (proof_problem(PAGE, "nowhere") or "")


def test_the_proof_words_are_translated() -> None:
    from babel.messages.pofile import read_po
    from ptnotes_dev.settings import load
    from ptnotes_dev.sphinx import proof

    for language in load().translations:
        path = DOCS / "locales" / language.code / "LC_MESSAGES" / "ptnotes_dev.po"
        with path.open("rb") as handle:
            catalog = {m.id: m.string for m in read_po(handle) if m.id and not m.fuzzy}
        assert [m for m in proof.MESSAGES if not catalog.get(m)] == []
