"""
How much memory do ``ReLU(inplace=True)``, ``no_grad`` and ``inference_mode`` save?
====================================================================================

An in-place ReLU writes its result over its input instead of allocating a new tensor;
:class:`torch.no_grad` and :class:`torch.inference_mode` stop autograd from recording the
graph, so nothing is kept for a backward pass. This script measures what each of them
changes in the forward pass of a stack of ``Linear`` + ``ReLU`` layers on the CPU, with
numbers from the PyTorch profiler rather than from rules of thumb.
"""

# %%
# The model and what we measure
# -----------------------------
# Eight ``Linear(1024, 1024)`` + ``ReLU`` layers on a batch of 256: every activation is
# exactly 256 x 1024 float32 values, 1 MiB, so the results read as "how many activations".
# The memory is counted as on the :doc:`/bench` page, by ``ptnotes_dev.measure.allocations``:
# :class:`torch.profiler.profile` with ``profile_memory=True`` records every allocation and
# free of the CPU allocator, and their running sum gives two numbers per forward pass: the
# **peak** of bytes alive at once, and the bytes still **held** when the forward pass returns
# (the output plus whatever autograd keeps).
import contextlib
from collections.abc import Callable

import matplotlib.pyplot as plt
import numpy as np
import torch
from ptnotes_dev.measure import Allocation, allocations, measure_alternating
from torch import nn

torch.manual_seed(0)
MiB = 2**20
depth, width, batch = 8, 1024, 256
GRAD_MODES: dict[str, Callable[[], contextlib.AbstractContextManager[object]]] = {
    "grad enabled": torch.enable_grad,
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
}


def relu_mlp(inplace: bool) -> nn.Sequential:
    """``depth`` blocks of ``Linear(width, width)`` followed by ``ReLU(inplace=inplace)``."""
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU(inplace=inplace)]
    return nn.Sequential(*layers)


def forward_memory(model: nn.Module, x: torch.Tensor, mode: str) -> Callable[[], Allocation]:
    """A measurement: the allocations of ``model(x)`` under a grad mode, output kept."""

    def forward() -> torch.Tensor:
        with GRAD_MODES[mode]():
            return model(x)

    return lambda: allocations(forward)


# %%
# A cross-check: what autograd saves for backward
# -----------------------------------------------
# ``torch.autograd.graph.saved_tensors_hooks`` sees every tensor a backward node saves.
# Counting each storage once, and leaving out the parameters (they exist anyway), gives the
# activation memory the graph pins until ``backward()``.
def saved_for_backward(model: nn.Module, x: torch.Tensor) -> int:
    """Bytes of distinct non-parameter storages that the graph of ``model(x)`` saves."""
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    storages: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in parameters:
            storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        output = model(x)
    del output
    return sum(storages.values())


# %%
# Measure the six combinations
# ----------------------------
# The same weights serve both ReLU variants (``nn.ReLU`` has no parameters), and the input
# is created before profiling starts, so it is not counted. As on the numbers page, the six
# measurements alternate after a warm-up round (``ptnotes_dev.measure.measure_alternating``);
# the counts are deterministic, so one measured round is enough.
x = torch.randn(batch, width)
plain = relu_mlp(inplace=False)
inplace = relu_mlp(inplace=True)
inplace.load_state_dict(plain.state_dict())
relus = {"ReLU()": plain, "ReLU(inplace=True)": inplace}
measured = measure_alternating(
    {
        f"{relu_name} | {mode}": forward_memory(model, x, mode)
        for relu_name, model in relus.items()
        for mode in GRAD_MODES
    },
    repeats=1,
    warmup=1,
)
results = {tuple(name.split(" | ")): samples[0] for name, samples in measured.items()}
for (relu_name, mode), counted in results.items():
    print(
        f"{relu_name:<19} {mode:<15} peak {counted.peak / MiB:4.1f} MiB, "
        f"held after forward {counted.end / MiB:4.1f} MiB"
    )
for relu_name, model in relus.items():
    print(f"{relu_name:<19} saved for backward: {saved_for_backward(model, x) / MiB:.1f} MiB")
with torch.no_grad():
    same = torch.equal(plain(x), inplace(x))
print("same output with and without inplace:", same)

# %%
# The picture
# -----------
# One panel per number, one group of bars per grad mode. With grad enabled the in-place ReLU
# lowers the peak by one activation; what autograd holds after the forward pass does not
# change with it.
modes = list(GRAD_MODES)
fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.8), layout="constrained", sharey=True)
positions = np.arange(len(modes))
panels = {"peak alive during forward": "peak", "held after forward": "end"}
for ax, (title, field) in zip(axes, panels.items(), strict=True):
    for offset, relu_name in ((-0.2, "ReLU()"), (0.2, "ReLU(inplace=True)")):
        values = [getattr(results[relu_name, mode], field) / MiB for mode in modes]
        bars = ax.bar(positions + offset, values, width=0.4, label=relu_name)
        ax.bar_label(bars, fmt="%.0f", fontsize=8)
    ax.set_xticks(positions, modes, rotation=15)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("grad mode")
axes[0].set_ylabel("MiB (1 MiB = one activation)")
axes[0].set_ylim(0, 1.3 * (depth + 1))
axes[1].legend(fontsize=8, loc="upper right")
fig.suptitle(f"Forward pass of {depth} x (Linear({width}, {width}) + ReLU), batch {batch}, CPU")
plt.show()

# %%
# Reading the numbers
# -------------------
# * **In-place ReLU** saves one allocation per activation: the ``Linear`` output is reused instead
#   of copied. It does not shrink what autograd keeps: ``ReLU`` saves its *output* for backward, and
#   that output is also the next ``Linear``'s saved input, so the same activations stay alive either
#   way. The hooks count 9 MiB in both cases: the eight ReLU outputs that "held" shows, plus the
#   input ``x``, which was allocated before profiling. With grad enabled the peak drops by one
#   activation, the transient copy (9 MiB to 8 MiB); under ``no_grad`` it is two activations either
#   way, a layer's input and its output.
# * **no_grad** is what frees memory: no graph is recorded, each activation dies as soon as
#   the next layer has read it, and only the output is held at the end.
# * **inference_mode** counts exactly what ``no_grad`` does here: it saves no bytes more.

# %%
# Take-away
# ---------
# In this MLP an in-place ReLU does not reduce the activations that autograd saves for backward
# (9 MiB either way); it only avoids a temporary copy per layer. To cut the memory of a forward
# pass that needs no backward, turn recording off (``no_grad`` or ``inference_mode``): here only
# the 1 MiB output is held.
