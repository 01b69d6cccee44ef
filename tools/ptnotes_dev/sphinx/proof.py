"""Every sentence earns its example: links from a claim to its proof, notes citing torch's source.

* ``{proof}`label``` — a small "show me" link to the target ``(label)=`` of the same page: a
  section (the label above a heading) or one code block (the label above a fence). The build
  warns (an error under ``-W``) when the label is not on the page, or when what it names
  holds neither an executed example (a ``>>>`` block) nor a ``{torch-source}`` note. The
  "In an interview" answers put one before the end of every sentence; the interview index
  gathers them and the links still lead to the page.
* ``{torch-source}`` — for what cannot run on a CPU (CUDA allocator internals, NCCL, cuDNN):
  a note naming the file (argument) and function (``:function:``) of torch's source at the
  release the site pins (``[tool.ptnotes] torch``), linked to that tag on GitHub, with the
  page's explanation of what the source shows as its body::

      :::{torch-source} torch/cuda/memory.py
      :function: memory_stats
      What the function returns, as the source shows it.
      :::

The words these write ("show me", "Source") come from the extension catalog that
:mod:`ptnotes_dev.sphinx.matrix` compiles, so each edition reads them in its language.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from ptnotes_dev import matrix as data_model
from ptnotes_dev.settings import load
from ptnotes_dev.sphinx.matrix import CATALOG

logger = logging.getLogger(__name__)
_translate = get_translation(CATALOG)


def _(message: str) -> str:
    """``message`` in the language of the edition being built (the extension catalog)."""
    return str(_translate(message))


#: Every message this extension writes (tests/test_proof.py checks the catalogs have them).
MESSAGES = ("show me", "Source:", "{function} in {path}, torch {release}")

#: Where torch's source is read at a release tag.
SOURCE_URL = "https://github.com/pytorch/pytorch/blob/v{release}/{path}"

#: What counts as proof in a target: an executed example, or a note citing torch's source.
_EXAMPLE = re.compile(r"^\s*>>> ", re.MULTILINE)
_SOURCE_NOTE = re.compile(r"^\s*:{3,}\{torch-source\}", re.MULTILINE)


def pinned_release() -> str:
    """The torch release the site pins (``torch==X.Y.Z`` → ``X.Y.Z``)."""
    spec = load().torch
    match = re.fullmatch(r"torch\s*==\s*([\w.+]+)", spec.strip())
    if match is None:
        raise ValueError(f"[tool.ptnotes] torch must pin one release (torch==X.Y.Z), got {spec!r}")
    return match.group(1).split("+")[0]


def proof_problem(text: str, label: str) -> str | None:
    """Why ``(label)=`` in the page source ``text`` proves nothing, or None when it does."""
    span = data_model.labelled_lines(text, label)
    if span is None:
        return f"no target ({label})= above a heading or a code fence on this page"
    body = "\n".join(text.splitlines()[span[0] - 1 : span[1]])
    if _EXAMPLE.search(body) or _SOURCE_NOTE.search(body):
        return None
    return f"the target ({label})= holds no executed example and no {{torch-source}} note"


class Proof(SphinxRole):
    """``{proof}`label```: a "show me" link to the example that shows the sentence."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        label = self.text.strip()
        source = Path(self.env.doc2path(self.env.docname))
        # The interview index shows answers written on other pages: their own build checks
        # them. On the page itself, the target must be there and hold a proof.
        if source.suffix == ".md" and f"({label})=" in source.read_text(encoding="utf-8"):
            problem = proof_problem(source.read_text(encoding="utf-8"), label)
            if problem:
                logger.warning(
                    "proof: %s", problem, location=self.get_location(), type="ptnotes",
                    subtype="proof",
                )  # fmt: skip
        elif self.env.docname != "interview":
            logger.warning(
                "proof: no target (%s)= on this page", label, location=self.get_location(),
                type="ptnotes", subtype="proof",
            )  # fmt: skip
        text = _("show me")
        xref = addnodes.pending_xref(
            "", nodes.inline(text, text), refdomain="std", reftype="ref",
            reftarget=label, refexplicit=True, refwarn=True,
        )  # fmt: skip
        return [nodes.inline("", "", xref, classes=["ptnotes-proof"])], []


class TorchSource(SphinxDirective):
    """A note citing one function of torch's source at the pinned release."""

    required_arguments = 1
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {"function": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        path = self.arguments[0].strip()
        if not re.fullmatch(r"(torch|aten|c10|caffe2|torchgen)/[\w./-]+\.\w+", path):
            raise self.error(f"torch-source: {path!r} is not a path in torch's repository")
        if "function" not in self.options:
            raise self.error("torch-source: name the function with :function:")
        if not self.content:
            raise self.error("torch-source: say what the source shows (the note's body)")
        release = pinned_release()
        url = SOURCE_URL.format(release=release, path=path)
        function = self.options["function"]
        title = nodes.title("", "")
        title += nodes.Text(_("Source:") + " ")
        label = _("{function} in {path}, torch {release}").format(
            function=function, path=path, release=release
        )
        title += nodes.reference("", label, refuri=url, internal=False)
        # Written in the edition's language by this extension (its own catalog), with the
        # release from the settings: not a message of the page's catalog, which would name
        # the pinned release in every translation.
        title["translatable"] = False
        note = nodes.admonition("", title, classes=["ptnotes-source"])
        self.set_source_info(note)
        self.state.nested_parse(self.content, self.content_offset, note)
        return [note]


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("ptnotes_dev.sphinx.matrix")  # compiles the catalog of the words
    app.add_role("proof", Proof())
    app.add_directive("torch-source", TorchSource)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
