"""
Why does ``.data`` give wrong gradients without an error?
==========================================================

``tensor.data`` and ``tensor.detach()`` both return a tensor that shares memory with the
original and is cut off from the graph. The difference shows when you modify that tensor in
place *after* autograd has saved the original for the backward pass: ``.detach()`` shares the
original's version counter, so autograd notices and raises; ``.data`` does not, so backward
silently uses the modified values.
"""

# %%
# The setup: a sigmoid saves its *output* for backward
# -----------------------------------------------------
# The derivative of :math:`\sigma(x)` is :math:`\sigma(x)(1-\sigma(x))`, computed from the
# saved output. Zeroing that output in place therefore changes the gradient.
import matplotlib.pyplot as plt
import torch

from ptnotes import to_numpy

x = torch.linspace(-6.0, 6.0, 121, requires_grad=True)
true_grad = torch.sigmoid(x) * (1 - torch.sigmoid(x))

# %%
# Through ``.data``: no error, wrong numbers
# ------------------------------------------
out = x.sigmoid()
out.data.zero_()  # autograd is not told about this write
out.sum().backward()
grad_via_data = x.grad.clone()
print("largest gradient through .data:", grad_via_data.abs().max().item())

# %%
# Through ``.detach()``: the same write is caught
# -----------------------------------------------
x.grad = None
out = x.sigmoid()
out.detach().zero_()  # shares the version counter: autograd sees the write
try:
    out.sum().backward()
except RuntimeError as error:
    print("RuntimeError:", str(error).split(";")[0])

# %%
# The picture
# -----------
# The correct gradient is the bell curve; ``.data`` hands the optimiser a flat zero, with no
# warning. With ``.detach()`` there is no curve to plot: ``backward()`` raises instead.
fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
ax.plot(to_numpy(x), to_numpy(true_grad), label=r"true gradient $\sigma'(x)$", linewidth=2)
ax.plot(to_numpy(x), to_numpy(grad_via_data), "--", label="gradient after .data.zero_()")
ax.set_xlabel("x")
ax.set_ylabel(r"$\partial\, \mathrm{sum}(\sigma(x)) / \partial x$")
ax.set_title(".data: a silently wrong gradient (.detach() raises instead)")
ax.legend()
plt.show()

# %%
# Take-away
# ---------
# Prefer ``.detach()``: when an in-place write would corrupt a saved tensor, it turns a wrong
# result into an error. The error comes from ``backward()``, not from the write, and it names
# the overwritten tensor, output 0 of the sigmoid. ``.data`` remains only for code that
# deliberately edits values behind autograd's back (and should say so).
