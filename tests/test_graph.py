"""ptnotes.graph: walking, printing and exporting the autograd graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from ptnotes.graph import GraphNode, graph_dot, graph_text, walk_graph

NOTES_TREE = """\
MeanBackward0 (loss)
└── MulBackward0 (l4)
    ├── AddBackward0 (l2)
    │   ├── MulBackward0 (l1) [#3]
    │   │   └── AccumulateGrad(w1, shape=())
    │   └── AccumulateGrad(w2, shape=())
    └── MulBackward0 (l3)
        ├── MulBackward0 (l1) [#3, see above]
        └── AccumulateGrad(w3, shape=())"""

NOTES_TREE_UNNAMED = """\
MeanBackward0
└── MulBackward0
    ├── AddBackward0
    │   ├── MulBackward0 [#3]
    │   │   └── AccumulateGrad(shape=())
    │   └── AccumulateGrad(shape=())
    └── MulBackward0
        ├── MulBackward0 [#3, see above]
        └── AccumulateGrad(shape=())"""


def notes_example() -> dict[str, torch.Tensor]:
    """The notes' example: loss = mean((input*w1 + w2) * (input*w1*w3))."""
    input = torch.ones(2, 2)
    w1 = torch.tensor(2.0, requires_grad=True)
    w2 = torch.tensor(3.0, requires_grad=True)
    w3 = torch.tensor(4.0, requires_grad=True)
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    loss = l4.mean()
    return dict(w1=w1, w2=w2, w3=w3, l1=l1, l2=l2, l3=l3, l4=l4, loss=loss)


@pytest.fixture
def notes() -> dict[str, torch.Tensor]:
    return notes_example()


# -- walk_graph -------------------------------------------------------------------------


def test_walk_visits_nodes_depth_first_root_first(notes: dict[str, torch.Tensor]) -> None:
    names = [node.name for node in walk_graph(notes["loss"])]
    assert names == [
        "MeanBackward0",
        "MulBackward0",
        "AddBackward0",
        "MulBackward0",
        "AccumulateGrad",
        "AccumulateGrad",
        "MulBackward0",
        "AccumulateGrad",
    ]


def test_walk_lists_a_shared_node_once_with_edges_from_both_parents(
    notes: dict[str, torch.Tensor],
) -> None:
    nodes = walk_graph(notes["loss"])
    assert [node.id for node in nodes] == list(range(8))
    assert nodes[2].children == (3, 5)  # l2 = l1 + w2
    assert nodes[6].children == (3, 7)  # l3 = l1 * w3: the same l1 node


def test_walk_reports_each_leaf_variable(notes: dict[str, torch.Tensor]) -> None:
    leaves = [node for node in walk_graph(notes["loss"]) if node.kind == "leaf"]
    assert [
        leaf.variable is notes[name] for leaf, name in zip(leaves, ["w1", "w2", "w3"], strict=True)
    ] == [True] * 3


def test_walk_reports_leaf_version_counter() -> None:
    w = torch.tensor(1.0, requires_grad=True)
    with torch.no_grad():
        w.add_(1.0)
        w.mul_(2.0)
    assert walk_graph(w * 3)[1].version == 2


def test_walk_reports_saved_tensors_and_their_release() -> None:
    x = torch.ones(3, requires_grad=True)
    y = x.exp().sum()
    assert walk_graph(y)[1].saved == (("result", "tensor(shape=(3,), dtype=torch.float32)"),)
    y.backward()
    assert walk_graph(y)[1].saved == (("result", "<freed>"),)


def test_walk_of_leaf_is_its_accumulate_grad_node() -> None:
    w = torch.zeros(2, requires_grad=True)
    (node,) = walk_graph(w)
    assert (node.name, node.kind, node.variable is w) == ("AccumulateGrad", "leaf", True)


def test_walk_skips_inputs_that_need_no_gradient() -> None:
    w = torch.tensor(1.0, requires_grad=True)
    nodes = walk_graph(torch.ones(2) * w)
    assert nodes[0].children == (1,)
    assert len(nodes) == 2


def test_walk_handles_graphs_deeper_than_the_recursion_limit() -> None:
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(1200):
        y = y + 1
    assert len(walk_graph(y)) == 1201
    assert graph_text(y).count("\n") == 1200


def test_graph_node_is_comparable_and_hashable() -> None:
    node = GraphNode(0, "MulBackward0", "function", (1,))
    assert node == GraphNode(0, "MulBackward0", "function", (1,))
    assert len({node, node}) == 1


# -- graph_text -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("named", "expected"),
    [(True, NOTES_TREE), (False, NOTES_TREE_UNNAMED)],
    ids=["named", "unnamed"],
)
def test_text_tree_of_the_notes_example(
    notes: dict[str, torch.Tensor], named: bool, expected: str
) -> None:
    assert graph_text(notes["loss"], notes if named else None) == expected


def test_text_tree_is_the_same_on_every_run() -> None:
    first, second = notes_example(), notes_example()
    assert graph_text(first["loss"], first) == graph_text(second["loss"], second)
    assert "0x" not in graph_text(first["loss"])


def test_text_tree_marks_an_input_used_twice() -> None:
    x = torch.ones(2, requires_grad=True)
    assert graph_text(x * x, {"x": x}) == (
        "MulBackward0\n"
        "├── AccumulateGrad(x, shape=(2,)) [#1]\n"
        "└── AccumulateGrad(x, shape=(2,)) [#1, see above]"
    )


def test_text_tree_joins_names_of_one_node() -> None:
    w = torch.ones(1, requires_grad=True)
    assert graph_text(w, {"a": w, "b": w}) == "AccumulateGrad(a, b, shape=(1,))"


def test_text_tree_ignores_names_outside_the_graph(notes: dict[str, torch.Tensor]) -> None:
    other = torch.zeros(1, requires_grad=True)
    assert graph_text(notes["l1"], {"other": other}) == "MulBackward0\n└── AccumulateGrad(shape=())"


# -- graph_dot --------------------------------------------------------------------------


def test_dot_has_one_statement_per_node_and_per_edge(notes: dict[str, torch.Tensor]) -> None:
    dot = graph_dot(notes["loss"], notes)
    lines = dot.splitlines()
    assert lines[0] == "digraph autograd {"
    assert lines[-1] == "}"
    assert sum("[label=" in line for line in lines) == 8
    assert sum("->" in line for line in lines) == 8
    assert '    n3 [label="MulBackward0 (l1)"];' in lines
    assert "    n6 -> n3;" in lines


def test_dot_escapes_quotes_and_backslashes_in_names() -> None:
    w = torch.ones(1, requires_grad=True)
    assert 'label="AccumulateGrad(say \\"hi\\" \\\\o/, shape=(1,))"' in graph_dot(
        w, {'say "hi" \\o/': w}
    )


def test_dot_draws_leaves_as_ellipses(notes: dict[str, torch.Tensor]) -> None:
    shapes = [
        line.endswith("shape=ellipse];")
        for line in graph_dot(notes["loss"]).splitlines()
        if "[label=" in line
    ]
    assert shapes == [node.kind == "leaf" for node in walk_graph(notes["loss"])]


# -- bad inputs -------------------------------------------------------------------------

FUNCTIONS: list[Callable[..., Any]] = [walk_graph, graph_text, graph_dot]


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("bad", [[1.0], 2.0, None], ids=["list", "float", "none"])
def test_graph_functions_reject_non_tensor(function: Callable[..., Any], bad: Any) -> None:
    with pytest.raises(
        TypeError, match=rf"{function.__name__}\(\) expects tensor to be a torch.Tensor, got"
    ):
        function(bad)


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_graph_functions_reject_tensor_without_graph(function: Callable[..., Any]) -> None:
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = w * 2
    with pytest.raises(ValueError, match=r"tensor to be a tensor with an autograd graph"):
        function(y)


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_graph_functions_reject_a_no_grad_view_and_leave_it_as_it_was(
    function: Callable[..., Any],
) -> None:
    base = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.no_grad():
        view = base[:1]
    with pytest.raises(ValueError, match=r"a view whose requires_grad is its base's"):
        function(view)
    assert (view.requires_grad, view.grad_fn, view._version, base._version) == (True, None, 0, 0)
    view.requires_grad_()  # a flag of its own: now a leaf with an AccumulateGrad node
    assert [node.name for node in walk_graph(view)] == ["AccumulateGrad"]


@pytest.mark.parametrize("function", [graph_text, graph_dot], ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    ("names", "message"),
    [
        ([("w", None)], "names to be a mapping {name: tensor} or None, got list"),
        ({"w": [1.0]}, r"names\['w'\] to be a torch.Tensor, got list"),
        ({1: torch.ones(1)}, "a key of names to be a str, got int 1"),
    ],
    ids=["list", "value-not-tensor", "key-not-str"],
)
def test_graph_rendering_rejects_bad_names(
    function: Callable[..., Any], names: Any, message: str
) -> None:
    w = torch.ones(1, requires_grad=True)
    with pytest.raises(TypeError, match=message):
        function(w * 2, names)


def test_details_label_version_counters_of_leaves() -> None:
    w = torch.tensor(2.0, requires_grad=True)
    y = w * 3
    with torch.no_grad():
        w.add_(1.0)  # an in-place update bumps the leaf's version counter
    assert "AccumulateGrad(w, shape=(), version=1)" in graph_text(y, {"w": w}, details=True)


def test_details_label_saved_tensors_of_functions() -> None:
    w = torch.tensor(2.0, requires_grad=True)
    y = (w * torch.ones(3)).sum()
    text = graph_dot(y, {"w": w}, details=True)
    assert "MulBackward0 saved: other=tensor(shape=(3,), dtype=torch.float32)" in text


def test_without_details_no_saved_values_are_shown() -> None:
    w = torch.tensor(2.0, requires_grad=True)
    assert "saved" not in graph_text((w * torch.ones(3)).sum(), {"w": w})


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_graph_functions_take_an_inference_tensor_as_a_leaf(function: Callable[..., Any]) -> None:
    # outside inference mode, made_there * 2 records a node with an AccumulateGrad for
    # made_there, and doubled.sum().backward() writes its .grad: it is a leaf of a
    # graph, but it has no version counter (reading ._version raises)
    with torch.inference_mode():
        made_there = torch.ones(2, requires_grad=True)
    doubled = made_there * 2
    assert doubled.grad_fn.next_functions[0][0].variable is made_there
    function(doubled)
    function(made_there)
    doubled.sum().backward()
    assert made_there.grad.tolist() == [2.0, 2.0]


def test_an_inference_leaf_has_no_version() -> None:
    with torch.inference_mode():
        made_there = torch.ones(2, requires_grad=True)
    assert [(node.name, node.version) for node in walk_graph(made_there * 2)] == [
        ("MulBackward0", None),
        ("AccumulateGrad", None),
    ]
    assert [(node.kind, node.version) for node in walk_graph(made_there)] == [("leaf", None)]
    assert graph_text(made_there * 2, {"made_there": made_there}, details=True) == (
        "MulBackward0 saved: other=tensor(shape=(), dtype=torch.int64)\n"
        "└── AccumulateGrad(made_there, shape=(2,), version=None)"
    )


def test_a_custom_function_whose_ctx_holds_a_variable_is_a_function_node() -> None:
    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
            ctx.variable = x  # a tensor attribute named like AccumulateGrad's
            return x * 2

        @staticmethod
        def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
            return grad * 2

    x = torch.tensor(1.0, requires_grad=True)
    nodes = walk_graph(Keep.apply(x))
    assert [(node.name, node.kind, node.variable is None) for node in nodes] == [
        ("KeepBackward", "function", True),
        ("AccumulateGrad", "leaf", False),
    ]
    assert nodes[1].variable is x
