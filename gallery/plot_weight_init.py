"""
Why does weight initialisation matter in a deep network?
========================================================

With zero biases, each ``Linear`` multiplies the spread of its input by a factor set by the
spread of its weights. Over ten layers a factor below one makes the signal vanish, and a factor
above one drives a ``tanh`` into saturation. A constant initialisation (of every layer, the head
included) has a different defect: every hidden unit computes the same thing and receives the
same gradient, so training with SGD keeps them equal. This script shows both effects in a
10-layer ``tanh`` MLP.
"""

# %%
# Four initialisations of the same network
# ----------------------------------------
# Ten ``Linear(256, 256)`` + ``Tanh`` layers. PyTorch's default draws weights from
# :math:`U(\pm 1/\sqrt{256})`; :func:`ptnotes.init.init_weights` uses Xavier-uniform,
# :math:`U(\pm\sqrt{6/512})`, chosen to keep the variance; ``normal(0, 0.02)`` is the notes'
# recipe for convolutions, tried here on ``Linear``; the last sets every weight to 0.02.
import matplotlib.pyplot as plt
import torch
from torch import nn

from ptnotes import to_numpy
from ptnotes.init import init_weights, string_dispatch_mismatches
from ptnotes.training import train_step

depth, width = 10, 256


def mlp() -> nn.Sequential:
    """``depth`` blocks of ``Linear(width, width)`` + ``Tanh``, PyTorch's default init."""
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh()]
    return nn.Sequential(*layers)


def normal_002(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
        nn.init.zeros_(module.bias)


def constant_002(module: nn.Module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.constant_(module.weight, 0.02)
        nn.init.zeros_(module.bias)


inits = {
    "PyTorch default": None,
    "init_weights (Xavier)": init_weights,
    "normal(0, 0.02)": normal_002,
    "constant 0.02": constant_002,
}
models: dict[str, nn.Sequential] = {}
for name, init in inits.items():
    torch.manual_seed(0)
    models[name] = mlp() if init is None else mlp().apply(init)

# %%
# The notes apply ``normal(0, 0.02)`` by matching the class *name* against ``"Conv"``, so on
# this network their recipe would change nothing: :func:`~ptnotes.init.string_dispatch_mismatches`
# lists every ``Linear`` as a module the name rule skips. Above, it is applied by type.
for module_name, classname, reason in string_dispatch_mismatches(models["PyTorch default"])[:2]:
    print(f"{module_name}: {classname}: {reason}")

# %%
# Activations, layer by layer
# ---------------------------
# Feed 512 standard-normal inputs and keep the output of every ``Tanh``.
torch.manual_seed(0)
x = torch.randn(512, width)
activations: dict[str, list[torch.Tensor]] = {}
with torch.no_grad():
    for name, model in models.items():
        h, outputs = x, []
        for layer in model:
            h = layer(h)
            if isinstance(layer, nn.Tanh):
                outputs.append(h)
        activations[name] = outputs
for name, outputs in activations.items():
    stds = ", ".join(f"{a.std().item():.2g}" for a in outputs[::3])
    print(f"{name:<22} std of layers 1, 4, 7, 10: {stds}")

# %%
# The spread through depth
# ------------------------
# With the default, each layer shrinks the spread by about :math:`1/\sqrt{3}` until only the
# spread of the random biases is left; with ``normal(0, 0.02)`` (and zero biases) it shrinks
# by about 3 per layer, to almost nothing. Xavier shrinks it least (``tanh`` compresses a
# bit); the constant init saturates.
fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
layers = range(1, depth + 1)
for name, outputs in activations.items():
    ax.plot(layers, [a.std().item() for a in outputs], "o-", label=name)
ax.set_yscale("log")
ax.set_xticks(list(layers))
ax.set_xlabel("layer (output of its tanh)")
ax.set_ylabel("standard deviation of the activations")
ax.set_title(f"Activation spread through {depth} tanh layers of width {width}")
ax.legend()
plt.show()

# %%
# Weights and activations as histograms
# -------------------------------------
# Top: the weights of layer 5. Bottom: the activations of layer 10, on a shared axis from -1 to 1
# (the range of ``tanh``). Xavier spreads them widest without saturating: the default leaves a
# narrow peak, ``normal(0, 0.02)`` a spike at zero, and the constant initialisation a saturated
# ``tanh``: every activation is close to -1 or 1, the same in every unit of a layer for a given
# input.
fig, axes = plt.subplots(2, len(models), figsize=(11.0, 4.8), layout="constrained")
for column, (name, model) in enumerate(models.items()):
    weights = to_numpy(model[2 * 4].weight).ravel()
    axes[0, column].hist(weights, bins=60, range=(-0.12, 0.12), color="C0")
    axes[0, column].set_title(name, fontsize=10)
    axes[0, column].set_xlabel("weight value (layer 5)")
    values = to_numpy(activations[name][-1]).ravel()
    axes[1, column].hist(values, bins=80, range=(-1.0, 1.0), color="C1")
    axes[1, column].set_xlabel("activation value (layer 10)")
axes[0, 0].set_ylabel("count")
axes[1, 0].set_ylabel("count")
fig.suptitle("Weight and activation histograms under four initialisations")
plt.show()

# %%
# Symmetry does not break under SGD
# ---------------------------------
# Train the constant-initialised network and the default one for 20 steps on a small
# regression task (:func:`ptnotes.training.train_step`), then count the *distinct* rows of
# each weight matrix: a row is one hidden unit's incoming weights.
torch.manual_seed(0)
targets = torch.randn(512, 1)
for name in ("PyTorch default", "constant 0.02"):
    torch.manual_seed(0)
    head = nn.Linear(width, 1)
    if inits[name] is not None:
        head.apply(inits[name])
    model = nn.Sequential(models[name], head)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    losses = [train_step(model, (x, targets), nn.MSELoss(), optimizer) for _ in range(20)]
    distinct = [torch.unique(layer.weight, dim=0).shape[0] for layer in models[name][::2]]
    print(
        f"{name:<16} loss {losses[0]:.3f} -> {losses[-1]:.3f}; distinct units per layer: {distinct}"
    )

# %%
# Every unit of a layer receives the same input and, with equal weights, produces the same
# output; with the head's weights equal too, backward then hands each the same gradient, so
# the SGD update keeps them equal. After 20 steps each 256-unit layer still has one distinct
# unit.

# %%
# Take-away
# ---------
# Initialisation has two jobs: keep the signal's spread from collapsing through depth (here
# Xavier, which ``init_weights`` gives every ``Linear``, shrinks it least: about 3 times over the
# ten layers, against about 10 times for PyTorch's default, as measured above), and make units
# *different* (random, never constant). ``normal(0, 0.02)``
# does not suit this deep plain MLP.
