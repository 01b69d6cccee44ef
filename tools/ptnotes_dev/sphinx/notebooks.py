"""Every page with examples as a Jupyter notebook, in the language of the edition being built.

The HTML build writes ``_notebooks/<docname>.ipynb`` beside the pages (with ``nbformat``) and
puts a "Download notebook" link into the page's stamp. A notebook holds:

* a first code cell of notebook settings: every expression's value printed, in plain
  ``repr``, as the interactive prompt of the page prints it, and the ``%%requires_cuda`` cell
  magic that skips a CUDA-only cell with a sentence saying why where there is no CUDA device;
* the page's prose as Markdown cells, from the edition's doctree (the zh_CN notebook is
  Chinese), its code never translated;
* each ``pycon`` block (on the API pages, each docstring's examples) as a code cell without
  prompts or doctest directives, its verified output stored as the cell's output. A block is
  cut after a statement whose expected output is a traceback (that cell is tagged
  ``raises-exception``, so "Run All" goes on), and around its CUDA-only statements
  (``%%requires_cuda``);
* on the API pages, each function's or class's signature as a heading and its Parameters,
  Returns and Raises as Markdown; the drills of the Practice sections are left out.

Each code cell keeps what the page expects in ``metadata.ptnotes.want`` (and the doctest
flags it was compared under), so tests/site/test_notebooks.py compares what a real kernel
prints with the page's expected output under the doctests' checker.
"""

from __future__ import annotations

import doctest
import html
import re
from pathlib import Path
from typing import Any

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation

from ptnotes_dev.doctesting import REQUIRES_CUDA
from ptnotes_dev.settings import load
from ptnotes_dev.sphinx.matrix import CATALOG
from ptnotes_dev.sphinx.reader_links import colab_url

_translate = get_translation(CATALOG)
FOLDER = "_notebooks"
_CONTEXT_KEYS = ("skip_if", "skip_reason", "not_run")
_DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$", re.MULTILINE)
_SKIPPED_CLASSES = {"ptnotes-stamp", "ptnotes-proof", "ptnotes-drill", "sphx-glr-download"}


def _(message: str) -> str:
    """``message`` in the language of the edition being built."""
    return str(_translate(message))


#: Every message this extension writes (a test checks that each catalog translates them all).
MESSAGES = (
    "Download this page as a Jupyter notebook",
    "This notebook is the ptnotes page \u201c{title}\u201d: its examples as code cells, with "
    "the outputs verified on the page.",
    "Skipped: this cell needs a CUDA device, and torch.cuda.is_available() is False here.",
    "Open in Colab",
)

SETTINGS_CELL = """\
# Notebook settings (ptnotes): print the value of every expression, in plain repr, as the
# interactive prompt on the page does; %%requires_cuda skips a cell where CUDA is missing,
# %%skip_if a cell that shows another build or device than this one (the page says which).
%config InteractiveShell.ast_node_interactivity = "all"
%config PlainTextFormatter.pprint = False
from IPython.core.magic import register_cell_magic


@register_cell_magic
def requires_cuda(line, cell):
    import torch

    if not torch.cuda.is_available():
        print({skipped!r})
        return
    get_ipython().run_cell(cell)


@register_cell_magic
def skip_if(line, cell):
    condition, _, reason = line.partition(" -- ")
    if eval(condition, get_ipython().user_ns):
        print("Skipped:", reason)
        return
    get_ipython().run_cell(cell)
"""


# -- pycon blocks as code cells ---------------------------------------------------------------


