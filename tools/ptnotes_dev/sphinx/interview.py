"""The interview index: every page's question with its "In an interview" answer, collapsible.

``{interview-questions}`` with the option ``:section: autograd`` lists the pages of that
section's toctree, in order, each as a sphinx-design dropdown: the page title (the reader's
question) as the summary, the page's "In an interview" answer as the body, and a link to the
page. The answers live once, on their pages; this index only gathers them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from ptnotes_dev.sphinx.matrix import qualified

ANSWER_HEADING = "## In an interview"


def toctree_entries(index: Path) -> list[str]:
    """The documents listed in the toctree of a section's ``index.md``, in order."""
    entries: list[str] = []
    inside = False
    for line in index.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("```{toctree}"):
            inside = True
        elif inside and stripped.startswith("```"):
            inside = False
        elif inside and stripped and not stripped.startswith(":"):
            entries.append(stripped)
    return entries


def question_and_answer(page: Path) -> tuple[str, str]:
    """The page's title and the quoted answer under its "In an interview" heading."""
    text = page.read_text(encoding="utf-8")
    title = re.search(r"^# (.+)$", text, re.MULTILINE)
    if title is None:
        raise ValueError(f"{page}: no title")
    _, found, rest = text.partition(f"\n{ANSWER_HEADING}\n")
    if not found:
        raise ValueError(f"{page}: no '{ANSWER_HEADING}' section")
    quoted = []
    for line in rest.lstrip("\n").splitlines():
        if not line.startswith(">"):
            break
        quoted.append(line[1:].strip())
    answer = " ".join(quoted).strip()
    if not answer:
        raise ValueError(f"{page}: the '{ANSWER_HEADING}' section has no quoted answer")
    return title.group(1).strip(), answer


class InterviewQuestions(SphinxDirective):
    """Dropdowns of question + answer for the pages of one section."""

    option_spec: ClassVar[dict[str, Any]] = {"section": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        section = self.options["section"]
        folder = Path(self.env.srcdir) / section
        index = folder / "index.md"
        if not index.exists():
            raise self.error(f"no section {section!r} (expected {index})")
        self.env.note_dependency(str(index))
        lines: list[str] = []
        for entry in toctree_entries(index):
            page = folder / f"{entry}.md"
            self.env.note_dependency(str(page))
            try:
                question, answer = question_and_answer(page)
            except ValueError as error:
                raise self.error(str(error)) from error
            lines += [
                f"::::{{dropdown}} {question}",
                "",
                qualified(answer, f"{section}/{entry}"),
                "",
                f"{{doc}}`/{section}/{entry}`",
                "::::",
                "",
            ]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source=self.env.docname), 0, container)
        return list(container.children)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("interview-questions", InterviewQuestions)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
