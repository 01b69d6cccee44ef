"""
Fine-tuning: freeze the backbone, or train everything with a smaller learning rate?
===================================================================================

Two common recipes adapt a pretrained network to a new task. Either freeze the backbone and
train only a new head, or train every parameter, with a learning rate for the backbone that
is smaller than the head's so that the pretrained features are adjusted rather than erased.
This script runs both on :class:`ptnotes.models.SmallCNN` with synthetic images (no
download) and compares their loss curves, with training from scratch as a reference.
"""

# %%
# Synthetic images: noisy gratings
# --------------------------------
# A class is a grating: a sine wave with a given orientation and period, drawn with a random
# phase and buried in Gaussian noise whose standard deviation is the wave's amplitude, 1. The
# network must learn orientation- and frequency-selective filters; no position or colour gives
# the class away.
import math

import matplotlib.pyplot as plt
import torch
from torch import nn

from ptnotes.data import TensorBatchDataset, batched_loader
from ptnotes.finetune import freeze, param_groups, replace_head
from ptnotes.models import SmallCNN
from ptnotes.training import train_step

torch.manual_seed(0)
generator = torch.Generator().manual_seed(0)


def gratings(n: int, classes: list[tuple[float, float]]) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` noisy 3 x 16 x 16 gratings; class ``k`` has (angle, period) ``classes[k]``."""
    labels = torch.randint(len(classes), (n,), generator=generator)
    angle, period = torch.tensor(classes).T[:, labels]
    phase = 2 * math.pi * torch.rand(n, generator=generator)
    coords = torch.arange(16.0)
    y, x = torch.meshgrid(coords, coords, indexing="ij")
    along = x * angle.cos()[:, None, None] + y * angle.sin()[:, None, None]
    wave = torch.sin(2 * math.pi * along / period[:, None, None] + phase[:, None, None])
    images = wave[:, None].expand(n, 3, 16, 16) + torch.randn(n, 3, 16, 16, generator=generator)
    return images, labels


# %%
# Pretraining, to have something to fine-tune
# -------------------------------------------
# Without downloading weights, a "pretrained" backbone comes from a first task: tell apart 8
# orientations of a grating of period 5 pixels, on 1024 images. This stands in for the
# ImageNet training of a torchvision model.
task_a = [(k * math.pi / 8, 5.0) for k in range(8)]
loss_fn = nn.CrossEntropyLoss()
pretrained = SmallCNN(num_classes=8)
optimizer = torch.optim.SGD(pretrained.parameters(), lr=0.05, momentum=0.9)
loader = batched_loader(TensorBatchDataset(*gratings(1024, task_a)), 64, shuffle=True)
for epoch in range(6):
    loader.sampler.set_epoch(epoch)
    for batch in loader:
        train_step(pretrained, batch, loss_fn, optimizer)
with torch.no_grad():
    test_x, test_y = gratings(512, task_a)
    accuracy = (pretrained(test_x).argmax(1) == test_y).float().mean().item()
print(f"task A (8 orientations) test accuracy after pretraining: {accuracy:.3f}")
with torch.no_grad():
    fresh = SmallCNN(num_classes=8)  # random weights, for comparison
    norms = [m.features(test_x).flatten(1).norm(dim=1).mean().item() for m in (pretrained, fresh)]
print(f"mean norm of the 16 features: pretrained {norms[0]:.1f}, random weights {norms[1]:.1f}")

# %%
# The new task and the three set-ups
# ----------------------------------
# Task B has 4 classes, two orientations times two periods (3 and 8 pixels, neither seen in
# pretraining), and only 256 training images. Each set-up replaces the 8-way head with a new
# 4-way :class:`torch.nn.Linear` via :func:`~ptnotes.finetune.replace_head`, and builds its
# optimizer with :func:`~ptnotes.finetune.param_groups`: the head at ``lr=0.05``, anything
# else still trainable at ``lr=0.005``. Frozen parameters are simply left out of the groups.
task_b = [(angle, period) for angle in (math.pi / 8, 5 * math.pi / 8) for period in (3.0, 8.0)]
train_b = TensorBatchDataset(*gratings(256, task_b))
test_x, test_y = gratings(512, task_b)
setups = {
    "frozen features, new head": (True, True),
    "all parameters, two lr groups": (True, False),
    "from scratch, two lr groups": (False, False),
}
curves: dict[str, list[float]] = {}
for name, (start_pretrained, frozen) in setups.items():
    torch.manual_seed(1)  # the same new head in every set-up
    model = SmallCNN(num_classes=8)
    if start_pretrained:
        model.load_state_dict(pretrained.state_dict())
    if frozen:
        freeze(model, "features.*")
    replace_head(model, "fc", nn.Linear(SmallCNN.feature_dim, len(task_b)))
    groups = param_groups(model, {"fc.*": {"lr": 0.05}}, default={"lr": 0.005})
    optimizer = torch.optim.SGD(groups, lr=0.05, momentum=0.9)
    print(f"{name}: groups (parameters, lr) = {[(len(g['params']), g['lr']) for g in groups]}")
    loader = batched_loader(train_b, 32, shuffle=True, seed=1)
    curves[name] = []
    for epoch in range(10):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            curves[name].append(train_step(model, batch, loss_fn, optimizer))
    with torch.no_grad():
        accuracy = (model(test_x).argmax(1) == test_y).float().mean().item()
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"    {trainable} trainable values, task B test accuracy {accuracy:.3f}")

# %%
# The picture
# -----------
# Training loss per step (each step is one batch of 32; 8 steps make an epoch), smoothed
# over 8 steps. Both fine-tuning recipes start from useful features and reach a near-zero
# loss within a few epochs; training from scratch, with the same 80 steps, is far behind.
# The fine-tuned curves start *higher*: pretrained features are large, so the new, random
# head is confidently wrong at first, until a few steps fix its scale.
fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
styles = ["-", "-", "--"]
for (name, losses), style in zip(curves.items(), styles, strict=True):
    windows = [losses[max(0, i - 7) : i + 1] for i in range(len(losses))]
    smoothed = [sum(window) / len(window) for window in windows]
    ax.plot(range(1, len(losses) + 1), smoothed, style, label=name)
ax.set_ylim(bottom=0)
ax.set_xlabel("training step on task B (batch of 32)")
ax.set_ylabel("cross-entropy loss (mean of the last 8 steps)")
ax.set_title("Fine-tuning SmallCNN on a new 4-class task")
ax.legend()
plt.show()

# %%
# Take-away
# ---------
# With a backbone that already computes relevant features, a new head on frozen features learns the
# task with only the head's 68 values trainable; training everything, with the backbone's learning
# rate ten times smaller, lets the features adapt too and here converges about as fast. Both beat
# starting from random weights by a wide margin. Freeze *before* building the optimizer, replace the
# head before as well, and let the parameter groups say which learning rate each part gets.
