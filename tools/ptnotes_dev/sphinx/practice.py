"""Practice mode: "What does this print?" drills made from the pages' own examples.

A page makes one of its examples a drill with a MyST comment line ``% practice`` directly above
the example's ``(label)=`` target::

    % practice
    (joining-cat-shape)=

    ```pycon
    >>> torch.cat([torch.zeros(2, 3), torch.zeros(2, 3)]).shape
    torch.Size([4, 3])
    ```

The drill *is* that doctested block: its question is the block's code, its answer the block's
expected output (what the doctests and the release matrix verify), so a drill cannot drift from
the page. Each drill shows the code, hides the answer in an HTML ``<details>`` element (a reveal
that needs no JavaScript and works offline), says when the release matrix saw another output
on older releases, and links to the section of the page that explains it.

* On every page with drills, a "Practice" section at the end lists them.
* ``{practice-drills}`` (option ``:section: tensors``, or none for every section) gathers the
  drills of a section's pages, in the order of its toctree, under each page's title.

The marker line is a choice of example, not a statement: the review record's prose hash leaves
it out (:mod:`ptnotes_dev.reviews`). The words this writes come from the extension catalog
(:mod:`ptnotes_dev.sphinx.matrix`), so each edition reads them in its language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from ptnotes_dev import matrix as data_model
from ptnotes_dev.sphinx.interview import toctree_entries
from ptnotes_dev.sphinx.matrix import CATALOG, labelled_keys, matrix_data, release_span

logger = logging.getLogger(__name__)
_translate = get_translation(CATALOG)

#: The sections whose pages hold drills, in the order of the site's reference toctree.
SECTIONS = ("tensors", "autograd", "modules", "training", "devices")
MARKER = re.compile(r"^%\s*practice\s*$")
_LABEL = re.compile(r"^\(([\w-]+)\)=\s*$")
_DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")


def _(message: str) -> str:
    """``message`` in the language of the edition being built."""
    return str(_translate(message))


#: Every message this extension writes (a test checks that each catalog translates them all).
MESSAGES = (
    "Practice: what does this print?",
    "What does this print?",
    "Show the answer",
    "Explained in: {section}",
    "On torch {releases} the release matrix saw another output: {output}",
    "No drill in this section yet.",
)


@dataclass(frozen=True)
class Drill:
    """One marked example of a page's source: its label, its line and its pycon text."""

    label: str
    line: int
    text: str

    @property
    def code(self) -> str:
        """The question: the block's input lines (prompts kept, doctest directives removed)."""
        lines = [ln for ln in self.text.splitlines() if ln.startswith((">>>", "..."))]
        return "\n".join(_DIRECTIVE.sub("", ln).rstrip() for ln in lines)

    @property
    def answer(self) -> str:
        """The answer: the whole block as the page shows it, outputs included."""
        return "\n".join(_DIRECTIVE.sub("", ln).rstrip() for ln in self.text.splitlines())

    @property
    def output(self) -> str:
        """The expected output alone: every line that is not code."""
        lines = [ln for ln in self.text.splitlines() if not ln.startswith((">>>", "..."))]
        return "\n".join(lines)


def drills(text: str) -> list[Drill]:
    """The drills a page's MyST source marks, in order.

    Raises ValueError when a marker is not followed by a label and a ``pycon`` fence.
    """
    lines = text.splitlines()
    found: list[Drill] = []
    for index, line in enumerate(lines):
        if not MARKER.match(line):
            continue
        label = _LABEL.match(lines[index + 1]) if index + 1 < len(lines) else None
        rest = [(i, ln) for i, ln in enumerate(lines[index + 2 :], index + 2) if ln.strip()]
        if label is None or not rest or not rest[0][1].startswith("```pycon"):
            raise ValueError(
                f"line {index + 1}: '% practice' must stand directly above a '(label)=' line "
                "followed by a ```pycon example"
            )
        start = rest[0][0]
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
        found.append(Drill(label.group(1), start + 1, "\n".join(lines[start + 1 : end])))
    return found


def _env_drills(env: BuildEnvironment) -> dict[str, list[dict[str, str]]]:
    if not hasattr(env, "ptnotes_drills"):
        env.ptnotes_drills = {}  # type: ignore[attr-defined]
    store: dict[str, list[dict[str, str]]] = env.ptnotes_drills  # type: ignore[attr-defined]
    return store


def _collect(app: Sphinx, doctree: nodes.document) -> None:
    """Record the page's drills with the title of the section each one sits in."""
    env = app.env
    source = Path(env.doc2path(env.docname))
    if source.suffix != ".md":
        return
    try:
        marked = drills(source.read_text(encoding="utf-8"))
    except ValueError as error:
        logger.warning(f"{error}", location=env.docname)
        return
    if not marked:
        _env_drills(env).pop(env.docname, None)
        return
    records = []
    for drill in marked:
        target = next(
            (n for n in doctree.findall(nodes.Element) if drill.label in n.get("ids", [])), None
        )
        section = _section_of(target)
        if section is None:
            logger.warning(f"drill {drill.label!r}: no section holds it", location=env.docname)
            continue
        title = next(iter(section.findall(nodes.title)))
        records.append(
            {
                "label": drill.label,
                "code": drill.code,
                "answer": drill.answer,
                "section": title.astext(),
                "section_id": section["ids"][0],
            }
        )
    _env_drills(env)[env.docname] = records


def _section_of(node: nodes.Node | None) -> nodes.section | None:
    while node is not None and not isinstance(node, nodes.section):
        node = node.parent
    return node