def code_cells(text: str, context: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The code cells of one ``pycon`` block, with the page's expected output as outputs.

    ``context`` holds what the comments above the block said: ``skip_if`` (the condition of
    an enclosing ``% skip: start if(...)`` region, with its reason) and ``not_run`` (why a
    ``% notebook-skip:`` block cannot run in a kernel as it runs at the prompt).
    """
    examples = doctest.DocTestParser().get_examples(text)
    groups: list[list[doctest.Example]] = []
    current: list[doctest.Example] = []
    cuda_group = False
    for example in examples:
        cuda = bool(example.options.get(REQUIRES_CUDA))
        if current and cuda != cuda_group:
            groups.append(current)
            current = []
        cuda_group = cuda
        current.append(example)
        if example.exc_msg is not None:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return [_cell(group, context or {}) for group in groups]


def _cell(group: list[doctest.Example], context: dict[str, str]) -> dict[str, Any]:
    source = "".join(_DIRECTIVE.sub("", example.source) for example in group).rstrip("\n")
    cuda = bool(group[0].options.get(REQUIRES_CUDA))
    if cuda:
        source = "%%requires_cuda\n" + source
    elif "skip_if" in context:
        source = f"%%skip_if {context['skip_if']} -- {context['skip_reason']}\n" + source
    elif "not_run" in context:
        source = f"# Not run in a notebook: {context['not_run']}\n" + source
    outputs: list[Any] = []
    printed = "".join(example.want for example in group if example.exc_msg is None)
    if printed:
        shown = printed.replace("<BLANKLINE>", "")  # the kernel prints an empty line
        outputs.append(nbformat.v4.new_output("stream", name="stdout", text=shown))
    last = group[-1]
    tags: list[str] = []
    if last.exc_msg is not None:
        name, _sep, value = last.exc_msg.rstrip("\n").partition(": ")
        outputs.append(
            nbformat.v4.new_output(
                "error", ename=name, evalue=value, traceback=[f"{name}: {value}"]
            )
        )
        tags.append("raises-exception")
    flags = sorted(
        {
            name
            for example in group
            for name, flag in doctest.OPTIONFLAGS_BY_NAME.items()
            if example.options.get(flag)
        }
    )
    cell = nbformat.v4.new_code_cell(source, outputs=outputs if not cuda else [])
    said: dict[str, Any] = {k: v for k, v in context.items() if k in _CONTEXT_KEYS}
    cell.metadata["ptnotes"] = {
        **said,
        "want": printed,
        "exception": last.exc_msg.rstrip("\n") if last.exc_msg is not None else None,
        "flags": flags,
        "cuda": cuda,
    }
    if "not_run" in context:
        tags.append("skip-execution")  # nbclient leaves it alone; its reason is in the cell
    if tags:
        cell.metadata["tags"] = tags
    return dict(cell)


# -- prose as Markdown ------------------------------------------------------------------------


def _inline(node: nodes.Node, styled: bool = False) -> str:
    """``node`` as Markdown; ``styled``: inside emphasis already (an API page's parameter
    types nest them), where Markdown would break on another ``*``."""
    if isinstance(node, nodes.Text):
        return str(node)
    if not isinstance(node, nodes.Element):
        return ""
    if set(node.get("classes", [])) & _SKIPPED_CLASSES:
        return ""
    emphasis = isinstance(node, (nodes.strong, nodes.emphasis))
    inner = "".join(_inline(child, styled or emphasis) for child in node.children)
    if isinstance(node, nodes.literal):
        return f"`{node.astext()}`"
    # A parameter's type, written by autodoc one emphasised piece at a time (str, " | ",
    # None): plain text, as Markdown cannot join the pieces.
    if (emphasis and styled) or isinstance(node, addnodes.literal_emphasis):
        return inner
    if isinstance(node, nodes.strong):
        return f"**{inner}**"
    if isinstance(node, nodes.emphasis):
        return f"*{inner}*"
    if isinstance(node, nodes.math):
        return f"${node.astext()}$"
    if isinstance(node, nodes.reference) and str(node.get("refuri", "")).startswith("http"):
        return f"[{inner}]({node['refuri']})"
    if isinstance(node, (nodes.raw, nodes.comment, nodes.target)):
        return ""
    return inner


_SKIP_START = re.compile(
    r"skip:\s*start\s+if\((?P<condition>.*),\s*reason=(?P<q>[\"'])(?P<reason>.*)(?P=q)\)\s*$"
)
_NOTEBOOK_SKIP = re.compile(r"notebook-skip:\s*(?P<reason>.+)$", re.DOTALL)


def _markdown(
    node: nodes.Node, level: int, cells: list[dict[str, Any]], state: dict[str, str]
) -> None:
    """Append ``node`` to ``cells``: prose to the last Markdown cell, examples as code cells.

    ``state`` carries what comments said to the blocks after them (see :func:`code_cells`).
    """

    def text(markdown: str) -> None:
        if not markdown.strip():
            return
        if cells and cells[-1]["cell_type"] == "markdown":
            cells[-1]["source"] += "\n\n" + markdown
        else:
            cells.append(dict(nbformat.v4.new_markdown_cell(markdown)))

    if not isinstance(node, nodes.Element):
        return
    if set(node.get("classes", [])) & _SKIPPED_CLASSES or "practice" in node.get("ids", []):
        return
    if isinstance(node, nodes.comment):
        comment = " ".join(node.astext().split())
        start, skip = _SKIP_START.match(comment), _NOTEBOOK_SKIP.match(comment)
        if start:
            state["skip_if"], state["skip_reason"] = start["condition"], start["reason"]
        elif comment.startswith("skip:") and "end" in comment:
            state.pop("skip_if", None)
            state.pop("skip_reason", None)
        elif skip:
            state["not_run"] = skip["reason"]
        return
    if isinstance(node, (nodes.raw, nodes.target, nodes.substitution_definition)):
        return
    if isinstance(node, nodes.section):
        for child in node.children:
            _markdown(child, level + 1, cells, state)
        return
    if isinstance(node, nodes.title):
        text("#" * max(level, 1) + " " + _inline(node))
        return
    if isinstance(node, (nodes.literal_block, nodes.doctest_block)):
        pycon = isinstance(node, nodes.doctest_block) or node.get("language") == "pycon"
        if pycon and ">>>" in node.astext():
            source = node.get("ptnotes_source", node.astext()) + "\n"
            cells.extend(code_cells(source, dict(state)))
            state.pop("not_run", None)  # a notebook-skip comment names the next block only
        else:
            text(f"```{node.get('language', '')}\n{node.astext()}\n```")
        return
    if isinstance(node, nodes.paragraph):
        text(_inline(node))
        return
    if isinstance(node, addnodes.desc_signature):  # an API page's function or class
        text(f"#### `{' '.join(node.astext().split())}`")
        return
    if isinstance(node, nodes.field_list):  # its Parameters, Returns, Raises
        for field in node.children:
            name, body = field.children[0], field.children[-1]
            described: list[dict[str, Any]] = []
            for child in body.children:
                _markdown(child, level, described, state)
            prose = "\n\n".join(c["source"] for c in described if c["cell_type"] == "markdown")
            text(f"**{_inline(name)}**:\n\n{prose}")
        return
    if isinstance(node, nodes.rubric):
        text(f"**{_inline(node)}**")
        return
    if isinstance(node, nodes.math_block):
        text(f"$$\n{node.astext()}\n$$")
        return
    if isinstance(node, (nodes.bullet_list, nodes.enumerated_list)):
        marker = "-" if isinstance(node, nodes.bullet_list) else "1."
        items = [
            f"{marker} "
            + " ".join(_inline(p) for p in item.children if isinstance(p, nodes.Element))
            for item in node.children
        ]
        text("\n".join(items))
        return
    if isinstance(node, nodes.definition_list):
        text("\n\n".join(f"**{_inline(i[0])}**: {_inline(i[-1])}" for i in node.children))
        return
    if isinstance(node, addnodes.desc):  # an API entry: Sphinx makes it an Admonition
        for child in node.children:
            _markdown(child, level, cells, state)
        return
    if isinstance(node, (nodes.Admonition, nodes.block_quote)):
        inner: list[dict[str, Any]] = []
        for child in node.children:
            _markdown(child, level, inner, state)
        for cell in inner:
            if cell["cell_type"] == "markdown":
                text("\n".join("> " + line for line in cell["source"].splitlines()))
            else:
                cells.append(cell)
        return
    for child in node.children:
        _markdown(child, level, cells, state)


def notebook(doctree: nodes.document) -> nbformat.NotebookNode | None:
    """The notebook of one page's doctree, or None when the page has no ``pycon`` example."""
    cells: list[dict[str, Any]] = []
    top = next(iter(doctree.findall(nodes.section)), None)
    if top is None:
        return None
    _markdown(top, 0, cells, {})
    if not any(cell["cell_type"] == "code" for cell in cells):
        return None
    intro = _(
        "This notebook is the ptnotes page \u201c{title}\u201d: its examples as code cells, with "
        "the outputs verified on the page."
    ).format(title=_inline(next(iter(top.findall(nodes.title)))))
    settings = SETTINGS_CELL.format(
        skipped=_(
            "Skipped: this cell needs a CUDA device, and torch.cuda.is_available() is False here."
        )
    )
    first = [
        nbformat.v4.new_markdown_cell(intro),
        nbformat.v4.new_code_cell(settings.rstrip("\n")),
    ]
    book = nbformat.v4.new_notebook(cells=[*first, *cells])
    for index, cell in enumerate(book.cells):
        cell["id"] = f"cell-{index}"  # stable ids: a rebuild writes the same file
    book.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    book.metadata["language_info"] = {"name": "python"}
    book = nbformat.from_dict(book)
    nbformat.validate(book)
    return book


def keep_sources(app: Sphinx, doctree: nodes.document) -> None:
    """Keep each ``pycon`` block's text as written: Sphinx trims its doctest flags (and
    ``<BLANKLINE>``) before the page is written, and a notebook needs ``+REQUIRES_CUDA``."""
    for block in doctree.findall(nodes.literal_block):
        if block.get("language") == "pycon":
            block["ptnotes_source"] = block.astext()
    for block in doctree.findall(nodes.doctest_block):  # a docstring's examples (API pages)
        block["ptnotes_source"] = block.astext()


def notebook_path(docname: str) -> str:
    """Where the notebook of ``docname`` lies in an edition's output folder."""
    return f"{FOLDER}/{docname}.ipynb"


def _write(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.name not in {"html", "dirhtml"}:
        return
    book = notebook(doctree)
    if book is None:
        return
    path = Path(app.outdir) / notebook_path(docname)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(book) + "\n", encoding="utf-8")
    stamp = next(
        (n for n in doctree.findall(nodes.container) if "ptnotes-stamp" in n["classes"]), None
    )
    if stamp is None:
        return
    depth = docname.count("/")
    href = "../" * depth + notebook_path(docname)
    label = _("Download this page as a Jupyter notebook")
    links = f'<a class="ptnotes-notebook" href="{href}" download>{label}</a>'
    repo = load(Path(app.srcdir).parent).repository
    if repo is not None:
        colab = html.escape(colab_url(repo, app.config.language, notebook_path(docname)))
        links += f' · <a class="ptnotes-colab" href="{colab}">{_("Open in Colab")}</a>'
    stamp += nodes.raw("", f'<p class="ptnotes-downloads">{links}</p>', format="html")


def setup(app: Sphinx) -> dict[str, Any]:
    # After the practice extension (its drills are left out) and after the stamps exist.
    app.connect("doctree-read", keep_sources)
    app.connect("doctree-resolved", _write, priority=600)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
