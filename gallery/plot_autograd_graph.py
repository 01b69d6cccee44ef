"""
What does the autograd graph of ``loss = mean((x*w1 + w2) * (x*w1*w3))`` look like?
=====================================================================================

Every tensor computed from a tensor that requires grad carries a ``grad_fn``: the backward
node that produced it. Each node links to the nodes of its inputs through
``next_functions``, so following those links from ``loss.grad_fn`` walks the whole graph.
This script walks the notes' four-step example with :func:`ptnotes.graph.walk_graph`,
prints it, draws it, and writes on every node the gradient ``backward()`` delivered there.
"""

# %%
# The computation
# ---------------
# Three scalar weights require grad; ``input`` does not, so no node will stand for it.
# ``retain_grad()`` asks autograd to keep the gradients of the intermediate results, which it
# normally frees: we want to write them on the drawing.
import re

import matplotlib.pyplot as plt
import torch

from ptnotes.graph import graph_dot, graph_text, walk_graph

input = torch.ones(2, 2)
w1 = torch.tensor(2.0, requires_grad=True)
w2 = torch.tensor(3.0, requires_grad=True)
w3 = torch.tensor(4.0, requires_grad=True)
l1 = input * w1
l2 = l1 + w2
l3 = l1 * w3
l4 = l2 * l3
loss = l4.mean()
names = {"w1": w1, "w2": w2, "w3": w3, "l1": l1, "l2": l2, "l3": l3, "l4": l4, "loss": loss}
for tensor in (l1, l2, l3, l4, loss):
    tensor.retain_grad()

# %%
# The graph as text
# -----------------
# :func:`~ptnotes.graph.graph_text` prints the graph as a tree, root first. ``l1`` feeds both
# ``l2`` and ``l3``, so two paths reach its node: it is drawn once, marked ``[#3]``, and
# referred to the second time.
print(graph_text(loss, names))

# %%
# The same graph in Graphviz's DOT language
# -----------------------------------------
# :func:`~ptnotes.graph.graph_dot` writes the text only; paste it into any Graphviz viewer,
# or run ``dot -Tsvg graph.dot -o graph.svg``. Node ``n<id>`` is node ``id`` of
# :func:`~ptnotes.graph.walk_graph`, which the drawing below uses to find each node's label.
dot = graph_dot(loss, names)
print(dot)

# %%
# Backward, and the gradient each node received
# ---------------------------------------------
# ``loss.backward()`` starts with :math:`\partial loss / \partial loss = 1` and walks the same
# arrows. ``mean`` over four entries hands 0.25 to every entry of ``l4``; ``l1`` gets the *sum*
# of what its two users send back.
loss.backward()
for name, tensor in names.items():
    print(f"d loss / d {name:<4} = {tensor.grad.flatten().tolist()}")
via_l2 = l2.grad[0, 0].item()  # l2 = l1 + w2: the gradient passes through unchanged
via_l3 = (l3.grad * w3)[0, 0].item()  # l3 = l1 * w3: scaled by w3
print(f"d loss / d l1 = {via_l2} (through l2) + {via_l3} (through l3) = {l1.grad[0, 0].item()}")

# %%
# Laying the nodes out by depth
# -----------------------------
# :func:`~ptnotes.graph.walk_graph` lists the nodes with the ids of their children. A node's
# row is its longest distance from the root (so ``l1`` sits below both of its users), and the
# nodes of a row are ordered by the mean position of their parents, which avoids crossings.
nodes = walk_graph(loss)
labels = {int(i): label for i, label in re.findall(r'n(\d+) \[label="([^"]*)"', dot)}
depth = {0: 0}
changed = True  # relax until stable: a node's depth is 1 + the largest depth of its parents
while changed:
    changed = False
    for node in nodes:
        for child in node.children:
            if depth.get(child, -1) < depth[node.id] + 1:
                depth[child] = depth[node.id] + 1
                changed = True