def _differs_note(app: Sphinx, docname: str, label: str) -> nodes.paragraph | None:
    """Where the release matrix saw this drill's block print something else, a sentence."""
    keys = labelled_keys(app, docname, label) or []
    data = matrix_data(app)[0]
    columns = data_model.cpu_columns(data)
    failing = [c for c in columns if any(data_model.outcome(data, k, c) == "failed" for k in keys)]
    if not failing:
        return None
    output = data_model.failure_output(data, keys[0], failing[-1]) if len(keys) == 1 else ""
    got = re.search(r"Got:\n(.*)", output, re.DOTALL)
    shown = " ".join(got.group(1).split())[:200] if got else "-"
    text = _("On torch {releases} the release matrix saw another output: {output}").format(
        releases=release_span(failing, columns), output=shown
    )
    paragraph = nodes.paragraph("", text, classes=["ptnotes-drill-differs"])
    paragraph["translatable"] = False
    return paragraph


def _drill_nodes(
    app: Sphinx, here: str, docname: str, record: dict[str, str], html: bool
) -> nodes.container:
    """One drill: the question, the code, and the answer behind a reveal."""
    box = nodes.container("", classes=["ptnotes-drill"], ids=[f"drill-{record['label']}"])
    question = nodes.paragraph("", "", nodes.strong("", _("What does this print?")))
    question["translatable"] = False
    box += question
    code = nodes.literal_block(record["code"], record["code"], language="pycon")
    box += code
    if html:
        box += nodes.raw(
            "", f'<details class="ptnotes-answer"><summary>{_("Show the answer")}</summary>',
            format="html",
        )  # fmt: skip
    answer = nodes.literal_block(record["answer"], record["answer"], language="pycon")
    answer["classes"].append("ptnotes-drill-answer")
    box += answer
    note = _differs_note(app, docname, record["label"])
    if note is not None:
        box += note
    uri = app.builder.get_relative_uri(here, docname) if here != docname else ""
    link = nodes.reference("", record["section"], internal=True, refuri=f"{uri}#{record['label']}")
    explained = nodes.paragraph("", "")
    explained["translatable"] = False
    before, _sep, after = _("Explained in: {section}").partition("{section}")
    explained += [nodes.Text(before), link, nodes.Text(after)]
    box += explained
    if html:
        box += nodes.raw("", "</details>", format="html")
    return box


class practice_list(nodes.General, nodes.Element):  # noqa: N801 (docutils node naming)
    """Placeholder for the drills of a section, filled in when every page has been read."""


class PracticeDrills(SphinxDirective):
    """``{practice-drills}``: the drills of one section's pages (``:section:``), or of all."""

    option_spec: ClassVar[dict[str, Any]] = {"section": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        section = self.options.get("section", "").strip()
        if section and section not in SECTIONS:
            raise self.error(f"no section {section!r} (one of {', '.join(SECTIONS)})")
        pages: set[str] = getattr(self.env, "ptnotes_practice_pages", set())
        pages.add(self.env.docname)
        self.env.ptnotes_practice_pages = pages  # type: ignore[attr-defined]
        return [practice_list("", section=section)]


def section_pages(srcdir: Path, section: str) -> list[str]:
    """The docnames of a section's pages, in the order of its toctree."""
    return [f"{section}/{entry}" for entry in toctree_entries(srcdir / section / "index.md")]


def _resolve(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.name == "gettext":
        return  # generated text in the edition's language: never extracted into catalogs
    html = app.builder.format == "html"
    store = _env_drills(app.env)
    # The LaTeX builder resolves one tree holding every page, each after a start_of_file.
    pages = [(n["docname"], n) for n in doctree.findall(addnodes.start_of_file)]
    for page, tree in [(docname, doctree), *pages]:
        records = store.get(page, [])
        top = next(iter(tree.findall(nodes.section)), None)
        if not records or top is None:
            continue
        section = nodes.section("", ids=["practice"], names=["practice"])
        section += nodes.title("", _("Practice: what does this print?"))
        for record in records:
            section += _drill_nodes(app, page, page, record, html)
        top += section
    for placeholder in list(doctree.findall(practice_list)):
        wanted = [placeholder["section"]] if placeholder["section"] else list(SECTIONS)
        content: list[nodes.Node] = []
        for section_name in wanted:
            for page in section_pages(Path(app.srcdir), section_name):
                page_records = store.get(page, [])
                if not page_records:
                    continue
                title = app.env.titles[page].astext() if page in app.env.titles else page
                heading = nodes.rubric("", "")
                heading += nodes.reference(
                    "", title, internal=True, refuri=app.builder.get_relative_uri(docname, page)
                )
                content.append(heading)
                content += [_drill_nodes(app, docname, page, r, html) for r in page_records]
        if not content:
            empty = nodes.paragraph("", _("No drill in this section yet."))
            empty["translatable"] = False
            content = [empty]
        placeholder.replace_self(content)


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _env_drills(env).pop(docname, None)
    getattr(env, "ptnotes_practice_pages", set()).discard(docname)


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: Any) -> None:
    _env_drills(env).update(getattr(other, "ptnotes_drills", {}))
    pages: set[str] = getattr(env, "ptnotes_practice_pages", set())
    pages |= getattr(other, "ptnotes_practice_pages", set())
    env.ptnotes_practice_pages = pages  # type: ignore[attr-defined]


def _outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """The practice pages gather other pages' drills: rebuilt when any page changes."""
    if added or changed or removed:
        return sorted(getattr(env, "ptnotes_practice_pages", set()))
    return []


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(practice_list)
    app.add_directive("practice-drills", PracticeDrills)
    app.connect("doctree-read", _collect)
    app.connect("doctree-resolved", _resolve)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _outdated)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
