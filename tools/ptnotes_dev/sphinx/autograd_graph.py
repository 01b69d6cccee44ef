"""Autograd graphs on the pages, drawn by Graphviz from :func:`ptnotes.graph.graph_dot`.

One directive, ``{autograd-graph}``, whose argument names an example of :data:`EXAMPLES`::

    ```{autograd-graph} notes-example
    ```

The example builds a small computation (the same one as the page's code); the directive
hands ``graph_dot``'s output for it, unchanged, to ``sphinx.ext.graphviz``, which runs
Graphviz's ``dot`` and embeds the result (an SVG with ``graphviz_output_format = "svg"``).
No DOT is written by hand: change ``graph_dot`` or the example and the drawing follows. The
node carries the class ``ptnotes-autograd-graph``, which ``_static/ptnotes.css`` inverts in
the theme's dark mode, as pydata-sphinx-theme does for inheritance diagrams.

torch is imported when a page that uses the directive is read, not when Sphinx starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.ext.graphviz import graphviz
from sphinx.util.docutils import SphinxDirective

if TYPE_CHECKING:
    import torch

#: What an example returns: the tensor whose graph is drawn, and ``{name: tensor}`` labels.
Example = tuple["torch.Tensor", Mapping[str, "torch.Tensor"]]

CSS_CLASS = "ptnotes-autograd-graph"


def exp_chain() -> Example:
    """``loss = (w * 2 + 1).exp()``: the chain of records on the graph page."""
    import torch

    w = torch.tensor(3.0, requires_grad=True)
    loss = (w * 2 + 1).exp()
    return loss, {"w": w, "loss": loss}


def notes_example() -> Example:
    """The notes' four-step example, ``loss = mean((x*w1 + w2) * (x*w1*w3))``."""
    import torch

    x = torch.ones(2, 2)
    w1 = torch.tensor(2.0, requires_grad=True)
    w2 = torch.tensor(3.0, requires_grad=True)
    w3 = torch.tensor(4.0, requires_grad=True)
    l1 = x * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    names = {"w1": w1, "w2": w2, "w3": w3, "l1": l1, "l2": l2, "l3": l3, "l4": l4, "loss": loss}
    return loss, names


#: The computations a page can draw, by the name the directive takes.
EXAMPLES: dict[str, Callable[[], Example]] = {
    "exp-chain": exp_chain,
    "notes-example": notes_example,
}


def example_dot(name: str) -> str:
    """``graph_dot``'s output for the example ``name``: the DOT the page draws."""
    from ptnotes.graph import graph_dot

    if name not in EXAMPLES:
        raise ValueError(
            f"unknown autograd graph example {name!r}; expected one of {sorted(EXAMPLES)}"
        )
    tensor, names = EXAMPLES[name]()
    return graph_dot(tensor, names)


class AutogradGraph(SphinxDirective):
    """Draw the autograd graph of a named example with ``sphinx.ext.graphviz``."""

    required_arguments = 1
    has_content = False
    option_spec: ClassVar[dict[str, Callable[[str], Any]]] = {
        "alt": directives.unchanged,
        "align": lambda argument: directives.choice(argument, ("left", "center", "right")),
    }

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        try:
            dot = example_dot(name)
        except ValueError as error:
            return [self.state.document.reporter.warning(str(error), line=self.lineno)]
        node = graphviz()
        node["code"] = dot
        node["options"] = {"docname": self.env.current_document.docname}
        node["classes"] = [CSS_CLASS]
        if "alt" in self.options:  # else Sphinx's default: the DOT text, in every edition
            node["alt"] = self.options["alt"]
        if "align" in self.options:
            node["align"] = self.options["align"]
        self.set_source_info(node)
        return [node]


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.graphviz")
    app.add_directive("autograd-graph", AutogradGraph)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
