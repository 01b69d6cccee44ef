"""Inspect the autograd graph behind a tensor: walk it, print it as a tree, export it as DOT."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from ptnotes.validation import argument_error, check_bool, check_type

__all__ = ["GraphNode", "graph_dot", "graph_text", "walk_graph"]

_SAVED_PREFIX = "_saved_"
_MAX_SAVED_REPR = 60


@dataclass(frozen=True)
class GraphNode:
    """One node of an autograd graph, as :func:`walk_graph` reports it.

    Attributes:
        id: the node's position in the walk (``0`` is the root): stable across runs,
            unlike a memory address.
        name: the class of the backward node, e.g. ``"MulBackward0"``, or
            ``"AccumulateGrad"`` for a leaf.
        kind: ``"function"`` for a backward function, ``"leaf"`` for the node that
            accumulates into a leaf tensor's ``.grad``.
        children: the ids of the nodes in its ``next_functions``, in order; inputs that
            need no gradient (``None`` entries) are left out.
        saved: ``(name, description)`` of what the node saved for backward (its
            ``_saved_*`` attributes), e.g. ``("other", "tensor(shape=(), dtype=torch.float32)")``;
            ``"<freed>"`` once ``backward()`` has released it. The node of a custom
            :class:`torch.autograd.Function` has no ``_saved_*`` attributes (it keeps its
            tensors in ``saved_tensors``), so its ``saved`` is empty.
        version: for a leaf, the version counter of its tensor (``None`` for a tensor
            created in inference mode, which has none); ``None`` for a function.
        variable: for a leaf, the leaf tensor itself; ``None`` for a function.
    """

    id: int
    name: str
    kind: Literal["function", "leaf"]
    children: tuple[int, ...] = ()
    saved: tuple[tuple[str, str], ...] = ()
    version: int | None = None
    variable: torch.Tensor | None = field(default=None, repr=False, compare=False)


def _describe(value: object) -> str:
    """A short, address-free description of a saved value."""
    if isinstance(value, torch.Tensor):
        return f"tensor(shape={tuple(value.shape)}, dtype={value.dtype})"
    text = repr(value)
    return text if len(text) <= _MAX_SAVED_REPR else text[: _MAX_SAVED_REPR - 3] + "..."


def _saved(fn: Any) -> tuple[tuple[str, str], ...]:
    """The ``_saved_*`` attributes of a backward node, described."""
    result = []
    for attribute in sorted(dir(fn)):
        if not attribute.startswith(_SAVED_PREFIX):
            continue
        try:
            description = _describe(getattr(fn, attribute))
        except RuntimeError:  # released by backward() (retain_graph=False)
            description = "<freed>"
        result.append((attribute[len(_SAVED_PREFIX) :], description))
    return tuple(result)


def _graph_tensor(caller: Callable[..., Any], tensor: object) -> torch.Tensor:
    """Return ``tensor`` if it has an autograd graph (a ``grad_fn``, or requires grad)."""
    tensor = check_type(caller, "tensor", tensor, torch.Tensor)
    if tensor.grad_fn is None and not tensor.requires_grad:
        expected = (
            "a tensor with an autograd graph (was it computed under torch.no_grad() or detached?)"
        )
        got = "a tensor whose grad_fn is None and requires_grad is False"
        raise argument_error(caller, "tensor", tensor, expected, got=got)
    if tensor.grad_fn is None and tensor._is_view() and _accumulator(tensor) is None:
        expected = "a tensor with an autograd graph (a leaf that requires grad on its own account)"
        got = "a view whose requires_grad is its base's and that has no AccumulateGrad node"
        raise argument_error(caller, "tensor", tensor, expected, got=got)
    return tensor


def _accumulator(tensor: torch.Tensor) -> Any:
    """The ``AccumulateGrad`` node of a leaf, or ``None`` (a view taken under ``no_grad``)."""
    with torch.inference_mode(False), torch.enable_grad():
        probe = tensor.view_as(tensor)
    return None if probe.grad_fn is None else probe.grad_fn.next_functions[0][0]


def _version(tensor: torch.Tensor) -> int | None:
    """The version counter of a leaf, or ``None`` for an inference tensor (it has none)."""
    return None if tensor.is_inference() else tensor._version


@dataclass
class _Walk:
    """The nodes of a walk, plus the backward-node objects they came from (kept alive)."""

    nodes: list[GraphNode]
    index: dict[int, int]  # id() of a backward-node object -> GraphNode.id
    objects: list[Any]


def _walk(tensor: torch.Tensor) -> _Walk:
    """Depth-first, pre-order walk of ``next_functions`` from ``tensor.grad_fn``."""
    root = tensor.grad_fn
    if root is None:  # a leaf that requires grad: its graph is the leaf itself
        node = GraphNode(0, "AccumulateGrad", "leaf", version=_version(tensor), variable=tensor)
        return _Walk([node], {}, [])
    index: dict[int, int] = {}
    objects: list[Any] = []
    stack: list[Any] = [root]
    while stack:  # iterative: deep graphs must not hit the recursion limit
        fn = stack.pop()
        if id(fn) in index:
            continue
        index[id(fn)] = len(objects)
        objects.append(fn)  # keeps the object alive, so that its id() stays unique
        stack.extend(child for child, _ in reversed(fn.next_functions) if child is not None)
    nodes = []
    for position, fn in enumerate(objects):
        children = tuple(index[id(child)] for child, _ in fn.next_functions if child is not None)
        # by class, not by a ``variable`` attribute (a custom Function's ctx may set one)
        if type(fn).__name__ == "AccumulateGrad":
            variable = fn.variable
            nodes.append(
                GraphNode(
                    position,
                    type(fn).__name__,
                    "leaf",
                    children,
                    version=_version(variable),
                    variable=variable,
                )
            )
        else:
            nodes.append(GraphNode(position, type(fn).__name__, "function", children, _saved(fn)))
    return _Walk(nodes, index, objects)


def walk_graph(tensor: torch.Tensor) -> list[GraphNode]:
    """List the nodes of the autograd graph that ``backward()`` on ``tensor`` would visit.

    Starts at :attr:`torch.Tensor.grad_fn` and follows each node's
    ``next_functions``, depth first, each node once even when several paths reach
    it (a shared sub-graph). A leaf that requires grad on its own account appears as the
    ``AccumulateGrad`` node that writes its ``.grad``; an input that needs no gradient
    appears nowhere (its ``next_functions`` entry is ``None``), nor does a view taken
    under ``torch.no_grad()`` whose ``requires_grad`` is its base's.

    Args:
        tensor: a tensor with a ``grad_fn``, or a leaf that requires grad on its own
            account.

    Returns:
        The nodes in pre-order, the root first; ``node.id`` is the position in this list.

    Raises:
        TypeError: if ``tensor`` is not a :class:`torch.Tensor`.
        ValueError: if ``tensor`` has no ``grad_fn`` and does not require grad, or is
            a view without a ``grad_fn`` whose ``requires_grad`` is its base's (one taken
            under ``torch.no_grad()``, say).

    Examples:
        >>> import torch
        >>> from ptnotes.graph import walk_graph
        >>> w = torch.tensor(3.0, requires_grad=True)
        >>> y = (w * w).exp()
        >>> for node in walk_graph(y):
        ...     print(node.id, node.name, node.kind, node.children)
        0 ExpBackward0 function (1,)
        1 MulBackward0 function (2, 2)
        2 AccumulateGrad leaf ()
        >>> for name, description in walk_graph(y)[1].saved:
        ...     print(name, description)
        other tensor(shape=(), dtype=torch.float32)
        self tensor(shape=(), dtype=torch.float32)
        >>> walk_graph(y)[2].variable is w
        True

        After ``backward()`` the saved tensors are released; a leaf that requires grad
        on its own account, such as ``w``, is its own graph:

        >>> y.backward()
        >>> walk_graph(y)[1].saved
        (('other', '<freed>'), ('self', '<freed>'))
        >>> [(node.name, node.kind) for node in walk_graph(w)]
        [('AccumulateGrad', 'leaf')]

        A comparison of ``w`` is not differentiable and has no graph to walk:

        >>> (w > 0).grad_fn is None
        True
        >>> walk_graph(w > 0)
        Traceback (most recent call last):
          ...
        ValueError: walk_graph() expects tensor to be a tensor with an autograd graph ...

        Nor has a result computed in inference mode, even with grad mode on there:

        >>> with torch.inference_mode(), torch.enable_grad():
        ...     grad_mode, doubled = torch.is_grad_enabled(), w * 2
        >>> grad_mode, doubled.grad_fn is None
        (True, True)

        A custom :class:`torch.autograd.Function`'s node lists nothing in ``saved``:

        >>> from ptnotes.functions import sigmoid
        >>> s = sigmoid(w)
        >>> walk_graph(s)[0].name, walk_graph(s)[0].saved, len(s.grad_fn.saved_tensors)
        ('SigmoidBackward', (), 1)

        A view taken under ``torch.no_grad()`` whose ``requires_grad`` is its base's has
        no ``AccumulateGrad`` node: it is no graph of its own, and in another tensor's
        graph it appears nowhere:

        >>> base = torch.tensor([1.0, 2.0], requires_grad=True)
        >>> with torch.no_grad():
        ...     view = base[:1]
        >>> view.requires_grad, [(node.name, node.children) for node in walk_graph(view * 3)]
        (True, [('MulBackward0', ())])
        >>> walk_graph(view)
        Traceback (most recent call last):
          ...
        ValueError: walk_graph() expects tensor to be a tensor with an autograd graph (a leaf ...

        A tensor created in inference mode with ``requires_grad=True`` gets no node from its
        ``exp()`` outside inference mode, but ``made_there * 2`` records one, with an
        ``AccumulateGrad`` node for ``made_there``, whose ``version`` is ``None`` (an inference
        tensor has no version counter):

        >>> with torch.inference_mode():
        ...     made_there = torch.ones(2, requires_grad=True)
        >>> made_there.requires_grad, made_there.exp().grad_fn is None
        (True, True)
        >>> [(node.name, node.version) for node in walk_graph(made_there * 2)]
        [('MulBackward0', None), ('AccumulateGrad', None)]
        >>> [(node.name, node.kind) for node in walk_graph(made_there)]
        [('AccumulateGrad', 'leaf')]
        >>> made_there._version
        Traceback (most recent call last):
          ...
        RuntimeError: Inference tensors do not track version counter.
    """
    return _walk(_graph_tensor(walk_graph, tensor)).nodes


def _labels(
    caller: Callable[..., Any], walk: _Walk, names: Mapping[str, torch.Tensor] | None
) -> dict[int, str]:
    """Map node ids to the names the caller gave the tensors they belong to."""
    if names is None:
        return {}
    check_type(caller, "names", names, Mapping, expected="a mapping {name: tensor} or None")
    found: dict[int, list[str]] = {}
    for name, tensor in names.items():
        check_type(caller, "a key of names", name, str)
        check_type(caller, f"names[{name!r}]", tensor, torch.Tensor)
        grad_fn = tensor.grad_fn
        if grad_fn is not None:
            node_id = walk.index.get(id(grad_fn))
        else:
            node_id = next(
                (n.id for n in walk.nodes if n.kind == "leaf" and n.variable is tensor), None
            )
        if node_id is not None:
            found.setdefault(node_id, []).append(name)
    return {node_id: ", ".join(labels) for node_id, labels in found.items()}


def _label(node: GraphNode, labels: Mapping[int, str], details: bool = False) -> str:
    """A node's one-line description: its class, and its tensor's name and shape.

    With ``details``, a leaf also shows its version counter and a backward function the
    values it saved for backward (``None`` entries left out).
    """
    name = labels.get(node.id)
    if node.kind == "leaf":
        assert node.variable is not None
        shape = f"shape={tuple(node.variable.shape)}"
        if details:
            shape += f", version={node.version}"
        return f"{node.name}({name}, {shape})" if name else f"{node.name}({shape})"
    label = f"{node.name} ({name})" if name else node.name
    saved = [f"{key}={value}" for key, value in node.saved if value != "None"]
    if details and saved:
        label += " saved: " + ", ".join(saved)
    return label


def graph_text(
    tensor: torch.Tensor,
    names: Mapping[str, torch.Tensor] | None = None,
    *,
    details: bool = False,
) -> str:
    """Draw the autograd graph behind ``tensor`` as a text tree, root first.

    Each line is a node of :func:`walk_graph`; its children are the nodes
    ``backward()`` passes the gradient to next. A node that several ``next_functions``
    entries point to (``l1`` below, an input of both ``l2`` and ``l3``) is drawn in
    full once, marked ``[#id]``, and then only referred to as ``[#id, see above]``; a
    node that only one entry points to is drawn once and unmarked, however many paths
    reach it (``w1`` below). The output has no memory addresses: it is the same on every
    run.

    Args:
        tensor: a tensor with a ``grad_fn``, or a leaf that requires grad on its own
            account.
        names: optional ``{name: tensor}``: a leaf is labelled with its name and shape,
            a function node with the name of the tensor it produced.
        details: also label each leaf with its version counter and each backward
            function with the values it saved for backward.

    Returns:
        The tree, without a trailing newline; without ``details``, one node per line.

    Raises:
        TypeError: if ``tensor`` is not a tensor, ``names`` does not map ``str`` to
            tensors, or ``details`` is not a ``bool``.
        ValueError: if ``tensor`` has no ``grad_fn`` and does not require grad, or is
            a view without a ``grad_fn`` whose ``requires_grad`` is its base's (one taken
            under ``torch.no_grad()``, say).

    Examples:
        >>> import torch
        >>> from ptnotes.graph import graph_text
        >>> input = torch.ones(2, 2)
        >>> w1 = torch.tensor(2.0, requires_grad=True)
        >>> w2 = torch.tensor(3.0, requires_grad=True)
        >>> w3 = torch.tensor(4.0, requires_grad=True)
        >>> l1 = input * w1
        >>> l2 = l1 + w2
        >>> l3 = l1 * w3
        >>> l4 = l2 * l3
        >>> loss = l4.mean()
        >>> names = dict(w1=w1, w2=w2, w3=w3, l1=l1, l2=l2, l3=l3, l4=l4, loss=loss)
        >>> print(graph_text(loss, names))
        MeanBackward0 (loss)
        └── MulBackward0 (l4)
            ├── AddBackward0 (l2)
            │   ├── MulBackward0 (l1) [#3]
            │   │   └── AccumulateGrad(w1, shape=())
            │   └── AccumulateGrad(w2, shape=())
            └── MulBackward0 (l3)
                ├── MulBackward0 (l1) [#3, see above]
                └── AccumulateGrad(w3, shape=())

        ``input`` does not require grad, so no node stands for it. With ``details``, the
        tree also shows what each node saved for backward and each leaf's version counter:

        >>> y = (w1 * input).sum()
        >>> print(graph_text(y, dict(w1=w1), details=True))
        SumBackward0 saved: self_sym_sizes=(2, 2)
        └── MulBackward0 saved: other=tensor(shape=(2, 2), dtype=torch.float32)
            └── AccumulateGrad(w1, shape=(), version=0)
    """
    walk = _walk(_graph_tensor(graph_text, tensor))
    labels = _labels(graph_text, walk, names)
    details = check_bool(graph_text, "details", details)
    reached = [0] * len(walk.nodes)
    for node in walk.nodes:
        for child in node.children:
            reached[child] += 1
    lines: list[str] = []
    drawn: set[int] = set()
    stack: list[tuple[int, str, str]] = [(0, "", "")]  # node id, line prefix, child prefix
    while stack:
        node_id, prefix, child_prefix = stack.pop()
        node = walk.nodes[node_id]
        line = prefix + _label(node, labels, details)
        if node_id in drawn:
            lines.append(f"{line} [#{node_id}, see above]")
            continue
        drawn.add(node_id)
        lines.append(f"{line} [#{node_id}]" if reached[node_id] > 1 else line)
        last = len(node.children) - 1
        for position in range(last, -1, -1):
            tail = position == last
            stack.append(
                (
                    node.children[position],
                    child_prefix + ("└── " if tail else "├── "),
                    child_prefix + ("    " if tail else "│   "),
                )
            )
    return "\n".join(lines)


def _dot_string(text: str) -> str:
    """``text`` as a double-quoted DOT string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def graph_dot(
    tensor: torch.Tensor,
    names: Mapping[str, torch.Tensor] | None = None,
    *,
    details: bool = False,
) -> str:
    """Describe the autograd graph behind ``tensor`` in Graphviz's DOT language.

    Only the text is produced (no Graphviz needed): render it with
    ``dot -Tsvg graph.dot -o graph.svg``, or paste it in any online Graphviz viewer.
    Node ``n<id>`` is node ``id`` of :func:`walk_graph`: boxes for backward functions,
    ellipses for leaves. An edge ``a -> b`` means that ``b`` is in ``a``'s
    ``next_functions``, the direction in which ``backward()`` travels; every node is
    emitted once, with one edge per ``next_functions`` entry that points to it.

    Args:
        tensor: a tensor with a ``grad_fn``, or a leaf that requires grad on its own
            account.
        names: optional ``{name: tensor}`` labels, as in :func:`graph_text`.
        details: label saved values and version counters, as in :func:`graph_text`.

    Returns:
        The DOT source of a ``digraph``, ending with a newline.

    Raises:
        TypeError: if ``tensor`` is not a tensor, ``names`` does not map ``str`` to
            tensors, or ``details`` is not a ``bool``.
        ValueError: if ``tensor`` has no ``grad_fn`` and does not require grad, or is
            a view without a ``grad_fn`` whose ``requires_grad`` is its base's (one taken
            under ``torch.no_grad()``, say).

    Examples:
        >>> import torch
        >>> from ptnotes.graph import graph_dot
        >>> w = torch.tensor(2.0, requires_grad=True)
        >>> print(graph_dot((w * 3).sum(), names={"w": w}), end="")
        digraph autograd {
            node [shape=box, fontname="monospace"];
            n0 [label="SumBackward0"];
            n1 [label="MulBackward0"];
            n2 [label="AccumulateGrad(w, shape=())", shape=ellipse];
            n0 -> n1;
            n1 -> n2;
        }
        >>> graph_dot(w * 3, details=1)
        Traceback (most recent call last):
          ...
        TypeError: graph_dot() expects details to be a bool (True or False), got int 1
    """
    walk = _walk(_graph_tensor(graph_dot, tensor))
    labels = _labels(graph_dot, walk, names)
    details = check_bool(graph_dot, "details", details)
    lines = ["digraph autograd {", '    node [shape=box, fontname="monospace"];']
    for node in walk.nodes:
        shape = ", shape=ellipse" if node.kind == "leaf" else ""
        label = _dot_string(_label(node, labels, details))
        lines.append(f"    n{node.id} [label={label}{shape}];")
    for node in walk.nodes:
        lines.extend(f"    n{node.id} -> n{child};" for child in node.children)
    lines.append("}")
    return "\n".join(lines) + "\n"