rows: dict[int, list[int]] = {}
for node in nodes:
    rows.setdefault(depth[node.id], []).append(node.id)
parents: dict[int, list[int]] = {node.id: [] for node in nodes}
for node in nodes:
    for child in node.children:
        parents[child].append(node.id)
x_of: dict[int, float] = {}
for row in sorted(rows):
    ids = rows[row]
    if row > 0:
        ids.sort(key=lambda i: (sum(x_of[p] for p in parents[i]) / len(parents[i]), i))
    for position, node_id in enumerate(ids):
        x_of[node_id] = position - (len(ids) - 1) / 2


def gradient_text(node_id: int) -> str:
    """The gradient delivered to a node: its leaf's ``.grad``, or the grad of its output."""
    node = nodes[node_id]
    if node.kind == "leaf":
        tensor = node.variable
    else:
        name = re.search(r"\((\w+)\)", labels[node_id]).group(1)
        tensor = names[name]
    values = tensor.grad.flatten()
    value = f"{values[0].item():g}"
    if values.numel() > 1 and bool((values == values[0]).all()):
        return f"grad = {value} (each of {values.numel()})"
    return f"grad = {value}" if values.numel() == 1 else f"grad = {values.tolist()}"


# %%
# The picture
# -----------
# Boxes are backward functions, ellipses the ``AccumulateGrad`` nodes that write a leaf's
# ``.grad``. Arrows go the way ``backward()`` travels, from the loss to the weights, as in
# the DOT text; the red label under each node is the gradient it received.
fig, ax = plt.subplots(figsize=(8.0, 6.4), layout="constrained")
for node in nodes:
    for child in node.children:
        ax.annotate(
            "",
            xy=(x_of[child], -depth[child] + 0.22),
            xytext=(x_of[node.id], -depth[node.id] - 0.46),
            arrowprops={"arrowstyle": "-|>", "color": "0.35", "shrinkA": 2, "shrinkB": 2},
        )
for node in nodes:
    leaf = node.kind == "leaf"
    name, _, rest = labels[node.id].partition("(")
    text = f"{name}\n({rest}" if leaf else labels[node.id].replace(" (", "\n(")
    ax.text(
        x_of[node.id],
        -depth[node.id],
        text,
        ha="center",
        va="center",
        family="monospace",
        fontsize=8.5,
        bbox={
            "boxstyle": "ellipse,pad=0.3" if leaf else "round,pad=0.4",
            "facecolor": "#fde8c8" if leaf else "#dbe9f6",
            "edgecolor": "0.3",
        },
    )
    ax.text(
        x_of[node.id],
        -depth[node.id] - 0.27,
        gradient_text(node.id),
        ha="center",
        va="top",
        fontsize=8.5,
        color="#b03030",
        bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none"},
    )
ax.set_xlim(min(x_of.values()) - 0.9, max(x_of.values()) + 0.9)
ax.set_ylim(-max(depth.values()) - 0.7, 0.5)
ax.set_yticks([-d for d in sorted(rows)], [str(d) for d in sorted(rows)])
ax.set_xticks([])
ax.set_ylabel("depth (longest path from loss.grad_fn)")
ax.set_xlabel("nodes of a row, ordered by their parents' positions")
ax.set_title("Autograd graph of loss = mean((x·w1 + w2)·(x·w1·w3)), with gradients")
for side in ("top", "right", "bottom"):
    ax.spines[side].set_visible(False)
plt.show()

# %%
# Take-away
# ---------
# The graph is built during the forward pass and is nothing but ``grad_fn`` objects linked by
# ``next_functions``; ``backward()`` walks it from the root and, where two paths meet
# (``l1``), adds up what they deliver: :math:`7 = 2 + 1.25 \cdot 4`, hence
# :math:`\partial loss/\partial w_1 = 4 \cdot 7 = 28`. Leaves that need no gradient
# (``input``) never appear in it.
