"""Resolve torch objects that autodoc names by their defining module.

autodoc writes type hints with the module where a class is defined
(``torch.nn.modules.module.Module``, ``torch._C.Generator``); the torch inventory lists the
public names. A ``missing-reference`` handler tries the object's name under each public
namespace of ``ptnotes_torch_namespaces`` until intersphinx resolves one, and leaves
everything else to the normal nitpicky warning.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.ext.intersphinx import missing_reference

#: Public namespaces under which torch documents objects that it defines in private modules
#: (``torch.nn.modules.linear.Linear`` is documented as ``torch.nn.Linear``), tried in order.
DEFAULT_NAMESPACES = ("torch.nn", "torch.optim", "torch.utils.data", "torch.autograd", "torch")


def _torch_public_name(
    app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: nodes.TextElement
) -> nodes.reference | None:
    target = node.get("reftarget", "")
    if not target.startswith("torch.") or node.get("refdomain") != "py":
        return None
    name = target.rsplit(".", 1)[-1]
    for namespace in app.config.ptnotes_torch_namespaces:
        candidate = f"{namespace}.{name}"
        if candidate == target:
            continue
        trial = node.deepcopy()
        trial["reftarget"] = candidate
        resolved = missing_reference(app, env, trial, contnode)
        if resolved is not None:
            return resolved
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinx.ext.intersphinx")
    app.add_config_value("ptnotes_torch_namespaces", DEFAULT_NAMESPACES, "env", types=[tuple, list])
    app.connect("missing-reference", _torch_public_name)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
