"""
What does the autograd graph of ``loss = mean((x*w1 + w2) * (x*w1*w3))`` look like?
=====================================================================================

Each tensor this script computes from its three weights carries a ``grad_fn``: the backward
node that produced it. Each node links to the nodes of its inputs through
``next_functions``, so following those links from ``loss.grad_fn`` walks the whole graph.
This script prints the graph of the notes' four-step example with
:func:`ptnotes.graph.graph_text`, exports it with :func:`ptnotes.graph.graph_dot`, lets
Graphviz draw it, and checks the gradient ``backward()`` delivers to every node.
"""

# %%
# The computation
# ---------------
# Three scalar weights require grad; ``input`` does not, so no node will stand for it.
# ``retain_grad()`` asks autograd to store the gradients of the intermediate results in their
# ``.grad``: we want to print them after the backward pass.
import io
import shutil
import subprocess

import matplotlib.pyplot as plt
import torch

from ptnotes.graph import graph_dot, graph_text

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
# :func:`~ptnotes.graph.graph_text` returns the graph as a text tree, root first, which this cell
# prints. ``l1`` feeds both ``l2`` and ``l3``, so two paths reach its node: it is drawn once,
# marked ``[#3]``, and referred to the second time. A weight is a leaf: its ``grad_fn`` is
# ``None``, and the graph reaches it through an ``AccumulateGrad`` node.
print(graph_text(loss, names))
w1_node = l1.grad_fn.next_functions[1][0]
print(f"w1.grad_fn: {w1.grad_fn}; w1's node: {type(w1_node).__name__}")
print("that node's variable is w1:", w1_node.variable is w1)

# %%
# The same graph in Graphviz's DOT language
# -----------------------------------------
# :func:`~ptnotes.graph.graph_dot` writes the text only; paste it into any Graphviz viewer,
# or run ``dot -Tsvg graph.dot -o graph.svg``. Node ``n<id>`` is node ``id`` of
# :func:`~ptnotes.graph.walk_graph`. Graphviz draws this very text in the next cell.
dot = graph_dot(loss, names)
print(dot)

# %%
# The picture, drawn by Graphviz
# ------------------------------
# Graphviz's ``dot`` command lays out exactly this text: it puts every node below the nodes
# that use it, orders each row to avoid crossings, and renders a PNG that matplotlib only
# displays. Boxes are backward functions, ellipses the ``AccumulateGrad`` nodes that write a
# leaf's ``.grad``. Arrows go the way ``backward()`` travels, from the loss to the weights;
# two of them end at ``l1``'s node, one per path.
if shutil.which("dot") is None:
    raise SystemExit("drawing the graph needs Graphviz's dot command: apt-get install graphviz")
png = subprocess.run(["dot", "-Tpng"], input=dot.encode(), capture_output=True, check=True).stdout
image = plt.imread(io.BytesIO(png))
height, width = image.shape[:2]
fig, ax = plt.subplots(figsize=(width / 96, height / 96 + 0.4), dpi=96, layout="constrained")
ax.imshow(image)
ax.set_axis_off()
ax.set_title("Autograd graph of loss = mean((x·w1 + w2)·(x·w1·w3)), drawn by Graphviz")
plt.show()

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
# Take-away
# ---------
# The graph is built during the forward pass and is nothing but backward nodes linked by
# ``next_functions``: the ``grad_fn`` of each computed tensor, and an ``AccumulateGrad`` node for
# each weight; ``backward()`` walks it from the root and, where two paths meet
# (``l1``), adds up what they deliver: :math:`7 = 2 + 1.25 \cdot 4`, hence
# :math:`\partial loss/\partial w_1 = 4 \cdot 7 = 28`. Leaves that need no gradient
# (``input``) never appear in it.
